package auditworker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
)

// BenchmarkRunSpread measures how much repeated Lighthouse runs of one page vary, the noise the
// regression detector must tell from change (internal/regression's evaluation is shaped on it):
// 10 runs each of the fixture page served steadily and through a proxy that delays every
// response by 0 to 150 ms at random (network variance), on desktop and mobile. It reports the
// coefficient of variation (%) of each watched lab metric; the runs are logged. With -short,
// one run steadily on desktop and one through the proxy on mobile.
func BenchmarkRunSpread(b *testing.B) {
	runs := 10
	e := newBenchEnv(b)
	origin, err := url.Parse(e.target)
	if err != nil {
		b.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(origin)
	jitter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
		proxy.ServeHTTP(w, r)
	}))
	b.Cleanup(jitter.Close)
	type spreadCase struct{ name, target, device string }
	var cases []spreadCase
	for _, c := range []spreadCase{{name: "steady", target: e.target}, {name: "network-variance", target: jitter.URL + "/"}} {
		for _, device := range []string{lighthouse.DeviceDesktop, lighthouse.DeviceMobile} {
			c.device = device
			cases = append(cases, c)
		}
	}
	if testing.Short() {
		runs, cases = 1, []spreadCase{cases[0], cases[3]}
	}
	for _, c := range cases {
		b.Run(c.name+"/"+c.device, func(b *testing.B) {
			values := map[string][]float64{}
			for b.Loop() {
				for i := range runs {
					rep := e.lighthouseRun(b, c.target, c.device, filepath.Join(e.temp, fmt.Sprintf("spread-%d.json", i)))
					for name, v := range map[string]*float64{"lcp": rep.LCP, "fcp": rep.FCP, "speed_index": rep.SpeedIndex,
						"tbt": rep.TBT, "ttfb": rep.TTFB, "cls": rep.CLS, "performance_score": rep.Performance, "kb_total": rep.KBTotal} {
						if v != nil {
							values[name] = append(values[name], *v)
						}
					}
					b.Logf("run %d: score %v lcp %.0f fcp %.0f si %.0f tbt %.0f ttfb %.0f cls %.4f kb %.1f", i+1,
						deref(rep.Performance), deref(rep.LCP), deref(rep.FCP), deref(rep.SpeedIndex), deref(rep.TBT),
						deref(rep.TTFB), deref(rep.CLS), deref(rep.KBTotal))
				}
			}
			for name, v := range values {
				b.ReportMetric(cv(v), name+"-cv-%")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// lighthouseRun is one Lighthouse run of target on device in a fresh browser session.
func (e *benchEnv) lighthouseRun(b testing.TB, target, device, out string) *lighthouse.Report {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sess, err := browser.Launch(ctx, e.browser)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	if _, err := e.runner.Audit(ctx, lighthouse.AuditRequest{URL: target, Port: sess.Port(), Device: device, ReportPath: out}); err != nil {
		b.Fatal(err)
	}
	_, res := decodeReport(b, out)
	rep := res.Report()
	if rep.RuntimeError != nil {
		b.Fatal(rep.RuntimeError)
	}
	return rep
}
