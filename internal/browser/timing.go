package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// Timing is the Navigation Timing of one document load, in milliseconds.
//
// Chromium reaches every target through the guarded proxy, so it never resolves a target's
// name or opens a connection to it: those happen in the proxy. The proxy times them, and
// NavigationTiming hands that time back to the phases where a direct load would have spent it:
//   - https: Chromium's connect phase spans the proxy's resolution, its TCP connect and the TLS
//     handshake through the tunnel; the resolution moves from Connect to DNS.
//   - http: the proxy resolves and connects while Chromium waits for the response; both move
//     out of Server into DNS and Connect.
//
// What remains is the loopback hop to the proxy, well under a millisecond.
type Timing struct {
	// DNS is domainLookupEnd - domainLookupStart, plus the proxy's resolution of the host.
	DNS float64
	// Connect is connectEnd - connectStart (TLS included), adjusted as described above.
	Connect float64
	// Server is responseStart - requestStart: the wait for the first byte.
	Server float64
	// Transfer is responseEnd - responseStart.
	Transfer float64
	// Status is the document's HTTP status.
	Status int
	// URL is the document's final URL, after redirects.
	URL string
}

// LoadError is a page load that produced no usable document: the navigation failed, the guard
// refused the target, or the document's status is 400 or more.
type LoadError struct {
	// URL is the URL whose load failed: the last of any redirects, when known.
	URL string
	// Status is the document's HTTP status, when a document arrived; else 0.
	Status int
	// Reason is Chromium's network error (net::ERR_NAME_NOT_RESOLVED), "refused" or "HTTP 404".
	Reason string
	// Err is the cause behind Reason when the proxy knows it: a *RefusedError for a refusal,
	// the dial error for a target that could not be reached.
	Err error
}

// Error reads "load https://example.com/: HTTP 404", "load http://10.0.0.1/: refused: 10.0.0.1
// is a private address" or "load https://nx.example/: net::ERR_NAME_NOT_RESOLVED (lookup ...)".
func (e *LoadError) Error() string {
	switch {
	case errors.Is(e.Err, ErrForbiddenTarget):
		return "load " + e.URL + ": " + e.Err.Error()
	case e.Err != nil:
		return "load " + e.URL + ": " + e.Reason + " (" + e.Err.Error() + ")"
	default:
		return "load " + e.URL + ": " + e.Reason
	}
}

// Unwrap returns Err, so that errors.Is(err, ErrForbiddenTarget) finds a refusal.
func (e *LoadError) Unwrap() error { return e.Err }

// proxyErrorHeader marks the responses the proxy writes itself, so that a 403 or 502 from the
// proxy is not mistaken for the target's.
const proxyErrorHeader = "X-Openvitals-Proxy-Error"

