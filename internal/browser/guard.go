// Package browser runs the headless Chromium that the workers browse customer pages with, and
// keeps every connection it (and the workers' own HTTP client) makes behind an SSRF guard.
//
// The pieces:
//   - [Guard] decides which addresses may be dialed, after DNS resolution, using
//     code.dny.dev/ssrf's deny lists; [NewHTTPClient] is an http.Client that dials only through it.
//   - [Proxy] is an in-process forward proxy on 127.0.0.1 that dials only through the guard.
//     Chromium is pointed at it with no bypass at all, so the browser cannot reach anything the
//     guard refuses, whatever a page does.
//   - [Launch] starts one Chromium per job in its own temporary directory and process group,
//     and [Session.Close] leaves neither a process nor a file behind.
//   - [DocumentTiming] times a document from the phases of a load another tool drove
//     (Lighthouse's), with the proxy's share given back to DNS and connect.
package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrForbiddenTarget is matched (with errors.Is) by every refusal of the guard, wherever it
// surfaces: a dial, an HTTP request, a proxied connection or a page load.
var ErrForbiddenTarget = errors.New("forbidden target")

// Guard decides which network destinations the workers and their browser may connect to.
// The zero value is the production policy: only public unicast addresses.
type Guard struct {
	// AllowPrivate also allows loopback (127.0.0.0/8, ::1) and private (RFC 1918, fc00::/7)
	// addresses, so that a laptop or a test can audit pages served on 127.0.0.1. Link-local
	// addresses (169.254.0.0/16, fe80::/10), where cloud metadata services live, stay refused.
	AllowPrivate bool
}

// The two policies, built once: a Guardian is safe for concurrent use. Ports are not
// restricted (pages legitimately load from :8080 or :8443); the danger SSRF poses is the
// address, not the port.
var (
	strictGuardian = ssrf.New(ssrf.WithAnyPort())
	// Allowed prefixes are checked before ssrf's deny list, so these open exactly loopback and
	// private ranges; 169.254.0.0/16 and fe80::/10 are in neither and stay denied.
	privateGuardian = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(
			netip.MustParsePrefix("127.0.0.0/8"),
			netip.MustParsePrefix("10.0.0.0/8"),
			netip.MustParsePrefix("172.16.0.0/12"),
			netip.MustParsePrefix("192.168.0.0/16"),
		),
		ssrf.WithAllowedV6Prefixes(
			netip.MustParsePrefix("::1/128"),
			netip.MustParsePrefix("fc00::/7"),
		))
)

func (g Guard) guardian() *ssrf.Guardian {
	if g.AllowPrivate {
		return privateGuardian
	}
	return strictGuardian
}

// RefusedError is the guard's refusal of one address. It matches [ErrForbiddenTarget] and
// unwraps to code.dny.dev/ssrf's error.
type RefusedError struct {
	// Host is the name or address literal that was to be dialed, without the port; empty when
	// only the address is known (a refusal inside net.Dialer's Control).
	Host string
	// Addr is the refused address, as resolved.
	Addr netip.Addr
	// Kind says why: "loopback", "private", "link-local", "unspecified", "multicast" or
	// "special-purpose".
	Kind string

	cause error
}

// Error reads "refused: example.com resolves to a private address (10.0.0.1)", or
// "refused: 10.0.0.1 is a private address" when the host is the address itself.
func (e *RefusedError) Error() string {
	article := "a"
	if e.Kind == "unspecified" {
		article = "an"
	}
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("refused: %s is %s %s address", e.Addr, article, e.Kind)
	}
	return fmt.Sprintf("refused: %s resolves to %s %s address (%s)", e.Host, article, e.Kind, e.Addr)
}

// Public says the same without the addresses a host name resolved to, for API responses:
// "refused: the address of example.com is not public". A refused address literal is named as
// Error names it: the caller gave it.
func (e *RefusedError) Public() string {
	if e.Host == "" || e.Host == e.Addr.String() {
		return e.Error()
	}
	return fmt.Sprintf("refused: the address of %s is not public", e.Host)
}

// Reason says why a target could not be reached in words fit for an API response (a page's
// lastError, a run's error): what happened to which host, without the addresses it resolved
// to or the resolver that was asked. Those stay in err, for the log. An error of any other
// kind keeps its own message.
func Reason(err error) string {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused.Public()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		switch {
		case dns.IsNotFound:
			return dns.Name + ": the host does not resolve"
		case dns.IsTimeout:
			return dns.Name + ": resolving the host timed out"
		default:
			return dns.Name + ": the host could not be resolved"
		}
	}
	return err.Error()
}

// Is makes errors.Is(err, ErrForbiddenTarget) true for every refusal.
func (e *RefusedError) Is(target error) bool { return target == ErrForbiddenTarget }

// Unwrap returns the ssrf package's own error.
func (e *RefusedError) Unwrap() error { return e.cause }

// CheckAddr returns a *RefusedError if the guard refuses ip, else nil.
func (g Guard) CheckAddr(ip netip.Addr) error {
	// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) reach the IPv4 host: judge them as that host.
	// A zone (fe80::1%eth0) only ever qualifies a non-global address; dropping it keeps the
	// classification below simple, and ssrf refuses everything outside 2000::/3 anyway.
	ip = ip.Unmap().WithZone("")
	if err := g.guardian().SafeAddr(ip); err != nil {
		return &RefusedError{Addr: ip, Kind: addrKind(ip), cause: err}
	}
	return nil
}

