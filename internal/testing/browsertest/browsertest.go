// Package browsertest gives tests what a browser session of theirs needs: the local Chromium,
// a short temporary directory, and Lighthouse's runner from the repository's browser layer.
package browsertest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
)

// Options returns browser options for a test: the local Chromium (the test fails without one),
// a temporary directory of the test's own, removed when it ends, and a guard that lets the
// browser reach private addresses when allowPrivate (the tests' pages are on loopback). The
// directory's path is short: Chromium's socket path inside it must fit a Unix socket's 107
// bytes, which t.TempDir's long names can break.
func Options(t testing.TB, allowPrivate bool) browser.Options {
	t.Helper()
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	temp, err := os.MkdirTemp("", "ovb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(temp) })
	return browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: allowPrivate}, TempRoot: temp}
}

// Runner starts Lighthouse's runner from the repository's browser layer (as make run does),
// closed when the test ends.
func Runner(t testing.TB) *lighthouse.Runner {
	t.Helper()
	r := lighthouse.NewRunner(lighthouse.DefaultRunnerConfig(RepoRoot(t)))
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// RepoRoot is the repository's top directory, where its go.mod is, from any package's test.
func RepoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal(errors.New("go env GOMOD: not inside a module"))
	}
	return filepath.Dir(gomod)
}