// NavigationTiming loads target once in s, in a browser context of its own (empty cache,
// cookies and connections, so the load is cold even after Lighthouse has run in the same
// browser), waits for the load event, and reads the document's Navigation Timing entry. ctx
// bounds the whole load.
//
// A failed navigation, a refused target or a status of 400 or more returns a *LoadError; with
// a status, the Timing is returned too, filled as far as the load went.
func NavigationTiming(ctx context.Context, s *Session, target string) (Timing, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Timing{}, fmt.Errorf("navigation timing: %q is not an http(s) URL", target)
	}
	if s == nil || s.browser == nil || s.proxy == nil {
		return Timing{}, errors.New("navigation timing: no browser session")
	}
	b := s.browser.Context(ctx)
	// The proxy is passed again because a new context does not have to inherit the command
	// line's: better to state it than to trust it.
	bc, err := proto.TargetCreateBrowserContext{ProxyServer: s.proxy.URL(), ProxyBypassList: "<-loopback>"}.Call(b)
	if err != nil {
		return Timing{}, fmt.Errorf("navigation timing: browser context: %w", err)
	}
	defer func() {
		// Disposing of the context closes its page too; do it even when ctx is over.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = proto.TargetDisposeBrowserContext{BrowserContextID: bc.BrowserContextID}.Call(s.browser.Context(dctx))
	}()
	isolated := *b
	isolated.BrowserContextID = bc.BrowserContextID
	page, err := isolated.Page(proto.TargetCreateTarget{})
	if err != nil {
		return Timing{}, fmt.Errorf("navigation timing: new page: %w", err)
	}

	if err := MarkLab(page); err != nil {
		return Timing{}, fmt.Errorf("navigation timing: user agent: %w", err)
	}

	doc := &docWatch{frame: page.FrameID}
	events, stopEvents := page.WithCancel()
	defer stopEvents()
	wait := events.EachEvent(doc.requestWillBeSent, doc.responseReceived)
	go wait()

	// Forwarded (http) requests share the proxy's upstream connections: drop them so that this
	// load opens its own, as a first visit would.
	s.proxy.dropIdle()
	navStart := time.Now()
	if err := page.Navigate(target); err != nil {
		return Timing{}, navigationFailure(ctx, s, doc, target, navStart, err)
	}
	if err := page.WaitLoad(); err != nil {
		if ctx.Err() != nil {
			return Timing{}, fmt.Errorf("load %s: no load event: %w", target, ctx.Err())
		}
		return Timing{}, fmt.Errorf("load %s: waiting for the load event: %w", target, err)
	}

	raw, err := readNavigationEntry(page)
	if err != nil {
		return Timing{}, fmt.Errorf("load %s: %w", target, err)
	}
	ds := doc.snapshot()
	t := Timing{
		DNS:      nonNegative(raw.DomainLookupEnd - raw.DomainLookupStart),
		Connect:  nonNegative(raw.ConnectEnd - raw.ConnectStart),
		Server:   nonNegative(raw.ResponseStart - raw.RequestStart),
		Transfer: nonNegative(raw.ResponseEnd - raw.ResponseStart),
		Status:   raw.ResponseStatus,
		URL:      raw.Name,
	}
	if t.Status == 0 {
		t.Status = ds.status
	}
	if t.URL == "" {
		t.URL = firstNonEmpty(ds.responseURL, ds.requestURL, target)
	}
	addProxyTime(&t, raw, s.proxy.dialsSince(navStart))
	// Differences of doubles carry noise (4.399999999906868); microseconds are plenty.
	for _, v := range []*float64{&t.DNS, &t.Connect, &t.Server, &t.Transfer} {
		*v = math.Round(*v*1000) / 1000
	}

	if t.Status >= 400 {
		lerr := &LoadError{URL: t.URL, Status: t.Status, Reason: fmt.Sprintf("HTTP %d", t.Status)}
		if ds.fromProxy {
			// The proxy answered for a target it could not reach: say why, not "HTTP 403".
			if f, ok := s.proxy.failureSince(hostPort(t.URL), navStart); ok {
				lerr.Reason, lerr.Err = netReason(f.Err), f.Err
			}
		}
		return t, lerr
	}
	return t, nil
}

// navigationFailure explains a navigation that Chromium gave up on.
func navigationFailure(ctx context.Context, s *Session, doc *docWatch, target string, navStart time.Time, err error) error {
	ds := doc.snapshot()
	failedURL := firstNonEmpty(ds.requestURL, target)
	var nav *rod.NavigationError
	if !errors.As(err, &nav) {
		if ctx.Err() != nil {
			return fmt.Errorf("load %s: %w", target, ctx.Err())
		}
		return fmt.Errorf("load %s: %w", target, err)
	}
	lerr := &LoadError{URL: failedURL, Reason: nav.Reason}
	// Behind a proxy Chromium sees every failure to reach a target as the tunnel's
	// (net::ERR_TUNNEL_CONNECTION_FAILED); the proxy knows the real one.
	if f, ok := s.proxy.failureSince(hostPort(failedURL), navStart); ok {
		lerr.Reason, lerr.Err = netReason(f.Err), f.Err
	}
	return lerr
}

