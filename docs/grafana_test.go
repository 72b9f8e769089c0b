package docs

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/api"
)

// grafanaDashboard is the dashboard over GET /{websiteID}/metrics that docs/prometheus.md
// tells how to import.
const grafanaDashboard = "grafana-dashboard.json"

var (
	metricName = regexp.MustCompile(`\bopenvitals_[a-z0-9_]+`)
	// selector is a metric name with its label matchers: openvitals_x{a="..",b=~".."}.
	selector = regexp.MustCompile(`(openvitals_[a-z0-9_]+)\{([^}]*)\}`)
	matcher  = regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"`)
)

// TestGrafanaDashboard: the dashboard is valid JSON of a Grafana dashboard, and every query
// (panel targets and template variables) names metrics the endpoint exposes, with labels they
// have (TestWebsiteMetrics checks that a scrape exposes every declared family).
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(grafanaDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&dash); err != nil {
		t.Fatalf("%s: %v", grafanaDashboard, err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("%s: not a dashboard (title %q, uid %q, %d panels)", grafanaDashboard, dash.Title, dash.UID, len(dash.Panels))
	}
	families := api.MetricFamilies()
	var queries []string
	for _, v := range dash.Templating.List {
		if v.Definition != "" {
			queries = append(queries, v.Definition)
		}
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries = append(queries, tg.Expr)
		}
	}
	used := map[string]bool{}
	for _, q := range queries {
		names := metricName.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("query %q names no openvitals metric", q)
		}
		for _, n := range names {
			used[n] = true
			if _, ok := families[n]; !ok {
				t.Errorf("query %q names %s, which GET /{websiteID}/metrics does not expose", q, n)
			}
		}
		for _, sel := range selector.FindAllStringSubmatch(q, -1) {
			for _, m := range matcher.FindAllStringSubmatch(sel[2], -1) {
				if labels, ok := families[sel[1]]; ok && !slices.Contains(labels, m[1]) {
					t.Errorf("query %q matches label %s, which %s does not have", q, m[1], sel[1])
				}
			}
		}
	}
	if len(used) < 5 {
		t.Errorf("the dashboard uses %d of the metrics", len(used))
	}
}
