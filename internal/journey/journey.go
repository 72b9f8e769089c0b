// Package journey runs a multistep test (a scripted browser journey through a website) in a
// fresh headless Chromium and measures it: duration, INP, TBT, CLS, main-thread CPU time and
// bytes transferred.
//
// One run is one [browser.Session]: launched for the run and closed at its end, so no browser
// process outlives a run and no state (cache, cookies, service workers) carries over from one
// run to the next. Every connection the browser makes goes through the session's guarded proxy;
// navigate steps are also checked against the guard before the browser is asked to go there,
// so that a refusal reads as one rather than as a tunnel failure.
//
// Measurements come from two sources:
//   - A script installed with Page.addScriptToEvaluateOnNewDocument, before any document of the
//     run exists, observes Event Timing, long tasks and layout shifts in every top-level document
//     and reports each entry as it arrives through a CDP binding (Runtime.addBinding, which
//     survives navigations). Nothing waits for pagehide: a binding call made while a document
//     unloads never reaches the client.
//   - CDP events and calls: Network.loadingFinished for bytes, Performance.getMetrics for CPU.
//
// A document's last moments are the hard part: the interaction that navigates away is reported
// after the next frame, and TaskDuration can only be read from a document still there. So
// every main-frame document request is paused (Fetch) until the leaving document has reported
// and its CPU time has been read; see [runner.beforeNavigation].
package journey

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/model/step"
)

// Default time limits: a step may take 30 s, a whole run 3 minutes.
const (
	DefaultStepTimeout = 30 * time.Second
	DefaultRunTimeout  = 3 * time.Minute
)

// Devices a run can emulate.
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
)

// Options configures a run.
type Options struct {
	// Browser configures the session the run launches (Chromium binary, SSRF guard, temporary
	// directory, logger).
	Browser browser.Options
	// BaseURL is the website's address ("https://example.com"); navigate targets that are paths
	// ("/checkout") resolve against it.
	BaseURL string
	// Device is DeviceDesktop (a 1350x940 viewport, the default) or DeviceMobile (a phone:
	// 412x823 at 1.75x, touch, a mobile user agent), as Lighthouse emulates them.
	Device string
	// StepTimeout bounds each step except wait, whose length the test sets; 0 means
	// DefaultStepTimeout.
	StepTimeout time.Duration
	// RunTimeout bounds the whole run, browser launch included; 0 means DefaultRunTimeout.
	RunTimeout time.Duration

	// Test hooks: called with the session right after launch and right before it is closed.
	onLaunch    func(*browser.Session)
	beforeClose func(*browser.Session)
}

// Result is what a run measured, and how it ended.
type Result struct {
	// Duration is the time the steps took, from the start of the first to the end of the last
	// (or of the failing one). Launching and closing the browser are not part of it. It does
	// include the runner's hold of each main-frame navigation while the leaving document
	// reports (see beforeNavigation): a few milliseconds to a few tens, up to 150 ms when the
	// interaction that navigated was too short to have an Event Timing entry.
	Duration time.Duration
	// INP is the longest interaction of the run, in milliseconds: the largest duration of an
	// Event Timing entry with an interactionId (durationThreshold 16 ms), over every top-level
	// document the run went through. 0 when nothing was interacted with.
	INP float64
	// TBT is the sum over every long task of every top-level document of its duration beyond
	// 50 ms, in milliseconds.
	TBT float64
	// CLS is the sum of the values of every layout shift without recent input, over every
	// top-level document of the run. Unlike web-vitals' CLS (the largest session window of one
	// page) it does not window: a journey is several pages, and each shift it meets counts.
	CLS float64
	// CPUTotal is the main-thread task time, in milliseconds, of the renderer of each top-level
	// document of the run (Performance.getMetrics TaskDuration, which restarts with each
	// document, summed over them; see cpuSampler). Cross-site iframes run in processes of their
	// own and are not counted.
	CPUTotal float64
	// BytesTotal is the sum of the encoded (transfer) sizes of every response the page and its
	// iframes received.
	BytesTotal int64
	// FailedStep is the index (from 0) of the step that failed, or -1 when every step passed.
	FailedStep int
	// Error says why that step failed: "step 3 (click #buy): no element matches the selector
	// within 30 s", numbering steps from 1 as the dashboard's list of steps does (FailedStep
	// 2). Empty when every step passed.
	Error string
	// Cause is Error without the step: "no element matches the selector within 30 s".
	Cause string
	// Screenshot is a PNG of the viewport when the step failed; nil when every step passed.
	Screenshot []byte
	// SoftNavigations are the route changes of single-page apps the steps made (Chromium's
	// soft-navigation entries), each with its route's LCP, CLS and INP, in the order of the
	// steps; none in a browser without them or a journey through documents only.
	SoftNavigations []SoftNavigation
}