// netReason names a dial error the way Chromium names it when it dials itself.
func netReason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, ErrForbiddenTarget):
		return "refused"
	case errors.As(err, &dnsErr):
		return "net::ERR_NAME_NOT_RESOLVED"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "net::ERR_CONNECTION_REFUSED"
	case errors.Is(err, syscall.ECONNRESET):
		return "net::ERR_CONNECTION_RESET"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "net::ERR_ADDRESS_UNREACHABLE"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "net::ERR_CONNECTION_TIMED_OUT"
	default:
		return "net::ERR_CONNECTION_FAILED"
	}
}

// navigationEntry is what the page reports of its PerformanceNavigationTiming entry.
type navigationEntry struct {
	Name              string  `json:"name"`
	TimeOrigin        float64 `json:"timeOrigin"`
	DomainLookupStart float64 `json:"domainLookupStart"`
	DomainLookupEnd   float64 `json:"domainLookupEnd"`
	ConnectStart      float64 `json:"connectStart"`
	ConnectEnd        float64 `json:"connectEnd"`
	RequestStart      float64 `json:"requestStart"`
	ResponseStart     float64 `json:"responseStart"`
	ResponseEnd       float64 `json:"responseEnd"`
	ResponseStatus    int     `json:"responseStatus"`
}

const navigationEntryJS = `() => {
	const e = performance.getEntriesByType('navigation')[0];
	if (!e) return null;
	return {
		name: e.name, timeOrigin: performance.timeOrigin,
		domainLookupStart: e.domainLookupStart, domainLookupEnd: e.domainLookupEnd,
		connectStart: e.connectStart, connectEnd: e.connectEnd,
		requestStart: e.requestStart, responseStart: e.responseStart, responseEnd: e.responseEnd,
		responseStatus: e.responseStatus || 0,
	};
}`

func readNavigationEntry(page *rod.Page) (navigationEntry, error) {
	var e navigationEntry
	res, err := page.Eval(navigationEntryJS)
	if err != nil {
		return e, fmt.Errorf("read navigation timing: %w", err)
	}
	if res.Value.Nil() {
		return e, errors.New("the page has no navigation timing entry")
	}
	// rod has already parsed the value (gson's Unmarshal works on raw bytes only): re-encode.
	raw, err := res.Value.MarshalJSON()
	if err != nil {
		return e, fmt.Errorf("read navigation timing: %w", err)
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("read navigation timing: %w", err)
	}
	return e, nil
}

// addProxyTime moves the proxy's share of the load into the phases a direct load would have
// spent it in (see Timing).
func addProxyTime(t *Timing, e navigationEntry, dials []dialRecord) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return
	}
	target := hostPort(t.URL)
	wall := func(ms float64) time.Time {
		return time.UnixMicro(int64(math.Round((e.TimeOrigin + ms) * 1000)))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	switch u.Scheme {
	case "https":
		if e.ConnectEnd <= e.ConnectStart {
			return // the document came over a connection already open: nothing was resolved
		}
		d, ok := closestDial(dials, wall(e.ConnectStart), func(d dialRecord) bool { return d.Target == target && d.URL == "" })
		if !ok {
			return
		}
		dns := ms(d.Stats.DNS)
		t.DNS += dns
		t.Connect = nonNegative(t.Connect - dns)
	case "http":
		// Only a connection opened for this very request; a redirect's connection, reused by
		// the final request, was paid for before requestStart.
		d, ok := closestDial(dials, wall(e.RequestStart), func(d dialRecord) bool { return d.Target == target && d.URL == t.URL })
		if !ok {
			return
		}
		dns, connect := ms(d.Stats.DNS), ms(d.Stats.Connect)
		t.DNS += dns
		t.Connect += connect
		t.Server = nonNegative(t.Server - dns - connect)
	}
}

func closestDial(dials []dialRecord, at time.Time, match func(dialRecord) bool) (dialRecord, bool) {
	var best dialRecord
	var bestGap time.Duration = -1
	for _, d := range dials {
		if !match(d) {
			continue
		}
		gap := d.Start.Sub(at)
		if gap < 0 {
			gap = -gap
		}
		if bestGap < 0 || gap < bestGap {
			best, bestGap = d, gap
		}
	}
	return best, bestGap >= 0
}

