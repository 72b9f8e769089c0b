package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// Proxy is a forward HTTP proxy on 127.0.0.1 that connects only where its [Guard] allows. It
// tunnels CONNECT requests (https and wss; Chromium tunnels ws too) and forwards plain
// absolute-URI HTTP requests. A refused target gets a 403 and is recorded, so that a worker can
// say which of a page's connections was refused.
type Proxy struct {
	guard     Guard
	log       *slog.Logger
	ln        net.Listener
	srv       *http.Server
	transport *http.Transport
	forward   *httputil.ReverseProxy

	mu       sync.Mutex
	closed   bool
	failures []dialFailure
	logged   map[string]bool // refused targets already logged
	dials    []dialRecord
	tunnels  map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// dialFailure is one connection the proxy could not open, refused or failed.
type dialFailure struct {
	Target string // host:port
	At     time.Time
	Err    error
}

// dialRecord is one connection the proxy opened to a target, with the time its resolution and
// connect took, so that a document's timing can be given back the DNS and connect time
// that happened here rather than in Chromium.
type dialRecord struct {
	Target string // host:port
	URL    string // the forwarded request's URL; empty for a CONNECT tunnel
	Start  time.Time
	Stats  dialStats
}

// Bounds on what a proxy remembers: a page that retries a refused host forever must not grow
// the worker's memory.
const (
	maxFailures = 64
	maxDials    = 512
)

// StartProxy starts a guarded proxy on 127.0.0.1 on a free port. log may be nil.
func StartProxy(g Guard, log *slog.Logger) (*Proxy, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{guard: g, log: log, ln: ln, logged: map[string]bool{}, tunnels: map[net.Conn]struct{}{}}
	p.transport = &http.Transport{
		Proxy:                  nil, // the guard must see the target's address, never a proxy's
		DialContext:            p.dialForward,
		MaxIdleConnsPerHost:    6,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		// Chromium asked for what it wants; the proxy must not add gzip and decode behind it.
		DisableCompression: true,
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The request is already absolute; keep it as Chromium sent it. Rewrite (unlike
			// Director) adds no X-Forwarded-* headers, so a target sees a browser, not a proxy.
			pr.Out.Host = pr.In.Host
			// The guarded dial reads the URL back, so that the connection it records can be
			// matched to the document's request.
			pr.Out = pr.Out.WithContext(context.WithValue(pr.Out.Context(), forwardURLKey{}, pr.In.URL.String()))
		},
		Transport: p.transport,
		// Pass bytes on as they come, so that Chromium's responseStart and responseEnd are
		// the target's and not the proxy's buffering.
		FlushInterval: -1,
		ErrorHandler:  p.forwardError,
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("guarded proxy stopped", "err", err)
		}
	}()
	return p, nil
}

type forwardURLKey struct{}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy's address as Chromium's --proxy-server takes it.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Refused lists the connections the guard refused, oldest first, each as
// "host:port: refused: host resolves to a private address (10.0.0.1)". Repeats are listed once.
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, f := range p.failures {
		if !errors.Is(f.Err, ErrForbiddenTarget) {
			continue
		}
		s := f.Target + ": " + Reason(f.Err)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// failureSince returns the latest failure to reach target since t, if any.
func (p *Proxy) failureSince(target string, t time.Time) (dialFailure, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.failures) - 1; i >= 0; i-- {
		f := p.failures[i]
		if f.At.Before(t) {
			break
		}
		if f.Target == target {
			return f, true
		}
	}
	return dialFailure{}, false
}

// dialsSince returns the connections opened since t.
func (p *Proxy) dialsSince(t time.Time) []dialRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []dialRecord
	for _, d := range p.dials {
		if !d.Start.Before(t) {
			out = append(out, d)
		}
	}
	return out
}

