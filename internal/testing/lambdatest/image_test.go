package lambdatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/lambdatest"
)

// The browser image test (scripts/image-test.sh, `make image-test`): the script builds the
// image, unpacks its file system and runs this test with these variables; without them the
// test is skipped.
const (
	// envImageRoot is the image's root file system, unpacked.
	envImageRoot = "OPENVITALS_IMAGE_ROOTFS"
	// envImageEnv is the image's environment (its ENV lines), one KEY=value a line.
	envImageEnv = "OPENVITALS_IMAGE_ENV"
	// envImageUser is the user:group the function runs as in it (Lambda's is unprivileged).
	envImageUser = "OPENVITALS_IMAGE_USER"
)

// fixturePage is the page the image's browser audits.
const fixturePage = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>openvitals image test</title></head>
<body><h1>An audited page</h1><p>Served on the host for the browser image's Chromium and Lighthouse.</p></body></html>`

// TestBrowserImage runs the audit worker's entry point from the browser image, as Lambda does:
// its own process, in the image's file system (chroot) as an unprivileged user, with only the
// image's environment and the function's, under the fake Runtime API, and has it audit a page
// with the image's Chromium, Node and Lighthouse.
func TestBrowserImage(t *testing.T) {
	root := os.Getenv(envImageRoot)
	if root == "" {
		t.Skip("the browser image test: scripts/image-test.sh (make image-test)")
	}
	e, _, urls := newEnv(t)
	ctx := context.Background()

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, fixturePage)
	}))
	t.Cleanup(site.Close)
	pages := []model.Page{{URL: "/", Alias: "Home"}}
	web, _ := awstest.Website(t, e.st, model.Website{Account: "acme", Domain: strings.TrimPrefix(site.URL, "http://"), DisplayName: "Fixture"}, pages)

	// The function's environment as the stack sets it, less the paths of the host's
	// browser layer: the image's own ENV gives those.
	cfg := e.config
	cfg.Env = nil
	for _, kv := range e.config.Env {
		if !strings.HasPrefix(kv, "OPENVITALS_NODE=") && !strings.HasPrefix(kv, "OPENVITALS_LIGHTHOUSE_RUNNER=") && !strings.HasPrefix(kv, "OPENVITALS_CHROMIUM_BIN=") {
			cfg.Env = append(cfg.Env, kv)
		}
	}
	for _, kv := range strings.Split(os.Getenv(envImageEnv), "\n") {
		if kv = strings.TrimSpace(kv); kv != "" {
			cfg.Env = append(cfg.Env, kv)
		}
	}
	cfg.Env = append(cfg.Env,
		// The fixture is on the host, over HTTP; one Lighthouse run is enough here.
		"OPENVITALS_ALLOW_PRIVATE_TARGETS=true", "OPENVITALS_TARGET_SCHEME=http", "OPENVITALS_AUDIT_RUNS=1")

	// The entry point, started in the image: chroot keeps the environment Start gives it.
	user := os.Getenv(envImageUser)
	if user == "" {
		user = "65534:65534"
	}
	wrapper := filepath.Join(t.TempDir(), "bootstrap")
	script := fmt.Sprintf("#!/bin/sh\ncd /\nexec chroot --userspec=%s %s /opt/openvitals/audit-worker\n", user, root)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	fn := lambdatest.Start(t, wrapper, lambdatest.New(t), cfg)

	body, _ := json.Marshal(audit.Job{Account: "acme", Website: web.ID, Page: pages[0].ID, Device: "mobile", Queued: time.Now().UTC()})
	ev := sqsEvent(urls["audit"], false, string(body))
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a guard against a hung audit only
	defer cancel()
	out, err := fn.Invoke(ctx, mustJSON(t, ev))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if f := failures(t, out); len(f) != 0 {
		le, _ := e.st.LastLabError(ctx, web, pages[0].ID, "mobile")
		t.Fatalf("audit failed (%v): %+v\n%s", f, le, fn.Output())
	}
	day := time.Now().UTC().Format("20060102")
	results, err := e.st.LabResults(ctx, web, pages[0].ID, "mobile", day, day)
	if err != nil || len(results) != 1 {
		t.Fatalf("lab results %+v (%v), want the audit's", results, err)
	}
	m := results[0].Metrics
	if m["performance_score"] <= 0 || m["fcp"] <= 0 || m["kb_total"] <= 0 {
		t.Errorf("lab result %v: want a performance score, FCP and the page's weight", m)
	}
	t.Logf("the image audited %s: performance %v, FCP %v ms, %v kB", site.URL, m["performance_score"], m["fcp"], m["kb_total"])
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