// hostPort returns rawURL's host:port, the form the proxy records targets in.
func hostPort(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func nonNegative(v float64) float64 { return math.Max(0, v) }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// docWatch follows the main frame's document requests through Network events: the URL asked
// for (after redirects), and the status, URL and origin of the response.
type docWatch struct {
	frame proto.PageFrameID

	mu    sync.Mutex
	state docState
}

type docState struct {
	requestURL  string
	responseURL string
	status      int
	fromProxy   bool
}

func (w *docWatch) requestWillBeSent(e *proto.NetworkRequestWillBeSent) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != w.frame || e.Request == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state.requestURL = e.Request.URL
}

func (w *docWatch) responseReceived(e *proto.NetworkResponseReceived) {
	if e.Type != proto.NetworkResourceTypeDocument || e.FrameID != w.frame || e.Response == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state.responseURL = e.Response.URL
	w.state.status = e.Response.Status
	w.state.fromProxy = false
	for name := range e.Response.Headers {
		if strings.EqualFold(name, proxyErrorHeader) {
			w.state.fromProxy = true
		}
	}
}

func (w *docWatch) snapshot() docState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// Dials are the connections a session's proxy opened to targets in a span of time, kept past
// the session's end for DocumentTiming.
type Dials struct{ records []dialRecord }

// DialsSince returns what the session's proxy dialed since t.
func (s *Session) DialsSince(t time.Time) Dials {
	if s.proxy == nil {
		return Dials{}
	}
	return Dials{records: s.proxy.dialsSince(t)}
}

// DocumentPhases are a document request's phases as the browser recorded them in a load
// another tool drove (Lighthouse's, read from its DevTools log), in ms; a phase not made is 0.
type DocumentPhases struct {
	URL      string
	Status   int
	DNS      float64
	Connect  float64 // TLS included
	Wait     float64 // request sent to the first response byte
	Download float64
}

// DocumentTiming is the Timing of a document from the phases the browser recorded behind the
// session's proxy, with the proxy's share moved to where a direct load spends it, as
// NavigationTiming does: the proxy's resolution of the host into DNS (out of Connect for https,
// whose tunnel Chromium times as its connection), and for http its connection too, out of the
// wait (Chromium waits while the proxy dials). The dial used is the first to the document's
// host since dials began: a fresh session's first load of the document opens it.
func DocumentTiming(p DocumentPhases, dials Dials) Timing {
	t := Timing{DNS: p.DNS, Connect: p.Connect, Server: p.Wait, Transfer: p.Download, Status: p.Status, URL: p.URL}
	u, err := url.Parse(p.URL)
	if err != nil {
		return t
	}
	target := hostPort(p.URL)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	first := func(match func(dialRecord) bool) (dialRecord, bool) {
		var best dialRecord
		found := false
		for _, d := range dials.records {
			if match(d) && (!found || d.Start.Before(best.Start)) {
				best, found = d, true
			}
		}
		return best, found
	}
	switch u.Scheme {
	case "https":
		if t.Connect <= 0 {
			break // a connection already open: nothing was resolved for this request
		}
		if d, ok := first(func(d dialRecord) bool { return d.Target == target && d.URL == "" }); ok {
			dns := ms(d.Stats.DNS)
			t.DNS += dns
			t.Connect = nonNegative(t.Connect - dns)
		}
	case "http":
		if d, ok := first(func(d dialRecord) bool { return d.Target == target && d.URL == p.URL }); ok {
			dns, connect := ms(d.Stats.DNS), ms(d.Stats.Connect)
			t.DNS += dns
			t.Connect += connect
			t.Server = nonNegative(t.Server - dns - connect)
		}
	}
	for _, v := range []*float64{&t.DNS, &t.Connect, &t.Server, &t.Transfer} {
		*v = math.Round(*v*1000) / 1000
	}
	return t
}
