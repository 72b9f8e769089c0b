package lighthouse

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkMedianRunRead is what the worker spends on the median run's report after the load:
// "decoded once" reads it from the one decoding the run's metrics came from (today's worker);
// "decoded twice" decodes it again for the diagnostics, as the worker did before
// internal/artifact owned the stored output. The recorded report is trimmed (130 KB); a real
// one is megabytes, and decoding scales with its size.
func BenchmarkMedianRunRead(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "lhr-desktop.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		again bool // the report decoded again for the diagnostics
	}{{"decoded_once", false}, {"decoded_twice", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				r, err := Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				_ = r.Report()
				if c.again {
					if r, err = Decode(raw); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := r.Diagnose(DiagnosisInput{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
