package docs

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/metrics"
)

// The metric names' table in api.md lies between these markers; TestMetricNames writes it
// from metrics.Names, the declaration the dashboard's names come from too.
const (
	metricNamesStart = "<!-- metric names: generated from internal/metrics/names.go; go test ./docs/ -run TestMetricNames -update -->\n"
	metricNamesEnd   = "<!-- end of metric names -->\n"
)

func metricNamesTable() string {
	var b strings.Builder
	b.WriteString("| field | name | short name | unit | source | good up to | poor beyond |\n|---|---|---|---|---|---|---|\n")
	for _, n := range metrics.Names {
		unit := n.Unit
		if unit == "" {
			unit = "none"
		}
		good, poor := "", ""
		if n.Good != 0 || n.Poor != 0 {
			good, poor = fmt.Sprint(n.Good), fmt.Sprint(n.Poor)
			if n.Higher {
				good, poor = "at least "+good, "below "+poor
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", n.Field, n.Title, n.Label, unit, n.Source, good, poor)
	}
	b.WriteString("\nThe phases of the Largest Contentful Paint (`lcp.phases` of diagnostics and comparisons, `lcp_phase` causes), which add up to it:\n\n")
	b.WriteString("| phase | name | what it spans |\n|---|---|---|\n")
	for _, n := range metrics.Phases {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n.Field, n.Label, n.Title)
	}
	return b.String()
}

// TestMetricNames: api.md's table of metric names is the one metrics.Names makes.
func TestMetricNames(t *testing.T) {
	const file = "api.md"
	doc := readFile(t, "docs/"+file)
	i := strings.Index(doc, metricNamesStart)
	j := strings.Index(doc, metricNamesEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/%s has no metric names' table between its markers", file)
	}
	want := doc[:i+len(metricNamesStart)] + metricNamesTable() + doc[j:]
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("docs/%s's metric names are stale: run go test ./docs/ -run TestMetricNames -update", file)
	}
}
