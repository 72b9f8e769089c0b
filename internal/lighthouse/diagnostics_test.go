package lighthouse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

// diagnoseJSON decodes a report and diagnoses it with the run's files in.
func diagnoseJSON(t testing.TB, raw []byte, in DiagnosisInput) (*Diagnosis, error) {
	t.Helper()
	r, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return r.Diagnose(in)
}

// A run that failed has nothing to explain: Diagnose says why instead of returning empty
// diagnostics.
func TestDiagnoseRuntimeError(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "lhr-runtime-error.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := diagnoseJSON(t, raw, DiagnosisInput{}); err == nil {
		t.Fatal("Diagnose of a runtime error succeeded")
	}
	if _, err := diagnoseJSON(t, []byte(`{"lighthouseVersion":"13.5.0","audits":{}}`), DiagnosisInput{Phases: []byte(`{`)}); err == nil {
		t.Fatal("Diagnose with broken phases succeeded")
	}
}

// The recorded desktop report (its details trimmed, without phases or shift times) still
// yields its LCP element and phases and its layout shift with its cause.
func TestDiagnoseRecordedReport(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "lhr-desktop.json"))
	if err != nil {
		t.Fatal(err)
	}
	dg, err := diagnoseJSON(t, raw, DiagnosisInput{})
	if err != nil {
		t.Fatal(err)
	}
	d := dg.Diagnostics
	if len(d.Scripts) != 1 || d.Scripts[0].URL != "Unattributable" || d.Scripts[0].MainThread != 75.8 {
		t.Errorf("scripts %+v, want bootup-time's one", d.Scripts)
	}
	if d.LCP == nil || d.LCP.Selector != "body > main > img.hero" || d.LCP.ImageURL != "http://127.0.0.1:8765/hero.jpg" ||
		d.LCP.Phases.LoadDelay == nil || d.LCP.Phases.TTFB != 19.5 {
		t.Errorf("LCP %+v", d.LCP)
	}
	if len(d.Shifts) != 1 || d.Shifts[0].Time != -1 || len(d.Shifts[0].Causes) != 1 || d.Shifts[0].Causes[0].Kind != model.ShiftUnsizedImage ||
		d.Shifts[0].Causes[0].URL != "http://127.0.0.1:8765/hero.jpg" || d.Marks.LargestShift != nil {
		t.Errorf("shifts %+v (no times without the trace's)", d.Shifts)
	}
	if len(d.MainThread) == 0 || d.MainThread[0].Category != "other" {
		t.Errorf("main thread %+v", d.MainThread)
	}
}

func TestShiftCauseKind(t *testing.T) {
	for cause, want := range map[string]string{
		"Unsized image element": model.ShiftUnsizedImage, "Media element lacking an explicit size": model.ShiftUnsizedImage,
		"Web font": model.ShiftWebFont, "Web font loaded": model.ShiftWebFont, "Injected iframe": model.ShiftInjectedContent,
		"Non-composited animation": model.ShiftAnimation, "Something new": model.ShiftOther,
	} {
		if got := shiftCauseKind(cause); got != want {
			t.Errorf("shiftCauseKind(%q) = %q, want %q", cause, got, want)
		}
	}
}