// Causes of a context's end, told apart in error messages.
var (
	errStepTimeout = errors.New("step timeout")
	errRunTimeout  = errors.New("run timeout")
	errCrashed     = errors.New("the page crashed")
)

// finishTimeout bounds the work after the steps (flushing observers, the screenshot): it runs
// even when the run's time is up, and must not hold a worker long.
const finishTimeout = 10 * time.Second

// Run launches a browser, runs steps in order, measures them and closes the browser.
//
// The returned error is non-nil only when the run could not start (bad options, the browser
// did not launch, the page could not be set up). A step that fails ends the run with a Result
// whose FailedStep is its index; the measurements then cover the steps up to it.
func Run(ctx context.Context, opts Options, steps []step.Step) (Result, error) {
	opts, base, err := opts.check()
	if err != nil {
		return Result{FailedStep: -1}, err
	}
	log := opts.log()
	runCtx, cancel := context.WithTimeoutCause(ctx, opts.RunTimeout, errRunTimeout)
	defer cancel()
	sess, err := browser.Launch(runCtx, opts.Browser)
	if err != nil {
		return Result{FailedStep: -1}, fmt.Errorf("journey: %w", err)
	}
	defer func() {
		if opts.beforeClose != nil {
			opts.beforeClose(sess)
		}
		if err := sess.Close(); err != nil {
			log.Warn("journey: close browser", "err", err)
		}
	}()
	if opts.onLaunch != nil {
		opts.onLaunch(sess)
	}
	return play(ctx, runCtx, sess, opts, base, steps, false)
}

// Play runs steps in a page of its own in a session the caller launched and keeps (a login
// before an audit: the cookies and storage the steps leave stay in the session), then closes
// that page. Its error and Result are Run's.
func Play(ctx context.Context, sess *browser.Session, opts Options, steps []step.Step) (Result, error) {
	opts, base, err := opts.check()
	if err != nil {
		return Result{FailedStep: -1}, err
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, opts.RunTimeout, errRunTimeout)
	defer cancel()
	return play(ctx, runCtx, sess, opts, base, steps, true)
}

// check fills opts' defaults and parses its base URL (nil without one).
func (opts Options) check() (Options, *url.URL, error) {
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = DefaultStepTimeout
	}
	if opts.RunTimeout <= 0 {
		opts.RunTimeout = DefaultRunTimeout
	}
	switch opts.Device {
	case "":
		opts.Device = DeviceDesktop
	case DeviceDesktop, DeviceMobile:
	default:
		return opts, nil, fmt.Errorf("journey: device must be %q or %q, not %q", DeviceDesktop, DeviceMobile, opts.Device)
	}
	if opts.BaseURL == "" {
		return opts, nil, nil
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return opts, nil, fmt.Errorf("journey: base URL %q is not an absolute http(s) URL", opts.BaseURL)
	}
	return opts, u, nil
}

func (opts Options) log() *slog.Logger {
	if opts.Browser.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return opts.Browser.Log
}

// play runs steps in a new page of sess, closed at the end with closePage (Run leaves it to the
// session's end); runCtx bounds the run.
func play(ctx, runCtx context.Context, sess *browser.Session, opts Options, base *url.URL, steps []step.Step, closePage bool) (Result, error) {
	res := Result{FailedStep: -1}
	log := opts.log()
	r, err := start(runCtx, sess, opts, base, log)
	if err != nil {
		return res, fmt.Errorf("journey: set up the page: %w", err)
	}
	defer func() {
		r.stop()
		if !closePage {
			return
		}
		if err := r.page.Context(context.WithoutCancel(ctx)).Close(); err != nil {
			log.Debug("journey: close the page", "err", err)
		}
	}()

	began := time.Now()
	for i, st := range steps {
		log.Debug("journey step", "index", i, "type", st.Type, "target", st.Target)
		r.rec.setStep(i)
		if err := r.step(runCtx, st); err != nil {
			res.FailedStep = i
			res.Cause = err.Error()
			res.Error = fmt.Sprintf("step %d (%s): %v", i+1, describe(st), err)
			log.Debug("journey step failed", "index", i, "err", err)
			break
		}
	}
	res.Duration = time.Since(began)

	// The caller's ctx ending means the worker is giving up: skip the extras. The run's own
	// timeout does not: a run that took too long still deserves its screenshot and measurements.
	if ctx.Err() == nil {
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer fcancel()
		if res.FailedStep >= 0 {
			shot, err := proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng}.Call(r.page.Context(fctx))
			if err != nil {
				log.Warn("journey: screenshot", "err", err)
			} else {
				res.Screenshot = shot.Data
			}
		}
		r.finish(fctx)
	}
	r.fill(&res)
	return res, nil
}

