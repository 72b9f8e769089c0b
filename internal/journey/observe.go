package journey

import (
	"context"
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/browser"
)

// observeJS is the observer script (observe.js): a function of the binding's name and the
// flush function's suffix.
//
//go:embed observe.js
var observeJS string

// observerScript returns the script installed in every new document before its own scripts
// run: observe.js called with the binding's name.
func observerScript(binding string) string {
	return "(" + strings.TrimSpace(observeJS) + ")(" + strconv.Quote(binding) + ", " + strconv.Quote(flushSuffix) + ");"
}

// flushSuffix names the flush function: the binding's name plus this.
const flushSuffix = "_flush"

// flushJS calls the flush function of the current document once the last interaction's Event
// Timing entries are out (they are dispatched after the frame that presents its result), and
// resolves to whether the document had one (an error page or about:blank has none).
//
//go:embed flush.js
var flushJS string

// metrics are the totals of what the page reported.
type metrics struct {
	inp, tbt, cls float64
	bytes         int64
}

// document is what the main frame's document of one loader did.
type document struct {
	events    map[string]bool // lifecycle events reached
	url       string
	status    int
	fromProxy bool // the response came from the guarded proxy, not the target
	failed    bool // Chromium showed its error page instead
	errorText string
}

// recorder keeps what the run's CDP events tell: the measurements, and the main frame's
// navigations, which steps wait on.
type recorder struct {
	mainFrame proto.PageFrameID
	// crashed is closed when the page's renderer crashes.
	crashed   chan struct{}
	crashOnce sync.Once

	mu sync.Mutex
	// changed is closed, and replaced, whenever the navigation state changes or a flush
	// token arrives.
	changed chan struct{}
	m       metrics
	flushes map[string]bool
	// routes are the soft navigations and what happened on each; step is the index of the
	// step being played, which the page's inputs are tied to.
	routes routes
	step   int
	// leaving and left count the current document's announced navigations and its reports
	// that it is ready to go (see beforeNavigation).
	leaving, left int
	// navs counts the main frame's navigations: new documents and same-document ones.
	navs int
	// loader is the main frame's current document.
	loader proto.NetworkLoaderID
	docs   map[proto.NetworkLoaderID]*document
	// docRequests are the main frame's document requests in flight, and lastFailure the
	// latest that failed: an error page's frame does not say why it is one.
	docRequests map[proto.NetworkRequestID]string
	lastFailure struct{ url, text string }
}

func newRecorder(mainFrame proto.PageFrameID, loader proto.NetworkLoaderID) *recorder {
	return &recorder{
		mainFrame:   mainFrame,
		crashed:     make(chan struct{}),
		changed:     make(chan struct{}),
		flushes:     map[string]bool{},
		loader:      loader,
		docs:        map[proto.NetworkLoaderID]*document{},
		docRequests: map[proto.NetworkRequestID]string{},
	}
}

// doc returns the document of a loader, creating it; r.mu must be held.
func (r *recorder) doc(loader proto.NetworkLoaderID) *document {
	d := r.docs[loader]
	if d == nil {
		d = &document{events: map[string]bool{}}
		r.docs[loader] = d
	}
	return d
}

// notify wakes the waiters; r.mu must be held.
func (r *recorder) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// message is one report of the page's observers. Entries come in arrays (d, with n, e and t
// beside them where the kind has them); a soft navigation, a paint or an input is one object,
// its n, e and t single values.
type message struct {
	K string    `json:"k"`
	D []float64 `json:"d"`
	// T is a flush's token, the shifts' start times, or an input's or soft navigation's time.
	T json.RawMessage `json:"t"`
	// N is the navigationId of each entry, or of the soft navigation or paint.
	N json.RawMessage `json:"n"`
	// E is the element of each entry (event targets), or the paint's.
	E   json.RawMessage `json:"e"`
	Doc string          `json:"o"`
	// Interaction, URL and Value are a soft navigation's or paint's interactionId, a soft
	// navigation's URL and a paint's time from its interaction.
	Interaction uint64  `json:"i"`
	URL         string  `json:"u"`
	Value       float64 `json:"v"`
}

