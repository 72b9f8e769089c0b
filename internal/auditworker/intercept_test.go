package auditworker

import (
	"net/url"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

// TestWildcard: URL patterns match as DevTools matches them, and any text compiles.
func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		pattern, url string
		want         bool
	}{
		{"*://www.googletagmanager.com/*", "https://www.googletagmanager.com/gtm.js?id=1", true},
		{"*://www.googletagmanager.com/*", "https://cdn.example.com/www.googletagmanager.com", false},
		{"*/app.js", "https://example.com/static/app.js", true},
		{"*/app?js", "https://example.com/app.js", true},
		{"*/app.js", "https://example.com/appxjs", false},
		{`*/a\*b`, "https://example.com/a*b", true},
		{`*/a\*b`, "https://example.com/axxb", false},
		{"*(unclosed[", "https://example.com/(unclosed[", true},
		{`trailing\`, `trailing\`, true},
	} {
		if got := wildcard(tc.pattern).MatchString(tc.url); got != tc.want {
			t.Errorf("%q on %q: %v, want %v", tc.pattern, tc.url, got, tc.want)
		}
	}
}

// TestEditHTML: replacements first, then the script and stylesheet at the start of the head.
func TestEditHTML(t *testing.T) {
	doc := `<!DOCTYPE html><html><HEAD lang="x"><link rel="stylesheet" href="/a.css"></HEAD><body></body></html>`
	got := string(editHTML([]byte(doc), model.ExperimentChanges{Script: "https://cdn.example.com/x.js", Style: "h1{}</style>",
		Replace: []model.Replacement{{Find: "/a.css", With: "/b.css"}}}))
	want := `<!DOCTYPE html><html><HEAD lang="x"><style>h1{}<\/style></style><script src="https://cdn.example.com/x.js"></script><link rel="stylesheet" href="/b.css"></HEAD><body></body></html>`
	if got != want {
		t.Errorf("edited\n%s\nwant\n%s", got, want)
	}
	if got := string(editHTML([]byte("<p>no head</p>"), model.ExperimentChanges{Script: "alert(1)"})); !strings.HasPrefix(got, "<script>alert(1)</script><p>") {
		t.Errorf("without a head: %s", got)
	}
}

// TestOrigins: requests are the website's when scheme, host and port match (a default port
// written or not); another port or scheme of the host is another origin; the DevTools pattern
// names the origin as Chromium writes its URLs.
func TestOrigins(t *testing.T) {
	parse := func(raw string) origin {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return originOf(u)
	}
	ic := newInterception([]origin{parse("http://127.0.0.1:8090"), parse("https://Example.com")}, nil, model.ExperimentChanges{})
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8090/a?b": true, "http://127.0.0.1:8091/a": false, "https://127.0.0.1:8090/": false,
		"https://example.com/x": true, "https://example.com:443/x": true, "http://example.com/x": false,
		"https://example.com:8443/x": false, "https://api.example.com/x": false, "::not a url": false,
	} {
		if got := ic.owns(raw); got != want {
			t.Errorf("owns(%s) = %v, want %v", raw, got, want)
		}
	}
	for raw, want := range map[string]string{"http://127.0.0.1:8090/": "http://127.0.0.1:8090/*", "https://example.com:443": "https://example.com/*",
		"http://[::1]:9000": "http://[::1]:9000/*"} {
		if got := parse(raw).pattern(); got != want {
			t.Errorf("pattern of %s: %s, want %s", raw, got, want)
		}
	}
}