// recordFailure keeps a failure and says whether it is the first refusal of target, the one
// worth a log line (a page may retry a refused host many times).
func (p *Proxy) recordFailure(target string, err error) (firstRefusal bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(err, ErrForbiddenTarget) && !p.logged[target] && len(p.logged) < maxFailures {
		p.logged[target] = true
		firstRefusal = true
	}
	if len(p.failures) == maxFailures {
		// Keep the first refusals (what a report needs) and the latest (what a load needs).
		copy(p.failures[maxFailures/2:], p.failures[maxFailures/2+1:])
		p.failures = p.failures[:maxFailures-1]
	}
	p.failures = append(p.failures, dialFailure{Target: target, At: time.Now(), Err: err})
	return firstRefusal
}

func (p *Proxy) recordDial(d dialRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dials) == maxDials {
		p.dials = append(p.dials[:0], p.dials[maxDials/2:]...)
	}
	p.dials = append(p.dials, d)
}

// dial connects to target through the guard and records the outcome.
func (p *Proxy) dial(ctx context.Context, target, url string) (net.Conn, error) {
	start := time.Now()
	conn, st, err := p.guard.dial(ctx, "tcp", target)
	if err != nil {
		if p.recordFailure(target, err) {
			p.log.Warn("guarded proxy refused a connection", "target", target, "err", err)
		} else if !errors.Is(err, ErrForbiddenTarget) {
			p.log.Debug("guarded proxy could not connect", "target", target, "err", err)
		}
		return nil, err
	}
	p.recordDial(dialRecord{Target: target, URL: url, Start: start, Stats: st})
	return conn, nil
}

func (p *Proxy) dialForward(ctx context.Context, network, addr string) (net.Conn, error) {
	url, _ := ctx.Value(forwardURLKey{}).(string)
	return p.dial(ctx, addr, url)
}

// ServeHTTP serves one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		// Only Chromium talks to this proxy, and only this way: anything else is not for it.
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	p.forward.ServeHTTP(w, r)
}

func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && !errors.Is(err, ErrForbiddenTarget) {
		return // Chromium gave up on the request; nobody reads an answer
	}
	proxyError(w, err)
}

// proxyError answers for a target the proxy could not reach: 403 for a refusal, 502 for
// anything else, marked so that a page load can tell the proxy's answer from the target's.
func proxyError(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, ErrForbiddenTarget) {
		status = http.StatusForbidden
	}
	w.Header().Set(proxyErrorHeader, "1")
	http.Error(w, err.Error(), status)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	target := r.Host
	if _, port, err := net.SplitHostPort(target); err != nil || port == "" {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.dial(ctx, target, "")
	cancel()
	if err != nil {
		proxyError(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		p.untrack(client, upstream)
		p.wg.Done()
		return
	}
	go func() {
		defer p.wg.Done()
		done := make(chan struct{}, 2)
		go func() {
			// buf may already hold the first bytes Chromium sent after the CONNECT.
			_, _ = io.Copy(upstream, buf.Reader)
			done <- struct{}{}
		}()
		go func() {
			_, _ = io.Copy(client, upstream)
			done <- struct{}{}
		}()
		// When either side ends, end both: browsers never half-close a tunnel, and a
		// half-open one would only hold a goroutine and a socket.
		<-done
		p.untrack(client, upstream)
		<-done
	}()
}

// track registers a tunnel's connections so that Close can end them and wait for it (the
// caller calls p.wg.Done when the tunnel is over); it refuses once the proxy is closed. The
// WaitGroup is incremented under the lock that Close takes first, so never after Close waits.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	for _, c := range conns {
		delete(p.tunnels, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Close stops the proxy and ends every connection through it, tunnels included (net/http does
// not track hijacked connections).
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var open []net.Conn
	for c := range p.tunnels {
		open = append(open, c)
	}
	p.mu.Unlock()

	err := p.srv.Close()
	for _, c := range open {
		_ = c.Close()
	}
	p.transport.CloseIdleConnections()
	p.wg.Wait()
	if err != nil && !strings.Contains(err.Error(), "use of closed network connection") {
		return fmt.Errorf("close proxy: %w", err)
	}
	return nil
}
