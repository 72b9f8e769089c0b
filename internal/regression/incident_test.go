package regression_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// TestIncidents: regressions of one page (or test) and kind whose first bad days lie within a
// day of the incident's first are one incident; those stored before incidents (none named)
// join by the same rule, those that name theirs stay in it.
func TestIncidents(t *testing.T) {
	site := model.Website{Account: "acme", ID: "w1"}
	reg := func(id, page, test, kind, device, metric, firstBad, incident string) model.Regression {
		return model.Regression{ID: id, Kind: kind, Source: "lab", Page: page, Test: test, Device: device, Metric: metric,
			FirstBad: firstBad, Status: model.RegressionOpen, Incident: incident}
	}
	const r, i = model.KindRegression, model.KindImprovement
	for _, tc := range []struct {
		name string
		regs []model.Regression
		want [][]string // each incident's members (by day, metric, device), incidents by their first member's ID
	}{
		{"one page's metrics and devices, the same and the next day", []model.Regression{
			reg("a", "p1", "", r, "mobile", "lcp", "20261110", ""), reg("b", "p1", "", r, "desktop", "lcp", "20261110", ""),
			reg("c", "p1", "", r, "mobile", "tbt", "20261111", ""),
		}, [][]string{{"b", "a", "c"}}},
		{"two days later is another incident", []model.Regression{
			reg("a", "p1", "", r, "mobile", "lcp", "20261110", ""), reg("b", "p1", "", r, "mobile", "tbt", "20261112", ""),
		}, [][]string{{"a"}, {"b"}}},
		{"another page, a test, an improvement are apart", []model.Regression{
			reg("a", "p1", "", r, "mobile", "lcp", "20261110", ""), reg("b", "p2", "", r, "mobile", "lcp", "20261110", ""),
			reg("c", "", "t1", r, "mobile", "duration", "20261110", ""), reg("d", "p1", "", i, "mobile", "cls", "20261110", ""),
		}, [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
		{"a named incident keeps its members; an unnamed one joins it", []model.Regression{
			reg("a", "p1", "", r, "mobile", "lcp", "20261110", "in_x"), reg("b", "p1", "", r, "mobile", "cls", "20261111", ""),
			reg("c", "p1", "", r, "desktop", "lcp", "20261110", "in_x"), reg("d", "p1", "", r, "desktop", "cls", "20261112", ""),
		}, [][]string{{"c", "a", "b"}, {"d"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := regression.Incidents(site, tc.regs)
			slices.SortFunc(got, func(a, b model.Incident) int { return strings.Compare(a.Members[0].ID, b.Members[0].ID) })
			if len(got) != len(tc.want) {
				t.Fatalf("%d incidents %+v, want %v", len(got), got, tc.want)
			}
			ids := map[string]bool{}
			for k, in := range got {
				var members []string
				for _, m := range in.Members {
					members = append(members, m.ID)
				}
				if len(members) != len(tc.want[k]) {
					t.Fatalf("incident %d: %v, want %v", k, members, tc.want[k])
				}
				for j := range members {
					if members[j] != tc.want[k][j] {
						t.Fatalf("incident %d: %v, want %v", k, members, tc.want[k])
					}
				}
				if ids[in.ID] {
					t.Fatalf("incident ID %s twice", in.ID)
				}
				ids[in.ID] = true
			}
		})
	}
	// An unnamed regression's incident is the one the watcher names for it.
	a := reg("a", "p1", "", r, "mobile", "lcp", "20261110", "")
	if got := regression.Incidents(site, []model.Regression{a})[0].ID; got != model.IncidentID(site, "page:p1", r, "20261110") {
		t.Fatalf("incident %s", got)
	}
}
