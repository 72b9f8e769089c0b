package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SPAServer serves, until the test ends, the single-page app the real-user tests load
// (internal/rum/testdata/spa, routed by navigo from layers/spa) without the real-user snippet:
// every path the router knows gets the app's document. It returns the server's URL.
func SPAServer(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	read := func(path string) []byte {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatalf("%v (make deps installs layers/spa)", err)
		}
		return b
	}
	router := read("layers/spa/node_modules/navigo/lib/navigo.min.js")
	app := read("internal/rum/testdata/spa/app.js")
	var index strings.Builder
	for line := range strings.Lines(string(read("internal/rum/testdata/spa/index.html"))) {
		if !strings.Contains(line, "{{SNIPPET}}") {
			index.WriteString(line)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/navigo.js", "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(map[string][]byte{"/navigo.js": router, "/app.js": app}[r.URL.Path])
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(index.String()))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
