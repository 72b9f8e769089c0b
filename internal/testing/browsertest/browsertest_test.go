package browsertest_test

import (
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