// Describe names a step as error messages do: "click #buy", "navigate /checkout", "wait 500 ms".
func Describe(st step.Step) string { return describe(st) }

// describe names a step in error messages: "click #buy", "navigate /checkout", "wait 500 ms".
func describe(st step.Step) string {
	switch {
	case st.Type == step.Wait:
		return "wait " + st.Value + " ms"
	case st.Target == "":
		return string(st.Type)
	}
	target := st.Target
	if len(target) > 120 {
		target = target[:117] + "..."
	}
	return string(st.Type) + " " + target
}

// runner is the state of one run: the session, its page, and what the page reported.
type runner struct {
	opts    Options
	log     *slog.Logger
	base    *url.URL
	sess    *browser.Session
	page    *rod.Page
	binding string
	rec     *recorder
	cpu     *cpuSampler
	// cpuStarted says whether the sampler's loop runs (stop waits for it).
	cpuStarted bool
	// children are the sessions of the page's cross-site iframes (see attach); only the event
	// goroutine uses it.
	children map[proto.TargetSessionID]bool
	// flushes numbers flush tokens.
	flushes atomic.Uint64
	cancel  context.CancelFunc
	done    chan struct{}
}

// start opens the run's page and installs everything that must be in place before the first
// document loads: device emulation, the binding, the observers and the CDP event stream.
func start(ctx context.Context, sess *browser.Session, opts Options, base *url.URL, log *slog.Logger) (*runner, error) {
	b := sess.Browser().Context(ctx)
	page, err := b.Page(proto.TargetCreateTarget{})
	if err != nil {
		return nil, fmt.Errorf("new page: %w", err)
	}
	tree, err := proto.PageGetFrameTree{}.Call(page)
	if err != nil {
		return nil, fmt.Errorf("frame tree: %w", err)
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	r := &runner{
		opts: opts, log: log, base: base, sess: sess, page: page,
		// A random name: the page cannot guess it, so it can neither call it nor collide with it.
		binding:  "__openvitals_" + hex.EncodeToString(nonce[:]),
		rec:      newRecorder(tree.FrameTree.Frame.ID, tree.FrameTree.Frame.LoaderID),
		done:     make(chan struct{}),
		children: map[proto.TargetSessionID]bool{},
	}

	// The event stream is subscribed to before any domain is enabled, so that no event of the
	// run can come before it. It lives until stop, not until ctx: finish still needs it after a
	// run that timed out.
	evCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.cpu = newCPUSampler(page.Context(evCtx))
	events := sess.Browser().Context(evCtx).Event()
	go func() {
		defer close(r.done)
		for msg := range events {
			r.handle(evCtx, msg)
		}
	}()
	fail := func(what string, err error) (*runner, error) {
		r.stop()
		return nil, fmt.Errorf("%s: %w", what, err)
	}

	if err := emulate(page, opts.Device); err != nil {
		return fail("emulate "+opts.Device, err)
	}
	for _, req := range []proto.Request{
		proto.PageEnable{},
		proto.NetworkEnable{},
		proto.PerformanceEnable{},
		// Only for Inspector.targetCrashed, which ends a step at once instead of at its timeout.
		proto.InspectorEnable{},
		// Lifecycle events carry load, DOMContentLoaded, networkIdle and networkAlmostIdle per
		// document: what waitUntil waits for, as in puppeteer.
		proto.PageSetLifecycleEventsEnabled{Enabled: true},
		// Runtime.bindingCalled is only sent to a client that enabled Runtime.
		proto.RuntimeEnable{},
		proto.RuntimeAddBinding{Name: r.binding},
		// Cross-site iframes run in processes of their own (site isolation): their requests are
		// reported on sessions of their own, which are attached to here so that bytes_total
		// counts them. They start paused until their Network domain is enabled (see attach).
		proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true,
			Filter: proto.TargetTargetFilter{{Type: "iframe"}}},
		// Main-frame document requests pause until the leaving document has reported what it
		// holds (see beforeNavigation).
		proto.FetchEnable{Patterns: []*proto.FetchRequestPattern{{
			URLPattern: "*", ResourceType: proto.NetworkResourceTypeDocument, RequestStage: proto.FetchRequestStageRequest,
		}}},
	} {
		if _, err := page.Call(page.GetContext(), string(page.SessionID), req.ProtoReq(), req); err != nil {
			return fail(req.ProtoReq(), err)
		}
	}
	if _, err := page.EvalOnNewDocument(observerScript(r.binding)); err != nil {
		return fail("install observers", err)
	}

	r.cpuStarted = true
	go r.cpu.loop(evCtx)
	return r, nil
}

