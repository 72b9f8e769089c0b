package auditworker

import (
	"testing"

	"github.com/openvitals/openvitals/internal/lighthouse"
)

// TestMedianRun: Lighthouse's median when some run has FCP and time to interactive; the run of
// the median FCP when none has time to interactive (a page busy to the end of the wait); an
// error, never a panic, when no run has an FCP.
func TestMedianRun(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	run := func(fcp, tti *float64) lighthouseOutcome {
		return lighthouseOutcome{report: &lighthouse.Report{FCP: fcp, TTI: tti}}
	}
	got, _, err := medianRun([]lighthouseOutcome{run(f(900), nil), run(f(1000), f(3000)), run(f(800), nil)})
	if err != nil || *got.report.FCP != 1000 {
		t.Errorf("with one complete run: %v, %v", got.report, err)
	}
	got, _, err = medianRun([]lighthouseOutcome{run(f(900), nil), run(f(1200), nil), run(f(800), nil)})
	if err != nil || *got.report.FCP != 900 {
		t.Errorf("without time to interactive: FCP %v, %v; want the median FCP's run (900)", got.report.FCP, err)
	}
	if _, _, err = medianRun([]lighthouseOutcome{run(nil, nil)}); err == nil {
		t.Error("no FCP: no error")
	}
}
