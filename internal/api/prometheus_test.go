package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// scrape reads GET /{w}/metrics with an Accept header and decodes it with the Prometheus
// library's own parser for the format the response names.
func scrape(t *testing.T, e *testEnv, siteID, accept string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	req := newRequest("GET", "/"+siteID+"/metrics", "Bearer "+apitest.ViewerKey)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res := e.send(req).Want(t, 200)
	h := http.Header{"Content-Type": {res.Header.Get("Content-Type")}}
	dec := expfmt.NewDecoder(bytes.NewReader(res.Body), expfmt.ResponseFormat(h))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse %s (%s): %v\n%s", res.Header.Get("Content-Type"), accept, err, res.Body)
		}
		out[mf.GetName()] = &mf
	}
	return out, res.Header.Get("Content-Type")
}

// sample finds the value of a family's series with the given labels (among others).
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	mf, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || (lp.GetName() == k && lp.GetValue() == v)
			}
			if !found {
				continue next
			}
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// TestWebsiteMetrics: the lab fixture, a user-experience record, real users' views of a
// monitored and of an unmonitored path, and an open incident are exposed as gauges a
// Prometheus parser reads, in the text format and in OpenMetrics; no label names the
// unmonitored path; another account's key finds nothing.
func TestWebsiteMetrics(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	ctx := context.Background()
	w := f.stored
	if err := e.store.PutUXResult(ctx, w, storedPage(t, e, w, f.home.ID), model.UXResult{Device: "mobile", Day: day(f.today, 0),
		Vitals: map[string]model.Vital{"lcp": {P75: 2100, Good: 80, NeedsImprovement: 15, Poor: 5}}, Collected: f.today}); err != nil {
		t.Fatal(err)
	}
	beacon := func(url string, lcp int) {
		e.beacon(fmt.Sprintf(`{"w":%q,"u":%q,"m":{"lcp":%d,"cls":0.05}}`, f.site.ID, url, lcp), "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	}
	for _, lcp := range []int{1000, 2000, 3000, 4000} {
		beacon("https://example.com/", lcp)
	}
	beacon("https://example.com/secret-unmonitored-path", 500)
	e.fold(5)
	r := model.Regression{Kind: model.KindRegression, Source: "lab", Page: f.home.ID, Device: "mobile", Metric: "lcp",
		LastGood: day(f.today, 2), FirstBad: day(f.today, 1), Before: model.Level{Median: 2000}, After: model.Level{Median: 4000},
		Delta: 2000, Percent: 100, P: 0.0001, Status: model.RegressionOpen, Detected: time.Now()}
	r.ID = model.RegressionID(w, "lab"+f.home.ID+"mobilelcp", r.FirstBad)
	if _, err := e.store.PutRegression(ctx, w, r); err != nil {
		t.Fatal(err)
	}

	for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
		fams, ctype := scrape(t, e, f.site.ID, accept)
		wantType := map[string]string{"": "text/plain; version=0.0.4", "application/openmetrics-text; version=1.0.0": "application/openmetrics-text"}[accept]
		if !strings.HasPrefix(ctype, wantType) {
			t.Errorf("Accept %q: Content-Type %q, want %s", accept, ctype, wantType)
		}
		home := func(more map[string]string) map[string]string {
			out := map[string]string{"website": f.site.ID, "page_id": f.home.ID, "page": "/"}
			for k, v := range more {
				out[k] = v
			}
			return out
		}
		checks := []struct {
			name   string
			labels map[string]string
			want   float64
			within float64
		}{
			{"openvitals_lab_metric", home(map[string]string{"device": "desktop", "metric": "lcp"}), 2400, 0},
			{"openvitals_lab_metric", home(map[string]string{"device": "desktop", "metric": "performance_score"}), 93, 0},
			{"openvitals_lab_metric", home(map[string]string{"device": "mobile", "metric": "cls"}), 0.1235, 0},
			{"openvitals_ux_p75", home(map[string]string{"device": "mobile", "metric": "lcp"}), 2100, 0},
			{"openvitals_budgets_exceeded", home(map[string]string{"device": "mobile"}), 2, 0},
			{"openvitals_budgets_at_risk", home(map[string]string{"device": "desktop"}), 2, 0},
			{"openvitals_budget_threshold", map[string]string{"budget_id": f.lcp.ID, "metric": "lcp", "operator": "lt", "device": "all"}, 2500, 0},
			{"openvitals_rum_page_views", home(nil), 4, 0},
			{"openvitals_rum_p75", home(map[string]string{"metric": "lcp"}), 3000, 30}, // DDSketch: within 1 %
			{"openvitals_incidents_open", home(nil), 1, 0},
			{"openvitals_incidents_open", map[string]string{"page_id": f.pricing.ID}, 0, 0},
			{"openvitals_website_incidents_open", nil, 1, 0},
			{"openvitals_pages_monitored", nil, 2, 0},
		}
		for _, c := range checks {
			got, ok := sample(fams, c.name, c.labels)
			if !ok || math.Abs(got-c.want) > c.within {
				t.Errorf("Accept %q: %s%v = %v (found %v), want %v", accept, c.name, c.labels, got, ok, c.want)
			}
		}
		if _, ok := sample(fams, "openvitals_lab_metric", map[string]string{"page_id": f.pricing.ID, "device": "mobile"}); ok {
			t.Errorf("Accept %q: a lab value of pricing on mobile, which has no result", accept)
		}
		declared := api.MetricFamilies()
		for name, mf := range fams {
			labels, ok := declared[name]
			if !ok {
				t.Errorf("family %s is not declared", name)
			}
			for _, m := range mf.GetMetric() {
				for _, lp := range m.GetLabel() {
					if !slices.Contains(labels, lp.GetName()) || strings.Contains(lp.GetValue(), "secret") {
						t.Errorf("Accept %q: %s has label %s=%q", accept, name, lp.GetName(), lp.GetValue())
					}
				}
			}
		}
		for name := range declared {
			if _, ok := fams[name]; !ok {
				t.Errorf("Accept %q: family %s missing", accept, name)
			}
		}
	}

	e.send(newRequest("GET", "/"+f.site.ID+"/metrics", "")).Want(t, 401)
	e.send(newRequest("GET", "/"+f.site.ID+"/metrics", "Bearer "+apitest.OtherKey)).Want(t, 404)
}