func addrKind(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsMulticast():
		// Before link-local: 224.0.0.0/24 and ff02::/16 are link-local multicast, multicast
		// first of all.
		return "multicast"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.IsUnspecified():
		return "unspecified"
	default:
		return "special-purpose"
	}
}

// Control is a net.Dialer Control function: it runs after DNS resolution, on the socket about
// to connect, so it judges the exact address dialed. It allows only TCP.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s is not allowed", ErrForbiddenTarget, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrForbiddenTarget, address)
	}
	return g.CheckAddr(ap.Addr())
}

// Dialer returns a net.Dialer whose Control enforces the guard on every address it connects to.
// Prefer [Guard.DialContext], which also names the host in its refusals.
func (g Guard) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second, Control: g.Control}
}

// dialTimeout bounds one TCP connect; an unreachable address otherwise takes the kernel's
// two minutes.
const dialTimeout = 10 * time.Second

// DialContext connects to address ("host:port") over TCP if the guard allows it. It resolves
// the host itself and refuses it outright if any of its addresses is forbidden (a name that
// mixes public and private answers is a rebinding attempt, not a page), then dials the
// addresses in turn through [Guard.Dialer], whose Control checks each again at connect time.
// A refusal is a *RefusedError naming the host.
func (g Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	conn, _, err := g.dial(ctx, network, address)
	return conn, err
}

// dialStats is how long the guard's resolution and connection took; the proxy reports them
// because Chromium, behind it, never resolves or connects to a target itself.
type dialStats struct {
	DNS, Connect time.Duration
}

func (g Guard) dial(ctx context.Context, network, address string) (net.Conn, dialStats, error) {
	var st dialStats
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil, st, fmt.Errorf("%w: network %s is not allowed", ErrForbiddenTarget, network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, st, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, st, fmt.Errorf("dial %s: bad port", address)
	}
	start := time.Now()
	addrs, err := g.resolve(ctx, network, host)
	st.DNS = time.Since(start)
	if err != nil {
		return nil, st, err
	}
	d := g.Dialer()
	start = time.Now()
	var errs []error
	for _, ip := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			st.Connect = time.Since(start)
			return conn, st, nil
		}
		var refused *RefusedError
		if errors.As(err, &refused) {
			// Control refused what resolve allowed: only a change of policy could do that, but
			// the refusal must still name the host.
			r := *refused
			r.Host = host
			return nil, st, &r
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, st, errors.Join(errs...)
}

// resolve returns host's addresses (a literal is its own address) and refuses the host if any
// of them is forbidden.
func (g Guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if host == "" {
		// net.Dial(":80") means the local host.
		return nil, fmt.Errorf("%w: empty host", ErrForbiddenTarget)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := g.CheckAddr(ip); err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				refused.Host = host
			}
			return nil, err
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	family := "ip"
	switch network {
	case "tcp4":
		family = "ip4"
	case "tcp6":
		family = "ip6"
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, family, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	for i, ip := range addrs {
		addrs[i] = ip.Unmap()
		if err := g.CheckAddr(ip); err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				refused.Host = host
			}
			return nil, err
		}
	}
	return addrs, nil
}

// CheckHost resolves host (a name or an address literal, without port) and returns a
// *RefusedError if the guard would refuse it. The dial-time check is what protects; this lets a
// worker refuse a target with a clear error before it starts a browser for it.
func (g Guard) CheckHost(ctx context.Context, host string) error {
	_, err := g.resolve(ctx, "tcp", host)
	return err
}

// MaxBodyBytes is a default cap for reading a response body into memory.
const MaxBodyBytes = 16 << 20

// ErrBodyTooLarge is returned by [ReadLimited] when the body exceeds the limit.
var ErrBodyTooLarge = errors.New("body too large")

// ReadLimited reads r to the end but refuses to hold more than limit bytes: a target can send
// an endless body, and the workers must not run out of memory for it.
func ReadLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)
	}
	return b, nil
}

// Transport returns an HTTP transport whose every connection goes through g; its callers set
// its limits and timeouts. It never uses a proxy from the environment: the guard would then
// judge the proxy's address, and the proxy would reach the target unchecked.
func (g Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:             nil,
		DialContext:       g.DialContext,
		ForceAttemptHTTP2: true,
		IdleConnTimeout:   60 * time.Second,
	}
}

// NewHTTPClient returns an HTTP client for the workers' own requests to targets (fetching a
// document to validate, for example). Every connection, redirects included, goes through the
// guard (Transport).
func NewHTTPClient(g Guard) *http.Client {
	t := g.Transport()
	t.MaxIdleConns = 16
	t.TLSHandshakeTimeout, t.ResponseHeaderTimeout, t.ExpectContinueTimeout = 10*time.Second, 30*time.Second, time.Second
	t.MaxResponseHeaderBytes = 1 << 20
	return &http.Client{
		Transport: t,
		// A whole request, body included; callers wanting less pass a context deadline.
		Timeout: 60 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to unsupported scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
}
