package regression_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// verdictEnv is a page with a lab incident (a 40 % LCP step on desktop from day 15) and the
// real-user pipeline to fold its views through.
type verdictEnv struct {
	*watchEnv
	rums *rumstore.Store
	agg  *rumworker.Aggregator
	rng  *rand.Rand
}

func newVerdictEnv(t *testing.T, labStep bool) *verdictEnv {
	e := &verdictEnv{watchEnv: newWatchEnv(t), rng: rand.New(rand.NewPCG(3, 4))}
	e.rums = awstest.RUM(t, e.store)
	e.agg = rumworker.NewAggregatorWith(e.store, e.rums, quota.NewKeeper(e.store, time.Now), awstest.Log(t), geo.Country)
	for d := range 23 {
		lcp := 1500.0
		if labStep && d >= 15 {
			lcp = 2100
		}
		e.lab(e.rng, e.pages[0], d, lcp)
	}
	return e
}

// views folds 80 page views of the home page on day d (from day0), their LCP around lcp.
func (e *verdictEnv) views(d int, lcp float64) {
	e.t.Helper()
	at := day0.AddDate(0, 0, d)
	day := model.Day(at)
	var views []rum.View
	for i := range 80 {
		views = append(views, rum.View{ID: rum.NewViewID(at.Add(time.Duration(i) * time.Second)), Day: day, Page: "/", Country: "DE",
			Metrics: map[string]float64{"lcp": lcp * (1 + 0.1*e.rng.NormFloat64()), "cls": 0.01}})
	}
	body, err := json.Marshal(rum.Batch{ID: "b" + day, Account: e.site.Account, Website: e.site.ID, Views: views})
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.agg.HandleSQS(context.Background(), awstest.SQSEvent(string(body)))
	if err != nil || len(resp.BatchItemFailures) > 0 {
		e.t.Fatalf("fold %s: %v %v", day, err, resp.BatchItemFailures)
	}
}

// verdicts decides the website's verdicts on day d and returns the incidents' verdicts and
// the incident.verdict events recorded.
func (e *verdictEnv) verdicts(d int) (map[string]model.Verdict, []model.Event) {
	e.t.Helper()
	e.today = day0.AddDate(0, 0, d).Add(3 * time.Hour)
	if err := e.watcher.Verdicts(context.Background(), e.site, rum.NewReader(e.rums)); err != nil {
		e.t.Fatal(err)
	}
	vs, err := e.store.Verdicts(context.Background(), e.site)
	if err != nil {
		e.t.Fatal(err)
	}
	var evs []model.Event
	for _, ev := range e.events() {
		if ev.Type == event.IncidentVerdict {
			evs = append(evs, ev)
		}
	}
	return vs, evs
}

// only is the one verdict of vs.
func only(t *testing.T, vs map[string]model.Verdict) model.Verdict {
	t.Helper()
	if len(vs) != 1 {
		t.Fatalf("verdicts %+v, want one", vs)
	}
	for _, v := range vs {
		return v
	}
	return model.Verdict{}
}

// TestVerdictConfirmed: real users' LCP rose with the lab's from day 15: confirmed in the field
// as soon as three days after show it, with the numbers; one event, which a second evaluation
// (a redelivered message, the next day) does not record again.
func TestVerdictConfirmed(t *testing.T) {
	e := newVerdictEnv(t, true)
	for d := 8; d <= 17; d++ {
		lcp := 1800.0
		if d >= 15 {
			lcp = 2600
		}
		e.views(d, lcp)
	}
	vs, evs := e.verdicts(18)
	v := only(t, vs)
	regs := e.regressions(model.RegressionFilter{Source: regression.SourceLab})
	if len(regs) == 0 || v.Incident != regs[0].Incident || v.Verdict != model.VerdictConfirmed || len(v.Checks) != 1 {
		t.Fatalf("verdict %+v, want confirmed for the lab incident %+v", v, regs)
	}
	c := v.Checks[0]
	if c.Source != regression.SourceRUM || c.Metric != "lcp" || !c.Moved || c.DaysBefore != 7 || c.DaysAfter != 3 ||
		c.Before < 1700 || c.Before > 2100 || c.After < 2500 || c.After > 3100 || c.Noise < 180 {
		t.Errorf("check %+v", c)
	}
	if !strings.HasPrefix(v.Summary, "Confirmed in the field: real users' p75 LCP ") {
		t.Errorf("summary %q", v.Summary)
	}
	if len(evs) != 1 || evs[0].Incident != v.Incident || evs[0].After != model.VerdictConfirmed || evs[0].Summary != v.Summary {
		t.Fatalf("events %+v, want one incident.verdict", evs)
	}
	e.views(18, 2600)
	if _, evs := e.verdicts(18); len(evs) != 1 {
		t.Errorf("%d verdict events after the same day again", len(evs))
	}
	if vs, evs := e.verdicts(19); len(evs) != 1 || only(t, vs).Decided != v.Decided {
		t.Errorf("the next day: %d events, verdict %+v; want the one decided", len(evs), vs)
	}
}

// TestVerdictNotSeen: real users' LCP stayed where it was: nothing said before the 7 days
// are over, then not seen in the field, with the levels compared.
func TestVerdictNotSeen(t *testing.T) {
	e := newVerdictEnv(t, true)
	for d := 8; d <= 21; d++ {
		e.views(d, 1800)
	}
	if vs, _ := e.verdicts(20); len(vs) != 0 {
		t.Fatalf("decided after 5 days: %+v", vs)
	}
	vs, evs := e.verdicts(22)
	v := only(t, vs)
	if v.Verdict != model.VerdictNotSeen || len(v.Checks) != 1 || v.Checks[0].Moved || !v.Checks[0].Enough || v.Checks[0].DaysAfter != 7 {
		t.Fatalf("verdict %+v, want not seen with the real-user check", v)
	}
	if !strings.HasPrefix(v.Summary, "Not seen in the field: real users' p75 LCP ") || len(evs) != 1 {
		t.Errorf("summary %q, events %+v", v.Summary, evs)
	}
}

// TestVerdictNotReproduced: a field change (the dataset's LCP on desktop from day 15) with no
// lab change in the 8 daily audits from its first bad day: not reproduced in the lab.
func TestVerdictNotReproduced(t *testing.T) {
	e := newVerdictEnv(t, false)
	r := model.Regression{ID: "rg_field", Kind: model.KindRegression, Source: regression.SourceUX, Page: e.pages[0].ID, Device: "desktop", Metric: "lcp",
		LastGood: model.Day(day0.AddDate(0, 0, 14)), FirstBad: model.Day(day0.AddDate(0, 0, 15)), Before: model.Level{Median: 2000}, After: model.Level{Median: 2600},
		Percent: 30, Status: model.RegressionOpen, Detected: day0.AddDate(0, 0, 18)}
	r.Incident = model.IncidentID(e.site, r.Subject(), r.Kind, r.FirstBad)
	if _, err := e.store.PutRegression(context.Background(), e.site, r); err != nil {
		t.Fatal(err)
	}
	v := only(t, first(e.verdicts(22)))
	if v.Incident != r.Incident || v.Verdict != model.VerdictNotReproduced || len(v.Checks) != 1 || v.Checks[0].Source != regression.SourceLab ||
		v.Checks[0].DaysAfter != 8 || !strings.HasPrefix(v.Summary, "Not reproduced in the lab: 8 daily audits on desktop") {
		t.Fatalf("verdict %+v", v)
	}
}

func first[A, B any](a A, _ B) A { return a }
