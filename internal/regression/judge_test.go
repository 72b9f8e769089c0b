package regression

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// The field verdict's decision reads the store only: these tests decide it from an in-memory
// website's results, without DynamoDB. watch_test.go and verdict_test.go play the whole path
// (detection, the verdict recorded once, its event) against the stand-ins.

// results is a fieldReads over one website's pages, lab results and dataset records.
type results struct {
	pages []model.Page
	lab   []model.LabResult
	ux    []model.UXResult
}

func (f results) LabResults(_ context.Context, _ model.Website, page, device, from, to string) ([]model.LabResult, error) {
	return within(f.lab, func(r model.LabResult) [3]string { return [3]string{r.Page, r.Device, r.Day} }, page, device, from, to), nil
}

func (f results) UXResults(_ context.Context, _ model.Website, page, device, from, to string) ([]model.UXResult, error) {
	return within(f.ux, func(r model.UXResult) [3]string { return [3]string{r.Page, r.Device, r.Day} }, page, device, from, to), nil
}

// within are the records of a page on a device from day from to day to, as the store reads
// them; at gives a record's page, device and day.
func within[R any](all []R, at func(R) [3]string, page, device, from, to string) []R {
	var out []R
	for _, r := range all {
		if k := at(r); k[0] == page && k[1] == device && k[2] >= from && k[2] <= to {
			out = append(out, r)
		}
	}
	return out
}

func (f results) Page(_ context.Context, _ model.Website, id string) (model.Page, error) {
	for _, p := range f.pages {
		if p.ID == id {
			return p, nil
		}
	}
	return model.Page{}, fmt.Errorf("page %s: %w", id, model.ErrNotFound)
}

// noViews answers every real-user report with no page views.
type noViews struct{}

func (noViews) Report(context.Context, rum.Query) (rum.Report, error) { return rum.Report{}, nil }

var (
	judgeDay0 = time.Date(2026, 10, 1, 4, 0, 0, 0, time.UTC)
	judgeSite = model.Website{Account: "acme", ID: "w1", Domain: "example.com"}
	judgePage = model.Page{ID: "home", URL: "/"}
)

// labStep is the website's home page with a lab incident, a 40 % LCP step on desktop from
// day 15 (from judgeDay0), its daily audits until day 22 showing it.
func labStep() (results, model.Incident) {
	var f results
	f.pages = []model.Page{judgePage}
	for d := range 23 {
		lcp := 1500.0
		if d >= 15 {
			lcp = 2100
		}
		f.lab = append(f.lab, model.LabResult{Page: judgePage.ID, Device: "desktop", Day: model.Day(judgeDay0.AddDate(0, 0, d)), Metrics: map[string]float64{"lcp": lcp}})
	}
	r := model.Regression{Kind: model.KindRegression, Source: SourceLab, Page: judgePage.ID, Device: "desktop", Metric: "lcp",
		LastGood: model.Day(judgeDay0.AddDate(0, 0, 14)), FirstBad: model.Day(judgeDay0.AddDate(0, 0, 15)),
		Before: model.Level{Median: 1500}, After: model.Level{Median: 2100}, Percent: 40, Status: model.RegressionOpen}
	r.ID = model.RegressionID(judgeSite, "lab/lcp", r.FirstBad)
	r.Incident = model.IncidentID(judgeSite, r.Subject(), r.Kind, r.FirstBad)
	return f, Incidents(judgeSite, []model.Regression{r})[0]
}

// decide decides in's verdict on day d (from judgeDay0), as the daily run of that day does.
func decide(t *testing.T, f results, in model.Incident, d int) (model.Verdict, bool) {
	t.Helper()
	now := judgeDay0.AddDate(0, 0, d).Add(3 * time.Hour)
	j := &judge{reads: f, site: judgeSite, all: in.Members, thresholds: Thresholds{}, today: now.Truncate(24 * time.Hour),
		now: func() time.Time { return now }, rum: &rumCache{reports: noViews{}, site: judgeSite, days: map[string]map[string]rum.Row{}}}
	v, ok, err := j.verdict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return v, ok
}

// TestVerdictNoFieldData: no real-user views and no dataset records: no field data once the
// 7 days are over.
func TestVerdictNoFieldData(t *testing.T) {
	f, in := labStep()
	if v, ok := decide(t, f, in, 21); ok {
		t.Fatalf("decided after 6 days: %+v", v)
	}
	v, ok := decide(t, f, in, 22)
	if !ok || v.Incident != in.ID || v.Verdict != model.VerdictNoFieldData || len(v.Checks) != 0 || !strings.HasPrefix(v.Summary, "No field data") {
		t.Fatalf("verdict %+v (%v)", v, ok)
	}
}

// TestVerdictConfirmedByDataset: no real users, but the dataset's 28-day p75 ramps up from the
// lab's first bad day: no verdict while the window is turning over and the move is within the
// least change (10 %), confirmed once it is beyond it.
func TestVerdictConfirmedByDataset(t *testing.T) {
	f, in := labStep()
	for d := 8; d <= 30; d++ {
		lcp := 2000.0
		if d >= 15 {
			lcp += 600 * float64(d-14) / 28
		}
		f.ux = append(f.ux, model.UXResult{Page: judgePage.ID, Device: "desktop", Day: model.Day(judgeDay0.AddDate(0, 0, d)), Collected: judgeDay0.AddDate(0, 0, d),
			Vitals: map[string]model.Vital{"lcp": {P75: lcp, Good: 70, NeedsImprovement: 20, Poor: 10}}})
	}
	if v, ok := decide(t, f, in, 20); ok {
		t.Fatalf("decided on day 20: %+v", v)
	}
	if v, ok := decide(t, f, in, 23); ok {
		t.Fatalf("decided on day 23, the window turning over and the move within 10 %%: %+v", v)
	}
	v, ok := decide(t, f, in, 27)
	if !ok || v.Verdict != model.VerdictConfirmed || len(v.Checks) != 1 || v.Checks[0].Source != SourceUX || v.Checks[0].Device != "desktop" ||
		v.Checks[0].Before != 2000 || v.Checks[0].After <= 2200 || v.Checks[0].Noise != 200 {
		t.Fatalf("verdict %+v (%v)", v, ok)
	}
	if !strings.HasPrefix(v.Summary, "Confirmed in the field: the user-experience dataset's p75 (desktop) LCP 2000 ms → ") {
		t.Errorf("summary %q", v.Summary)
	}
}