// report takes one message of the page's observers.
func (r *recorder) report(payload string) {
	var m message
	if json.Unmarshal([]byte(payload), &m) != nil {
		return
	}
	var (
		navs, elems, times = []uint64{}, []string{}, []float64{}
		nav                uint64
		elem               string
		at                 float64
	)
	switch m.K {
	case "event":
		_ = json.Unmarshal(m.N, &navs)
		_ = json.Unmarshal(m.E, &elems)
	case "shift":
		_ = json.Unmarshal(m.N, &navs)
		_ = json.Unmarshal(m.T, &times)
	case "soft", "icp", "input":
		_ = json.Unmarshal(m.N, &nav)
		_ = json.Unmarshal(m.E, &elem)
		_ = json.Unmarshal(m.T, &at)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m.K {
	case "event":
		// The largest entry is the largest interaction: an interaction's latency is the
		// longest of its entries.
		for i, d := range m.D {
			r.m.inp = max(r.m.inp, d)
			if i < len(navs) && i < len(elems) {
				r.routes.event(m.Doc, navs[i], d, elems[i])
			}
		}
	case "longtask":
		for _, d := range m.D {
			r.m.tbt += max(0, d-50)
		}
	case "shift":
		for i, v := range m.D {
			r.m.cls += v
			if i < len(navs) && i < len(times) {
				r.routes.shift(m.Doc, navs[i], times[i], v)
			}
		}
	case "soft":
		r.routes.soft(m.Doc, nav, m.Interaction, m.URL, at, r.step)
	case "icp":
		r.routes.paint(m.Doc, nav, m.Interaction, m.Value, elem)
	case "input":
		r.routes.input(m.Doc, at, r.step)
	case "flush":
		var token string
		if json.Unmarshal(m.T, &token) != nil {
			return
		}
		r.flushes[token] = true
		r.notify()
	case "leaving":
		r.leaving++
	case "left":
		r.left++
		r.notify()
	}
}

// setStep says which step is played from now on.
func (r *recorder) setStep(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.step = i
}

func (r *recorder) addBytes(n float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m.bytes += int64(n)
}

func (r *recorder) metrics() metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m
}

// softNavigations are the run's soft navigations with their vitals.
func (r *recorder) softNavigations() []SoftNavigation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routes.result()
}

// waitFlush waits for a flush token to arrive.
func (r *recorder) waitFlush(ctx context.Context, token string) error {
	return r.waitUntil(ctx, func() bool { return r.flushes[token] })
}

// waitLeft waits until the current document has reported all it had for every navigation it
// announced.
func (r *recorder) waitLeft(ctx context.Context) error {
	return r.waitUntil(ctx, func() bool { return r.left >= r.leaving })
}

// waitUntil waits until done, called with r.mu held, is true: it is called again at each
// change the recorder notes.
func (r *recorder) waitUntil(ctx context.Context, done func() bool) error {
	for {
		r.mu.Lock()
		ok, ch := done(), r.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *recorder) lifecycle(e *proto.PageLifecycleEvent) {
	if e.FrameID != r.mainFrame {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.doc(e.LoaderID).events[string(e.Name)] = true
	r.notify()
}

func (r *recorder) frameNavigated(f *proto.PageFrame) {
	if f == nil || f.ParentID != "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.navs++
	// The document that announced a navigation is gone: nothing more will come from it.
	r.leaving, r.left = 0, 0
	r.loader = f.LoaderID
	d := r.doc(f.LoaderID)
	if d.url == "" {
		d.url = f.URL
	}
	if strings.HasPrefix(f.URL, "chrome-error://") {
		d.failed = true
		d.url = f.UnreachableURL
		if r.lastFailure.url == f.UnreachableURL {
			d.errorText = r.lastFailure.text
		}
	}
	r.notify()
}

func (r *recorder) sameDocument(frame proto.PageFrameID) {
	if frame != r.mainFrame {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.navs++
	r.notify()
}

func (r *recorder) docRequest(e *proto.NetworkRequestWillBeSent) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != r.mainFrame || e.Request == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.docRequests[e.RequestID] = e.Request.URL
}

func (r *recorder) docResponse(e *proto.NetworkResponseReceived) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != r.mainFrame || e.Response == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.docRequests, e.RequestID)
	d := r.doc(e.LoaderID)
	d.url, d.status = e.Response.URL, e.Response.Status
	for name := range e.Response.Headers {
		// The guarded proxy marks the answers it writes itself (internal/browser's
		// proxyErrorHeader).
		if strings.EqualFold(name, "X-Openvitals-Proxy-Error") {
			d.fromProxy = true
		}
	}
}

func (r *recorder) docFailed(e *proto.NetworkLoadingFailed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	url, ok := r.docRequests[e.RequestID]
	if !ok {
		return
	}
	delete(r.docRequests, e.RequestID)
	r.lastFailure.url, r.lastFailure.text = url, e.ErrorText
	// The error page may already have committed.
	if d := r.docs[r.loader]; d != nil && d.failed && d.url == url && d.errorText == "" {
		d.errorText = e.ErrorText
	}
}

func (r *recorder) crash() {
	r.crashOnce.Do(func() { close(r.crashed) })
}

// navCount is the number of main-frame navigations so far: a mark to wait from.
func (r *recorder) navCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.navs
}