// stop ends the event stream and the CPU sampler; the session's Close does the rest.
func (r *runner) stop() {
	r.cancel()
	<-r.done
	if r.cpuStarted {
		<-r.cpu.done
	}
}

// finish collects what the page has not reported yet at the end of the run.
func (r *runner) finish(ctx context.Context) {
	r.flush(ctx)
	r.cpu.sample(ctx)
}

// flush has the current document hand over what its observers hold but have not delivered
// (Event Timing entries of the last interaction wait for the frame after it), and waits for
// them to arrive. While a navigation's request is paused (see beforeNavigation) the page does
// not answer Runtime commands: a flush then waits until the new document can answer it.
func (r *runner) flush(ctx context.Context) {
	token := strconv.FormatUint(r.flushes.Add(1), 10)
	res, err := r.page.Context(ctx).Evaluate(rod.Eval(flushJS, r.binding+flushSuffix, token).ByPromise())
	if err != nil {
		r.log.Debug("journey: flush observers", "err", err)
		return
	}
	if !res.Value.Bool() {
		return // about:blank, an error page: nothing observed
	}
	// The flush reports through the binding like every entry, and ends with the token: once
	// it arrives, every entry reported before it has been counted. It comes in milliseconds
	// or, the document having gone meanwhile, never.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := r.rec.waitFlush(wctx, token); err != nil {
		r.log.Debug("journey: flush observers", "err", err)
	}
}

// leaveTimeout bounds how long a main-frame navigation is held for the leaving document's last
// report. The document itself gives up waiting for entries after 150 ms (see observerScript).
const leaveTimeout = 400 * time.Millisecond

