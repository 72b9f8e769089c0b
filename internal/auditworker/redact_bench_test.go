package auditworker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/redact"
)

// BenchmarkRedaction measures what each Lighthouse run of an audit now spends on redaction:
// the rule of a profile with a header, a cookie, basic authentication and two typed values,
// over the report and the DevTools log of a real run (the fixture page on desktop, in
// Chromium). Results are in BENCHMARKS.md ("Redaction"):
//
//	go test -run '^$' -bench Redaction -benchtime 20x ./internal/auditworker/
func BenchmarkRedaction(b *testing.B) {
	e := newBenchEnv(b)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "run.json")
	sess, err := browser.Launch(ctx, e.browser)
	if err != nil {
		b.Fatal(err)
	}
	_, err = e.runner.Audit(ctx, lighthouse.AuditRequest{URL: e.target, Port: sess.Port(), Device: "desktop", ReportPath: path})
	if cerr := sess.Close(); cerr != nil {
		b.Log(cerr)
	}
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	size := 0
	for _, f := range []string{path, lighthouse.DevtoolsLogPath(path)} {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, raw)
		size += len(raw)
	}
	rule := redact.New([]string{"X-Token"}, secretHeader, secretCookie, secretBasic, secretPassword, secretPlan, loginSession)
	b.SetBytes(int64(size))
	start := time.Now()
	for b.Loop() {
		for _, raw := range files {
			if _, err := rule.JSON(raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(size)/1024, "KiB/run")
	b.ReportMetric(0, "ns/op") // ms/run is the figure
}