// waitNavigation waits until the main frame has navigated since mark and its current document
// has reached the lifecycle event (or turned out to be an error page), and returns that
// document. It calls committed once the navigation has committed and only the event remains.
// Waiting on the current document rather than the first new one follows redirects made by
// script, as puppeteer's waitForNavigation does.
func (r *recorder) waitNavigation(ctx context.Context, mark int, event string, committed func()) (document, error) {
	told := false
	for {
		r.mu.Lock()
		var found *document
		if r.navs > mark {
			d := r.doc(r.loader)
			if d.failed || d.events[event] {
				found = d
			}
		}
		navigated, ch := r.navs > mark, r.changed
		var out document
		if found != nil {
			out = *found
		}
		r.mu.Unlock()
		if found != nil {
			return out, nil
		}
		if navigated && !told {
			told = true
			committed()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return document{}, ctx.Err()
		}
	}
}

// handle dispatches one CDP event of the browser. It runs on the event goroutine only, which
// also owns r.children.
func (r *runner) handle(ctx context.Context, msg *rod.Message) {
	own := msg.SessionID == r.page.SessionID
	child := r.children[msg.SessionID]
	if !own && !child {
		return
	}
	switch msg.Method {
	case "Network.loadingFinished":
		on(msg, func(e *proto.NetworkLoadingFinished) { r.rec.addBytes(e.EncodedDataLength) })
	case "Target.attachedToTarget":
		on(msg, func(e *proto.TargetAttachedToTarget) {
			r.children[e.SessionID] = true
			go r.attach(ctx, e.SessionID)
		})
	case "Target.detachedFromTarget":
		on(msg, func(e *proto.TargetDetachedFromTarget) { delete(r.children, e.SessionID) })
	default:
		if own {
			r.handlePage(ctx, msg)
		}
	}
}

// handlePage dispatches one CDP event of the page's own session.
func (r *runner) handlePage(ctx context.Context, msg *rod.Message) {
	switch msg.Method {
	case "Runtime.bindingCalled":
		on(msg, func(e *proto.RuntimeBindingCalled) {
			if e.Name == r.binding {
				r.rec.report(e.Payload)
			}
		})
	case "Page.lifecycleEvent":
		on(msg, r.rec.lifecycle)
	case "Page.frameNavigated":
		on(msg, func(e *proto.PageFrameNavigated) { r.rec.frameNavigated(e.Frame) })
	case "Page.navigatedWithinDocument":
		on(msg, func(e *proto.PageNavigatedWithinDocument) { r.rec.sameDocument(e.FrameID) })
	case "Fetch.requestPaused":
		// Not here: what it waits for arrives through this very goroutine.
		on(msg, func(e *proto.FetchRequestPaused) { go r.beforeNavigation(ctx, e) })
	case "Network.requestWillBeSent":
		on(msg, r.rec.docRequest)
	case "Network.responseReceived":
		on(msg, r.rec.docResponse)
	case "Network.loadingFailed":
		on(msg, r.rec.docFailed)
	case "Page.javascriptDialogOpening":
		// An alert, confirm, prompt or beforeunload dialog blocks the page until answered:
		// accept it, as a user going through the journey would, so that the run goes on.
		on(msg, func(e *proto.PageJavascriptDialogOpening) {
			go func() {
				dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_ = proto.PageHandleJavaScriptDialog{Accept: true, PromptText: e.DefaultPrompt}.Call(r.page.Context(dctx))
			}()
		})
	case "Inspector.targetCrashed":
		r.rec.crash()
	}
}

// on calls fn with msg's event, when it loads as an E.
func on[E any, P interface {
	*E
	proto.Event
}](msg *rod.Message, fn func(P)) {
	e := P(new(E))
	if msg.Load(e) {
		fn(e)
	}
}

// attach sets up a cross-site iframe's session: its network events count toward bytes_total,
// and its own cross-site iframes are attached to in turn. The iframe waits, paused, until
// this is done, so none of its requests goes uncounted.
func (r *runner) attach(ctx context.Context, id proto.TargetSessionID) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c := sessionClient{b: r.sess.Browser(), ctx: actx, id: id}
	if err := (proto.NetworkEnable{}).Call(c); err != nil {
		r.log.Debug("journey: iframe network", "err", err)
	}
	if err := (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true,
		Filter: proto.TargetTargetFilter{{Type: "iframe"}}}).Call(c); err != nil {
		r.log.Debug("journey: iframe auto-attach", "err", err)
	}
	// Whatever failed above, the iframe must not stay paused.
	if err := (proto.RuntimeRunIfWaitingForDebugger{}).Call(c); err != nil {
		r.log.Debug("journey: resume iframe", "err", err)
	}
}

