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

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
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

// load loads target once in a page of s (a browser context of its own: no cache, cookies or
// connections of an earlier load) and waits for its load event. It returns what the audit
// worker learns of a failed load: the proxy's reason it could not reach the target
// (Session.Unreached, a *LoadError), else Chromium's navigation error (a *LoadError with its
// net:: reason), else nil.
func load(t *testing.T, s *Session, target string) error {
	t.Helper()
	ctx := timingCtx(t)
	b := s.browser.Context(ctx)
	bc, err := proto.TargetCreateBrowserContext{ProxyServer: s.proxy.URL(), ProxyBypassList: "<-loopback>"}.Call(b)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proto.TargetDisposeBrowserContext{BrowserContextID: bc.BrowserContextID}.Call(b) }()
	isolated := *b
	isolated.BrowserContextID = bc.BrowserContextID
	page, err := isolated.Page(proto.TargetCreateTarget{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = page.Navigate(target)
	if err == nil {
		err = page.WaitLoad()
	}
	if unreached := s.Unreached(target, start); unreached != nil {
		return unreached
	}
	var nav *rod.NavigationError
	if errors.As(err, &nav) {
		return &LoadError{URL: target, Reason: nav.Reason}
	}
	return err
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
		err := load(t, s, target)
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
	err := load(t, s, "http://localhost:"+port+"/")
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

// TestLoadFailures: with private targets allowed, a fixture page loads; a name that does not
// resolve is reported as Chromium would report it (it sees only the proxy); link-local stays
// refused for documents and subresources; an allowed https target is tunnelled through (its
// certificate error is Chromium's own).
func TestLoadFailures(t *testing.T) {
	s := launch(t, Guard{AllowPrivate: true})
	srv := testSite(t)
	for _, target := range []string{srv.URL + "/", srv.URL + "/redirect"} {
		if err := load(t, s, target); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}

	for _, target := range []string{"http://openvitals-test.invalid/", "https://openvitals-test.invalid/"} {
		err := load(t, s, target)
		if err == nil || !strings.Contains(err.Error(), "net::ERR_NAME_NOT_RESOLVED") {
			t.Errorf("%s: %v, want net::ERR_NAME_NOT_RESOLVED", target, err)
		}
	}

	if err := load(t, s, "http://169.254.169.254/"); !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("169.254.169.254: %v", err)
	}
	if err := load(t, s, srv.URL+"/metadata-image"); err != nil {
		t.Errorf("page with a metadata image: %v", err)
	}
	refused := s.RefusedConnections()
	if len(refused) != 1 || !strings.HasPrefix(refused[0], "169.254.169.254:80: refused: 169.254.169.254 is a link-local address") {
		t.Errorf("refused %q", refused)
	}

	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	secure.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake Chromium aborts is expected
	secure.StartTLS()
	defer secure.Close()
	err := load(t, s, secure.URL+"/")
	var lerr *LoadError
	if !errors.As(err, &lerr) || !strings.HasPrefix(lerr.Reason, "net::ERR_CERT_") || errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("https with a self-signed certificate: %v", err)
	}
}
