package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestJavaScriptUnits runs the unit tests of the dashboard's pure parts (jstest/*.test.js: the
// units policy and CSV cells of static/format.js) with Node's own test runner: the Node that
// make deps installs (layers/browser), else the machine's.
func TestJavaScriptUnits(t *testing.T) {
	node, err := filepath.Abs("../../layers/browser/node_modules/.bin/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("no Node: make deps installs it")
		}
	}
	tests, err := filepath.Glob("jstest/*.test.js")
	if err != nil || len(tests) == 0 {
		t.Fatalf("no JavaScript unit test in jstest (%v)", err)
	}
	out, err := exec.Command(node, append([]string{"--test", "--test-reporter=spec"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Errorf("node --test: %v\n%s", err, out)
	}
}

// TestViewNames is the dashboard's lint of what it shares: every name a script reads from ov
// (the views' shared helpers) is one a script gives it, so that a misspelt name fails here,
// not at run time in one view.
func TestViewNames(t *testing.T) {
	defined := map[string]bool{}
	type use struct{ file, name string }
	var used []use
	assign := regexp.MustCompile(`\bov\.(\w+)\s*=[^=]`)
	read := regexp.MustCompile(`\bov\.(\w+)\b`)
	block := regexp.MustCompile(`(?s)Object\.assign\(ov, \{(.*?)\}\);`)
	routes := regexp.MustCompile(`(?s)var ROUTES = \{(.*?)\};`)
	routed := regexp.MustCompile(`\['(\w+)'`)
	key := regexp.MustCompile(`(\w+):`)
	files, err := filepath.Glob("static/*.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "uplot") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, m := range assign.FindAllStringSubmatch(src, -1) {
			defined[m[1]] = true
		}
		for _, m := range block.FindAllStringSubmatch(src, -1) {
			for _, k := range key.FindAllStringSubmatch(m[1], -1) {
				defined[k[1]] = true
			}
		}
		for _, m := range read.FindAllStringSubmatch(src, -1) {
			used = append(used, use{filepath.Base(f), m[1]})
		}
		// The route table names views by their names on ov.
		for _, m := range routes.FindAllStringSubmatch(src, -1) {
			for _, r := range routed.FindAllStringSubmatch(m[1], -1) {
				used = append(used, use{filepath.Base(f) + " (ROUTES)", r[1]})
			}
		}
	}
	if len(defined) < 20 {
		t.Fatalf("only %d names given to ov: the lint no longer reads the scripts", len(defined))
	}
	var missing []string
	for _, u := range used {
		if !defined[u.name] && !slices.Contains(missing, u.file+": ov."+u.name) {
			missing = append(missing, u.file+": ov."+u.name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("names read from ov that no script gives it: %v", missing)
	}
}