// beforeNavigation runs while a main-frame document request is paused by Fetch, before the
// document it would replace is gone.
//
// If that document announced the navigation (its Navigation API navigate event), the request
// is held until the document has reported its last entries. Without the hold, a click whose
// handler navigates races its own measurement: the click's Event Timing entry waits for the
// next frame and the long task's for an observer callback, and on a fast server the new
// document commits first, taking both with the old one (measured: INP and TBT of such a click
// lost in 4 runs of 6). The page cannot be asked to flush instead: Runtime commands sent while
// the request is paused get no answer until it goes on (measured). Navigations the browser
// starts (a navigate step) have no navigate event and are not held; the step flushes before.
//
// Performance commands are answered meanwhile (measured), by the leaving document: its last
// TaskDuration sample is taken here, after its last task.
func (r *runner) beforeNavigation(ctx context.Context, e *proto.FetchRequestPaused) {
	if e.FrameID == r.rec.mainFrame {
		wctx, cancel := context.WithTimeout(ctx, leaveTimeout)
		if err := r.rec.waitLeft(wctx); err != nil {
			r.log.Debug("journey: the leaving document did not report in time", "url", e.Request.URL)
		}
		cancel()
		// A document busy with a long task answers when it ends: bound the wait.
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		r.cpu.sample(sctx)
		cancel()
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := (proto.FetchContinueRequest{RequestID: e.RequestID}).Call(r.page.Context(cctx)); err != nil {
		// The navigation was cancelled or replaced meanwhile.
		r.log.Debug("journey: continue document request", "err", err)
	}
}

// fill copies the measurements into res.
func (r *runner) fill(res *Result) {
	m := r.rec.metrics()
	res.INP, res.TBT, res.CLS, res.BytesTotal = m.inp, m.tbt, m.cls, m.bytes
	res.CPUTotal = r.cpu.total()
	res.SoftNavigations = r.rec.softNavigations()
}

// step runs one step within its time limits and explains a failure in words.
func (r *runner) step(runCtx context.Context, st step.Step) error {
	if st.Type == step.Wait {
		// A wait is as long as the test says (up to step.MaxWaitMillis, which the API checks):
		// only the run's limit applies to it.
		d, err := st.Pause()
		if err != nil {
			return err
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-runCtx.Done():
			return r.runEnded(runCtx)
		}
	}

	ctx, cancel := context.WithCancelCause(runCtx)
	defer cancel(nil)
	ctx, cancelT := context.WithTimeoutCause(ctx, r.opts.StepTimeout, errStepTimeout)
	defer cancelT()
	// A crashed renderer answers nothing: end the step at once rather than at its timeout.
	go func() {
		select {
		case <-r.rec.crashed:
			cancel(errCrashed)
		case <-ctx.Done():
		}
	}()

	var ph phase
	err := r.do(ctx, st, &ph)
	if err == nil {
		return nil
	}
	if runCtx.Err() != nil {
		return r.runEnded(runCtx)
	}
	var sf *stepFailure
	switch {
	case errors.As(err, &sf):
		return sf
	case context.Cause(ctx) == errCrashed:
		return errCrashed
	case context.Cause(ctx) == errStepTimeout:
		msg := ph.timeout(st, r.opts.StepTimeout)
		var nr *notReady
		if errors.As(err, &nr) {
			msg += ": " + nr.reason
		}
		return errors.New(msg)
	}
	return ph.explain(err)
}

// runEnded says why the run's context ended.
func (r *runner) runEnded(runCtx context.Context) error {
	if context.Cause(runCtx) == errRunTimeout {
		return fmt.Errorf("the run took longer than its limit of %s", human(r.opts.RunTimeout))
	}
	return errors.New("the run was cancelled")
}

// stepFailure is a failure already explained in words, reported as it is.
type stepFailure struct{ msg string }

func (f *stepFailure) Error() string { return f.msg }

func failf(format string, args ...any) error { return &stepFailure{fmt.Sprintf(format, args...)} }

// phase is where in a step the work is, so that a timeout or error can say what did not happen.
type phase int

const (
	phaseAct      phase = iota // talking to the page
	phaseFind                  // waiting for an element to match the selector
	phaseReady                 // waiting for the element to become visible, enabled, uncovered
	phaseNavStart              // waiting for the step's navigation to begin
	phaseNavEvent              // waiting for the new document to reach waitUntil
)

func (ph phase) timeout(st step.Step, d time.Duration) string {
	within := "within " + human(d)
	switch ph {
	case phaseFind:
		return "no element matches the selector " + within
	case phaseReady:
		return "the element was not ready " + within
	case phaseNavStart:
		return "no navigation followed " + within
	case phaseNavEvent:
		return "the page did not reach " + string(st.Event()) + " " + within
	default:
		return "the page did not respond " + within
	}
}

func (ph phase) explain(err error) error {
	var evalErr *rod.EvalError
	if ph == phaseFind && errors.As(err, &evalErr) && evalErr.Exception != nil {
		// querySelector threw: "SyntaxError: Failed to execute 'querySelector' on 'Document':
		// 'h1[[' is not a valid selector.", then a stack.
		msg, _, _ := strings.Cut(evalErr.Exception.Description, "\n")
		if _, rest, ok := strings.Cut(msg, "': "); ok {
			msg = rest
		}
		return fmt.Errorf("invalid selector: %s", strings.TrimSuffix(msg, "."))
	}
	return err
}

// human writes a duration the way error messages show it: "30 s", "3 min", "500 ms", "1.5 s".
func human(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
	}
}

// lifecycleEvent maps a waitUntil value to the CDP lifecycle event it waits for, as puppeteer's
// LifecycleWatcher does.
func lifecycleEvent(waitUntil step.WaitUntil) (string, bool) {
	switch waitUntil {
	case step.Load:
		return "load", true
	case step.DOMContentLoaded:
		return "DOMContentLoaded", true
	case step.NetworkIdle0:
		return "networkIdle", true
	case step.NetworkIdle2:
		return "networkAlmostIdle", true
	}
	return "", false
}