// sessionClient sends CDP commands to one session of the browser: rod has no object for an
// iframe's session.
type sessionClient struct {
	b   *rod.Browser
	ctx context.Context
	id  proto.TargetSessionID
}

func (c sessionClient) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	return c.b.Call(ctx, sessionID, method, params)
}

func (c sessionClient) GetSessionID() proto.TargetSessionID { return c.id }

func (c sessionClient) GetContext() context.Context { return c.ctx }

// cpuSampler totals the main thread's task time over the run's documents.
//
// Performance.getMetrics' TaskDuration starts from zero with each new document, and a document
// gone cannot be asked any more; NavigationStart tells the documents apart. So the sampler
// keeps the largest TaskDuration seen per NavigationStart and sums them. The samples that
// matter are taken before each navigate step, while each main-frame document request is
// paused (the leaving document is still there and has run its last task: see
// beforeNavigation) and at the end of the run. A sample every cpuInterval besides covers
// documents replaced without a request that Fetch can pause (the back-forward cache, a service
// worker's answer), up to their last interval.
type cpuSampler struct {
	page *rod.Page
	done chan struct{}

	mu   sync.Mutex
	docs map[float64]float64 // NavigationStart → TaskDuration, in seconds
}

// cpuInterval is how often the sampler asks besides. Each getMetrics call costs the renderer
// about 0.2 ms of task time (measured: 100 calls added 20.7 ms), which counts in TaskDuration.
const cpuInterval = 250 * time.Millisecond

func newCPUSampler(page *rod.Page) *cpuSampler {
	return &cpuSampler{page: page, done: make(chan struct{}), docs: map[float64]float64{}}
}

func (c *cpuSampler) loop(ctx context.Context) {
	defer close(c.done)
	t := time.NewTicker(cpuInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A renderer busy with a long task answers when the task ends; don't wait forever.
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c.sample(sctx)
		cancel()
	}
}

// sample asks for the current document's TaskDuration. Errors (the document is being replaced,
// ctx ended) only mean no sample.
func (c *cpuSampler) sample(ctx context.Context) {
	res, err := proto.PerformanceGetMetrics{}.Call(c.page.Context(ctx))
	if err != nil {
		return
	}
	var nav, task float64
	var haveTask bool
	for _, m := range res.Metrics {
		switch m.Name {
		case "NavigationStart":
			nav = m.Value
		case "TaskDuration":
			task, haveTask = m.Value, true
		}
	}
	if !haveTask {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.docs[nav] = max(c.docs[nav], task)
}

// total is the task time over every document sampled, in milliseconds.
func (c *cpuSampler) total() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s float64
	for _, v := range c.docs {
		s += v
	}
	return s * 1000
}

// emulate makes the page a desktop (1350x940) or a phone (412x823 at 1.75x, touch, a mobile
// user agent): Lighthouse's two form factors, so that journeys and audits see the same page.
// The user agent is the browser's own without "Headless", which some sites turn away, and
// with the lab mark (browser.LabUserAgent), so that the run is not counted as a real user.
func emulate(p *rod.Page, device string) error {
	v, err := proto.BrowserGetVersion{}.Call(p.Browser())
	if err != nil {
		return err
	}
	if device == DeviceMobile {
		version := v.Product[strings.IndexByte(v.Product, '/')+1:]
		major, _, _ := strings.Cut(version, ".")
		// Lighthouse's phone, with the reduced user agent's version (major.0.0.0).
		ua := "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" +
			major + ".0.0.0 Mobile Safari/537.36"
		touchPoints := 5
		for _, req := range []proto.Request{
			proto.EmulationSetDeviceMetricsOverride{Width: 412, Height: 823, DeviceScaleFactor: 1.75, Mobile: true,
				ScreenOrientation: &proto.EmulationScreenOrientation{Type: proto.EmulationScreenOrientationTypePortraitPrimary}},
			proto.EmulationSetTouchEmulationEnabled{Enabled: true, MaxTouchPoints: &touchPoints},
			proto.EmulationSetUserAgentOverride{UserAgent: browser.LabUserAgent(ua), Platform: "Linux armv8l"},
		} {
			if _, err := p.Call(p.GetContext(), string(p.SessionID), req.ProtoReq(), req); err != nil {
				return err
			}
		}
		return nil
	}
	for _, req := range []proto.Request{
		proto.EmulationSetDeviceMetricsOverride{Width: 1350, Height: 940, DeviceScaleFactor: 1},
		proto.EmulationSetUserAgentOverride{UserAgent: browser.LabUserAgent(strings.Replace(v.UserAgent, "HeadlessChrome/", "Chrome/", 1))},
	} {
		if _, err := p.Call(p.GetContext(), string(p.SessionID), req.ProtoReq(), req); err != nil {
			return err
		}
	}
	return nil
}
