package web

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// node is the Node that make deps installs (layers/browser), else the machine's; without
// either the test is skipped.
func node(t *testing.T) string {
	t.Helper()
	n, err := filepath.Abs("../../layers/browser/node_modules/.bin/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(n); err != nil {
		if n, err = exec.LookPath("node"); err != nil {
			t.Skip("no Node: make deps installs it")
		}
	}
	return n
}

// TestJavaScriptUnits runs the unit tests of the dashboard's pure modules (jstest/*.test.mjs:
// the units policy, dates and CSV of static/format.js, metrics' names and ratings of
// static/metrics.js, the charts' scales of static/scales.js, the hash's parts of
// static/routes.js), which import the modules themselves, with Node's own test runner.
func TestJavaScriptUnits(t *testing.T) {
	tests, err := filepath.Glob("jstest/*.test.mjs")
	if err != nil || len(tests) == 0 {
		t.Fatalf("no JavaScript unit test in jstest (%v)", err)
	}
	out, err := exec.Command(node(t), append([]string{"--test", "--test-reporter=spec"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Errorf("node --test: %v\n%s", err, out)
	}
}

// TestLint runs ESLint (pinned in layers/web, configured by eslint.config.mjs) over the
// modules and their tests: an undefined name, an unused import or variable, fails here, not
// at run time in one view.
func TestLint(t *testing.T) {
	n := node(t)
	eslint, err := filepath.Abs("../../layers/web/node_modules/eslint/bin/eslint.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(eslint); err != nil {
		t.Fatalf("no ESLint (make deps installs it with npm ci in layers/web): %v", err)
	}
	out, err := exec.Command(n, eslint, "--max-warnings", "0", "--config", "eslint.config.mjs", "static", "jstest").CombinedOutput()
	if err != nil {
		t.Errorf("eslint: %v\n%s", err, out)
	}
}

// TestRoutes: each view the route table names is a function its module exports, so that a
// misspelt view fails here. (A misspelt module or import fails the bundle, which
// TestPageAndAssets builds.)
func TestRoutes(t *testing.T) {
	src, err := fs.ReadFile(embedded, "routes.js")
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`\{ view: '(\w+)'(?:, id: true)?, module: \(\) => import\('\./([\w-]+\.js)'\) \}`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 11 {
		t.Fatalf("%d routes read from routes.js, want the websites and a website's 10 views: the test no longer reads them", len(routes))
	}
	for _, r := range routes {
		mod, err := fs.ReadFile(embedded, r[2])
		if err != nil {
			t.Errorf("the route of %s names %s: %v", r[1], r[2], err)
			continue
		}
		if !regexp.MustCompile(`(?m)^export function ` + r[1] + `\(`).Match(mod) {
			t.Errorf("%s exports no function %s, which the route table names", r[2], r[1])
		}
	}
}
