package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func serve(t *testing.T, path string, gzipOK bool, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	if err := Serve(rec, req, gzipOK, ""); err != nil {
		rec.Code = 404
		rec.Body.Reset()
		rec.Body.WriteString(err.Error())
	}
	return rec
}

// TestPageAndAssets: the page names every asset by a hash of its content and is never cached,
// under a strict CSP; assets are cached for a year; anything else is not found.
func TestPageAndAssets(t *testing.T) {
	page := serve(t, "/app/", false, nil)
	if page.Code != 200 || page.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("page: %d, Cache-Control %q", page.Code, page.Header().Get("Cache-Control"))
	}
	csp := page.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self';", "frame-ancestors 'none'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	body := page.Body.String()
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(body) {
		t.Error("the page has inline script or style, which its CSP refuses")
	}
	assets := regexp.MustCompile(`/app/([a-z]+)\.([0-9a-f]{12})\.(js|css|svg)`).FindAllStringSubmatch(body, -1)
	if len(assets) != 5 {
		t.Fatalf("page names %d hashed assets, want 5 (uplot and app scripts and styles, icon): %s", len(assets), body)
	}
	for _, a := range assets {
		rec := serve(t, a[0], true, nil)
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d, %v", a[0], rec.Code, rec.Header())
			continue
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		if a[1] == "app" && a[3] == "js" {
			// The bundle: app.js and every module it imports, statically or by the route
			// table, minified (TestBundle keeps it the modules'). Minifying keeps string
			// literals, so each file's sentences are in it (the browser tests run it).
			scripts, _ := fs.Glob(embedded, "*.js")
			scripts = slices.DeleteFunc(scripts, func(s string) bool { return s == "uplot.js" })
			literal := regexp.MustCompile(`[(\[:,=] ?['"]([A-Z][^'"\\\n]{15,})['"]`)
			sentences := 0
			for _, name := range scripts {
				part, _ := fs.ReadFile(embedded, name)
				for _, l := range literal.FindAllSubmatch(part, -1) {
					sentences++
					if !bytes.Contains(plain, l[1]) {
						t.Errorf("%s does not bundle %s: %q is missing", a[0], name, l[1])
						break
					}
				}
			}
			if sentences < 100 {
				t.Errorf("%d sentences found in the modules: the check no longer reads them", sentences)
			}
			if len(plain) >= bundled() {
				t.Errorf("%s is %d bytes, not minified: its scripts are %d", a[0], len(plain), bundled())
			}
		} else if original, err := static.ReadFile("static/" + a[1] + "." + a[3]); err != nil || !bytes.Equal(plain, original) {
			t.Errorf("%s does not serve static/%s.%s (%v)", a[0], a[1], a[3], err)
		}
		if again := serve(t, a[0], false, http.Header{"If-None-Match": {rec.Header().Get("ETag")}}); again.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", a[0], again.Code)
		}
	}
	for _, p := range []string{"/app/app.js", "/app/app.000000000000.js", "/app/LICENSE.uplot", "/app/index.html", "/app/../openapi.json"} {
		if rec := serve(t, p, false, nil); rec.Code != 404 {
			t.Errorf("%s: %d, want not found", p, rec.Code)
		}
	}
	if rec := serve(t, "/app", false, nil); rec.Code != 200 || rec.Body.String() != body {
		t.Errorf("/app: %d, want the page", rec.Code)
	}
}

// The page names the deployment's RUM entry for the snippet the real-user view shows, escaped;
// without one, the view uses the page's own origin.
func TestPageNamesTheRUMEntry(t *testing.T) {
	req := httptest.NewRequest("GET", "/app/", nil)
	rec := httptest.NewRecorder()
	if err := Serve(rec, req, false, `https://abc.lambda-url.us-east-1.on.aws/"><script>`); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); !strings.Contains(body, `<meta name="openvitals-rum" content="https://abc.lambda-url.us-east-1.on.aws/&#34;&gt;&lt;script&gt;">`) {
		t.Errorf("page %s: want the entry in its meta, escaped", body)
	}
	if body := serve(t, "/app/", false, nil).Body.String(); !strings.Contains(body, `<meta name="openvitals-rum" content="">`) {
		t.Error("without an entry, the page names one")
	}
	js, err := static.ReadFile("static/view-rum.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `meta[name="openvitals-rum"]`) {
		t.Error("the real-user view does not read the page's RUM entry")
	}
}

