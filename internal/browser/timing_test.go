package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serverDelay is the handler's deliberate wait before the document's first byte.
const serverDelay = 50 * time.Millisecond

type site struct {
	*httptest.Server
	hits atomic.Int32
}

// testSite serves a small fixture site on 127.0.0.1.
func testSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(serverDelay)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>fixture</title><p>%s</p>", strings.Repeat("lorem ipsum ", 2000))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		http.Redirect(w, r, "/", http.StatusFound)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	mux.HandleFunc("/metadata-image", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>x</title><img src="http://169.254.169.254/latest/meta-data/x.png">`)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func timingCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestBrowserCannotReachLoopbackByDefault(t *testing.T) {
	s := launch(t, Guard{})
	plain := testSite(t)
	var tlsHits atomic.Int32
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tlsHits.Add(1) }))
	defer secure.Close()
	_, port, _ := net.SplitHostPort(plain.Listener.Addr().String())

	for _, target := range []string{
		plain.URL + "/",                           // forwarded http: the proxy answers 403
		secure.URL + "/",                          // CONNECT: the tunnel is refused
		"http://localhost:" + port + "/",          // a name resolving to loopback
		"http://[::1]:" + port + "/",              // IPv6 loopback (nothing listens: refused first)
		"http://169.254.169.254/latest/meta-data", // cloud metadata
	} {
		_, err := NavigationTiming(timingCtx(t), s, target)
		var lerr *LoadError
		if !errors.Is(err, ErrForbiddenTarget) || !errors.As(err, &lerr) || !strings.Contains(err.Error(), "refused: ") {
			t.Errorf("%s: %v, want a refusal", target, err)
			continue
		}
		t.Logf("%s: %v", target, err)
	}
	if n := plain.hits.Load() + tlsHits.Load(); n != 0 {
		t.Errorf("the servers were reached %d times", n)
	}
	_, err := NavigationTiming(timingCtx(t), s, "http://localhost:"+port+"/")
	if err == nil || !strings.Contains(err.Error(), "refused: localhost resolves to a loopback address (127.0.0.1)") {
		t.Errorf("localhost: %v", err)
	}
	refused := strings.Join(s.RefusedConnections(), "\n")
	for _, want := range []string{plain.Listener.Addr().String(), secure.Listener.Addr().String(), "localhost:" + port, "169.254.169.254:80"} {
		if !strings.Contains(refused, want+": refused") {
			t.Errorf("refused connections do not list %s:\n%s", want, refused)
		}
	}
}

func TestNavigationTiming(t *testing.T) {
	s := launch(t, Guard{AllowPrivate: true})
	srv := testSite(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	for _, c := range []struct{ target, final string }{
		{srv.URL + "/", srv.URL + "/"},
		{srv.URL + "/redirect", srv.URL + "/"},
		{"http://localhost:" + port + "/", "http://localhost:" + port + "/"},
	} {
		tm, err := NavigationTiming(timingCtx(t), s, c.target)
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		t.Logf("%s: %+v", c.target, tm)
		if tm.Status != http.StatusOK || tm.URL != c.final {
			t.Errorf("%s: status %d, URL %s; want 200, %s", c.target, tm.Status, tm.URL, c.final)
		}
		if tm.DNS < 0 || tm.Connect < 0 || tm.Transfer < 0 {
			t.Errorf("%s: negative timing %+v", c.target, tm)
		}
		if tm.Server < float64(serverDelay.Milliseconds()) {
			t.Errorf("%s: server time %.1f ms, below the handler's %v sleep", c.target, tm.Server, serverDelay)
		}
	}
	if r := s.RefusedConnections(); len(r) != 0 {
		t.Errorf("refusals with private targets allowed: %q", r)
	}
}

func TestNavigationTimingErrors(t *testing.T) {
	s := launch(t, Guard{AllowPrivate: true})
	srv := testSite(t)

	for path, status := range map[string]int{"/missing": http.StatusNotFound, "/error": http.StatusInternalServerError} {
		tm, err := NavigationTiming(timingCtx(t), s, srv.URL+path)
		var lerr *LoadError
		if !errors.As(err, &lerr) || lerr.Status != status || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", status)) {
			t.Errorf("%s: %v, want HTTP %d", path, err, status)
		}
		if tm.Status != status {
			t.Errorf("%s: timing status %d", path, tm.Status)
		}
		if errors.Is(err, ErrForbiddenTarget) {
			t.Errorf("%s: an HTTP error reported as a refusal", path)
		}
	}

	// Chromium only sees the proxy; the proxy's own failure is reported as Chromium would.
	for _, target := range []string{"http://openvitals-test.invalid/", "https://openvitals-test.invalid/"} {
		_, err := NavigationTiming(timingCtx(t), s, target)
		if err == nil || !strings.Contains(err.Error(), "net::ERR_NAME_NOT_RESOLVED") {
			t.Errorf("%s: %v, want net::ERR_NAME_NOT_RESOLVED", target, err)
		}
	}

	// Link-local stays refused with private targets allowed, for documents and subresources.
	_, err := NavigationTiming(timingCtx(t), s, "http://169.254.169.254/")
	if !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("169.254.169.254: %v", err)
	}
	tm, err := NavigationTiming(timingCtx(t), s, srv.URL+"/metadata-image")
	if err != nil || tm.Status != http.StatusOK {
		t.Errorf("page with a metadata image: %+v, %v", tm, err)
	}
	refused := s.RefusedConnections()
	if len(refused) != 1 || !strings.HasPrefix(refused[0], "169.254.169.254:80: refused: 169.254.169.254 is a link-local address") {
		t.Errorf("refused %q", refused)
	}

	// An allowed https target is tunnelled through to the server: Chromium gets as far as the
	// test server's self-signed certificate, and its own error is kept.
	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake Chromium aborts is expected
	secure.StartTLS()
	defer secure.Close()
	_, err = NavigationTiming(timingCtx(t), s, secure.URL+"/")
	var lerr *LoadError
	if !errors.As(err, &lerr) || !strings.HasPrefix(lerr.Reason, "net::ERR_CERT_") || errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("https with a self-signed certificate: %v", err)
	}

	if _, err := NavigationTiming(timingCtx(t), s, "file:///etc/passwd"); err == nil {
		t.Error("loaded a file: URL")
	}
}
