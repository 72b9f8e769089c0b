package browser

import (
	"errors"
	"math"
	"net"
	"net/url"
	"syscall"
	"time"
)

// Timing is the timing of one document load, as Navigation Timing names its phases, in
// milliseconds.
//
// Chromium reaches every target through the guarded proxy, so it never resolves a target's
// name or opens a connection to it: those happen in the proxy. The proxy times them, and
// DocumentTiming hands that time back to the phases where a direct load would have spent it:
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
// session's proxy, with the proxy's share moved to where a direct load spends it: the proxy's
// resolution of the host into DNS (out of Connect for https,
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