// TestScriptBudget holds the dashboard to its budget: the scripts the page loads, gzipped, at
// most 60 KB (uPlot is 22 KB of it).
func TestScriptBudget(t *testing.T) {
	all, err := files()
	if err != nil {
		t.Fatal(err)
	}
	p, err := page("")
	if err != nil {
		t.Fatal(err)
	}
	total, scripts := 0, 0
	for _, m := range regexp.MustCompile(`<script[^>]* src="`+Prefix+`([^"]+)"`).FindAllStringSubmatch(string(p.body), -1) {
		a, ok := all.assets[m[1]]
		if !ok {
			t.Fatalf("the page loads %s, which is not served", m[1])
		}
		total += len(a.gz)
		scripts++
	}
	t.Logf("%d scripts, %d bytes gzipped", scripts, total)
	if total == 0 || total > 60<<10 {
		t.Errorf("%d bytes of JavaScript gzipped: want some, at most 60 KB", total)
	}
}

// TestUPlotPinned keeps the embedded uPlot identical to the pinned package in layers/web.
func TestUPlotPinned(t *testing.T) {
	for embedded, pinned := range map[string]string{"static/uplot.js": "uPlot.iife.min.js", "static/uplot.css": "uPlot.min.css"} {
		want, err := os.ReadFile("../../layers/web/node_modules/uplot/dist/" + pinned)
		if err != nil {
			t.Fatalf("read the pinned package (make test installs it with npm ci in layers/web): %v", err)
		}
		got, _ := static.ReadFile(embedded)
		if !bytes.Equal(got, want) {
			t.Errorf("internal/web/%s differs from layers/web's uplot %s: copy it again", embedded, pinned)
		}
	}
}

// bundled is the size of the scripts the bundle holds, before minifying.
func bundled() int {
	scripts, _ := fs.Glob(static, "static/*.js")
	n := 0
	for _, name := range scripts {
		if name != "static/uplot.js" {
			b, _ := static.ReadFile(name)
			n += len(b)
		}
	}
	return n
}

// TestDevelopment: with DirEnv, the page and its modules are the directory's files as they
// are, at each request (an edit shows without a build), never cached, and the page loads its
// module by its own name; a file the directory lacks is not found.
func TestDevelopment(t *testing.T) {
	dir := t.TempDir()
	names, err := fs.Glob(embedded, "*")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, _ := fs.ReadFile(embedded, n)
		if err := os.WriteFile(dir+"/"+n, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(DirEnv, dir)
	page := serve(t, "/app/", false, nil)
	if page.Code != 200 || !strings.Contains(page.Body.String(), `<script type="module" src="/app/app.js"></script>`) {
		t.Fatalf("page: %d %s: want the module app.js by its name", page.Code, page.Body.String())
	}
	for _, name := range []string{"app.js", "routes.js", "view-page.js", "uplot.js", "app.css"} {
		rec := serve(t, "/app/"+name, false, nil)
		want, _ := fs.ReadFile(embedded, name)
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("%s: %d, Cache-Control %q, the file as it is: %v", name, rec.Code, rec.Header().Get("Cache-Control"), bytes.Equal(rec.Body.Bytes(), want))
		}
	}
	edited := []byte("export function edited() {}\n")
	if err := os.WriteFile(dir+"/scales.js", edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if rec := serve(t, "/app/scales.js", false, nil); !bytes.Equal(rec.Body.Bytes(), edited) {
		t.Errorf("an edited module is served as %q, want the edit", rec.Body.String())
	}
	if rec := serve(t, "/app/none.js", false, nil); rec.Code != 404 {
		t.Errorf("a file the directory lacks: %d, want not found", rec.Code)
	}
	t.Setenv(DirEnv, "")
	if body := serve(t, "/app/", false, nil).Body.String(); !regexp.MustCompile(`<script type="module" src="/app/app\.[0-9a-f]{12}\.js">`).MatchString(body) {
		t.Errorf("without %s the page loads %s: want the hashed bundle", DirEnv, body)
	}
}
