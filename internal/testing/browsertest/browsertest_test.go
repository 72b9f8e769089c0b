package browsertest_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// TestRepoRootHoldsTheModule: the root found from this package's directory is the module's.
func TestRepoRootHoldsTheModule(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(browsertest.RepoRoot(t), "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/openvitals/openvitals\n") {
		t.Fatalf("go.mod at the root: %.60q, %v", mod, err)
	}
}

// TestOptionsTempRootIsShortAndRemoved: the session's directory exists during the test, is
// short enough for Chromium's socket path, and is gone after it.
func TestOptionsTempRootIsShortAndRemoved(t *testing.T) {
	var dir string
	t.Run("session", func(t *testing.T) {
		opts := browsertest.Options(t, true)
		dir = opts.TempRoot
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || len(dir) > 40 {
			t.Errorf("TempRoot %q: %v", dir, err)
		}
		if opts.Bin == "" || !opts.Guard.AllowPrivate {
			t.Errorf("options %+v: want Chromium and private addresses allowed", opts)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left after the test: %v", dir, err)
	}
}

// TestSPAServerServesTheAppWithoutTheSnippet: every route gets the app's document, without the
// snippet's placeholder, and the scripts are served as JavaScript.
func TestSPAServerServesTheAppWithoutTheSnippet(t *testing.T) {
	base := browsertest.SPAServer(t)
	get := func(path string) (string, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s: %d, %v", path, res.StatusCode, err)
		}
		return res.Header.Get("Content-Type"), string(b)
	}
	for _, path := range []string{"/", "/product/123"} {
		if ct, doc := get(path); !strings.HasPrefix(ct, "text/html") || !strings.Contains(doc, "/app.js") || strings.Contains(doc, "{{SNIPPET}}") {
			t.Errorf("%s: %s %.200q", path, ct, doc)
		}
	}
	for _, path := range []string{"/app.js", "/navigo.js"} {
		if ct, js := get(path); ct != "text/javascript" || len(js) == 0 {
			t.Errorf("%s: %s, %d bytes", path, ct, len(js))
		}
	}
}
