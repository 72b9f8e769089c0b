package browser

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func startProxy(t *testing.T, g Guard) *Proxy {
	t.Helper()
	p, err := StartProxy(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// proxiedClient returns a client that sends everything through p (Go's http.ProxyURL, unlike
// ProxyFromEnvironment, proxies loopback too) and trusts srv's certificate.
func proxiedClient(p *Proxy, srv *httptest.Server) *http.Client {
	proxyURL, _ := url.Parse(p.URL())
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	if srv != nil && srv.TLS != nil {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func countingServer(t *testing.T, tlsServer bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Proxy-Connection") != "" {
			http.Error(w, "proxy headers leaked", http.StatusTeapot)
			return
		}
		io.WriteString(w, "hello "+r.URL.Path)
	})
	var srv *httptest.Server
	if tlsServer {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestProxyRefusesLoopback(t *testing.T) {
	for _, tlsServer := range []bool{false, true} {
		srv, hits := countingServer(t, tlsServer)
		p := startProxy(t, Guard{})
		res, err := proxiedClient(p, srv).Get(srv.URL + "/x")
		if tlsServer {
			// Go's transport reports a refused CONNECT as an error carrying the status.
			if err == nil || !strings.Contains(err.Error(), "Forbidden") {
				t.Errorf("https through a refusing proxy: %v", err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden || res.Header.Get(proxyErrorHeader) == "" || !strings.Contains(string(body), "loopback") {
				t.Errorf("http through a refusing proxy: %d %q", res.StatusCode, body)
			}
		}
		if n := hits.Load(); n != 0 {
			t.Errorf("tls=%v: the target was reached %d times", tlsServer, n)
		}
		refused := p.Refused()
		host := strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://")
		if len(refused) != 1 || !strings.HasPrefix(refused[0], host+": refused: 127.0.0.1 is a loopback address") {
			t.Errorf("tls=%v: refused %q", tlsServer, refused)
		}
	}
}

func TestProxyAllowsLoopbackWhenAllowed(t *testing.T) {
	for _, tlsServer := range []bool{false, true} {
		srv, hits := countingServer(t, tlsServer)
		p := startProxy(t, Guard{AllowPrivate: true})
		c := proxiedClient(p, srv)
		for i := 0; i < 2; i++ {
			res, err := c.Get(srv.URL + "/x")
			if err != nil {
				t.Fatalf("tls=%v: %v", tlsServer, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || string(body) != "hello /x" {
				t.Errorf("tls=%v: %d %q", tlsServer, res.StatusCode, body)
			}
		}
		if hits.Load() != 2 {
			t.Errorf("tls=%v: %d hits", tlsServer, hits.Load())
		}
		if r := p.Refused(); len(r) != 0 {
			t.Errorf("refusals recorded: %q", r)
		}
		// The proxy recorded the connections it opened, with the URL of a forwarded request.
		dials := p.dialsSince(time.Time{})
		if len(dials) == 0 || dials[0].Target != strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://") {
			t.Errorf("tls=%v: dials %+v", tlsServer, dials)
		} else if !tlsServer && dials[0].URL != srv.URL+"/x" {
			t.Errorf("forwarded dial recorded URL %q", dials[0].URL)
		}
	}
}

// connect sends a raw CONNECT to the proxy and returns the connection and the status line.
func connect(t *testing.T, p *Proxy, target string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	res, err := http.ReadResponse(r, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, r, res.Status
}

func TestProxyRefusesLinkLocalEvenWhenPrivateAllowed(t *testing.T) {
	p := startProxy(t, Guard{AllowPrivate: true})
	_, _, status := connect(t, p, "169.254.169.254:80")
	if !strings.HasPrefix(status, "403") {
		t.Errorf("CONNECT 169.254.169.254: %s", status)
	}
	res, err := proxiedClient(p, nil).Get("http://169.254.169.254/latest/meta-data/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("GET 169.254.169.254: %d", res.StatusCode)
	}
	if r := p.Refused(); len(r) != 1 || !strings.Contains(r[0], "169.254.169.254:80: refused: 169.254.169.254 is a link-local address") {
		t.Errorf("refused %q", r)
	}
}

func TestProxyRejectsNonProxyRequests(t *testing.T) {
	p := startProxy(t, Guard{AllowPrivate: true})
	res, err := http.Get(p.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("origin-form request: %d", res.StatusCode)
	}
}

func TestProxyCloseEndsTunnels(t *testing.T) {
	// An echo server the tunnel leads to.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	p := startProxy(t, Guard{AllowPrivate: true})
	c, r, status := connect(t, p, ln.Addr().String())
	if !strings.HasPrefix(status, "200") {
		t.Fatalf("CONNECT: %s", status)
	}
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("echo through the tunnel: %q, %v", line, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned after the tunnel's goroutines ended, so the client side is closed now.
	if _, err := r.ReadString('\n'); !errors.Is(err, io.EOF) && !isClosedErr(err) {
		t.Errorf("read after Close: %v, want EOF", err)
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
}

func isClosedErr(err error) bool {
	return err != nil && (errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset by peer"))
}

// A name the guard cannot resolve is a 502 marked as the proxy's, and the failure is kept for
// the page load to explain.
func TestProxyRecordsDialFailures(t *testing.T) {
	p := startProxy(t, Guard{})
	res, err := proxiedClient(p, nil).Get("http://openvitals-test.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || res.Header.Get(proxyErrorHeader) == "" {
		t.Errorf("unresolvable target: %d", res.StatusCode)
	}
	f, ok := p.failureSince("openvitals-test.invalid:80", time.Time{})
	if !ok || netReason(f.Err) != "net::ERR_NAME_NOT_RESOLVED" {
		t.Errorf("failure %+v (%v)", f, ok)
	}
	if len(p.Refused()) != 0 {
		t.Errorf("a DNS failure listed as a refusal: %q", p.Refused())
	}
}
