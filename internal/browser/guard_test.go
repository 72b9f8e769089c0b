package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		addr         string
		strict, priv bool // allowed by the strict and by the AllowPrivate guard
		kind         string
	}{
		{"127.0.0.1", false, true, "loopback"},
		{"127.8.9.10", false, true, "loopback"},
		{"::1", false, true, "loopback"},
		{"::ffff:127.0.0.1", false, true, "loopback"},
		{"10.0.0.1", false, true, "private"},
		{"172.16.5.4", false, true, "private"},
		{"192.168.1.1", false, true, "private"},
		{"fd00::2", false, true, "private"},
		{"169.254.169.254", false, false, "link-local"},
		{"::ffff:169.254.169.254", false, false, "link-local"},
		{"169.254.0.1", false, false, "link-local"},
		{"fe80::1", false, false, "link-local"},
		{"0.0.0.0", false, false, "unspecified"},
		{"::", false, false, "unspecified"},
		{"100.64.0.1", false, false, "special-purpose"},
		{"239.1.2.3", false, false, "multicast"},
		{"224.0.0.1", false, false, "multicast"}, // link-local multicast: multicast first
		{"ff02::1", false, false, "multicast"},
		{"192.0.2.1", false, false, "special-purpose"},
		{"93.184.215.14", true, true, ""},
		{"1.1.1.1", true, true, ""},
		{"2606:4700:4700::1111", true, true, ""},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		for _, g := range []Guard{{}, {AllowPrivate: true}} {
			want := c.strict
			if g.AllowPrivate {
				want = c.priv
			}
			err := g.CheckAddr(ip)
			if want {
				if err != nil {
					t.Errorf("AllowPrivate=%v: %s refused: %v", g.AllowPrivate, c.addr, err)
				}
				continue
			}
			var refused *RefusedError
			if !errors.Is(err, ErrForbiddenTarget) || !errors.As(err, &refused) {
				t.Errorf("AllowPrivate=%v: %s allowed (err %v)", g.AllowPrivate, c.addr, err)
				continue
			}
			if refused.Kind != c.kind {
				t.Errorf("%s: kind %q, want %q", c.addr, refused.Kind, c.kind)
			}
		}
	}
}

// listen returns a TCP listener on addr that counts the connections it accepts.
func listen(t *testing.T, addr string) (net.Listener, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, &accepted
}

func TestDialRefusesLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, _ := listen(t, addr)
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		targets := []string{ln.Addr().String()}
		if host == "127.0.0.1" {
			// A name that resolves to loopback is refused after resolution.
			targets = append(targets, net.JoinHostPort("localhost", port))
		}
		for _, target := range targets {
			_, err := Guard{}.DialContext(context.Background(), "tcp", target)
			var refused *RefusedError
			if !errors.Is(err, ErrForbiddenTarget) || !errors.As(err, &refused) {
				t.Fatalf("dial %s: %v, want a refusal", target, err)
			}
			if refused.Kind != "loopback" || !strings.Contains(err.Error(), "loopback") {
				t.Errorf("dial %s: %v", target, err)
			}
			if h, _, _ := net.SplitHostPort(target); h == "localhost" && !strings.Contains(err.Error(), "refused: localhost resolves to a loopback address") {
				t.Errorf("dial %s: %q does not name the host", target, err)
			}

			conn, err := Guard{AllowPrivate: true}.DialContext(context.Background(), "tcp", target)
			if err != nil {
				t.Fatalf("AllowPrivate: dial %s: %v", target, err)
			}
			conn.Close()
		}
	}
}

// The raw net.Dialer path: Control runs on the socket before connect(2), so a refusal there
// means nothing was sent to the address. A link-local address cannot be reached from here; had
// the guard let the dial through, the error would be a timeout or "unreachable", not a
// *RefusedError.
func TestControlRefusesBeforeConnecting(t *testing.T) {
	ln, accepted := listen(t, "127.0.0.1:0")
	for _, g := range []Guard{{}, {AllowPrivate: true}} {
		_, err := g.Dialer().DialContext(context.Background(), "tcp", "169.254.169.254:80")
		var refused *RefusedError
		if !errors.As(err, &refused) || !errors.Is(err, ErrForbiddenTarget) || refused.Kind != "link-local" {
			t.Errorf("AllowPrivate=%v: dial 169.254.169.254: %v, want a link-local refusal", g.AllowPrivate, err)
		}
		_, err = g.DialContext(context.Background(), "tcp", "169.254.169.254:80")
		if !errors.As(err, &refused) || refused.Host != "169.254.169.254" {
			t.Errorf("AllowPrivate=%v: DialContext 169.254.169.254: %v", g.AllowPrivate, err)
		}
	}
	if _, err := (Guard{}).Dialer().DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("raw dialer reached loopback: %v", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections from a refused dial", n)
	}
	if err := (Guard{}).Control("udp4", "8.8.8.8:53", nil); !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("UDP allowed: %v", err)
	}
	if err := (Guard{}).Control("tcp4", "8.8.8.8:53", nil); err != nil {
		t.Errorf("public TCP refused: %v", err)
	}
}

func TestCheckHost(t *testing.T) {
	ctx := context.Background()
	if err := (Guard{}).CheckHost(ctx, "localhost"); !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("localhost: %v", err)
	}
	if err := (Guard{AllowPrivate: true}).CheckHost(ctx, "localhost"); err != nil {
		t.Errorf("AllowPrivate localhost: %v", err)
	}
	if err := (Guard{AllowPrivate: true}).CheckHost(ctx, "169.254.169.254"); !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("AllowPrivate 169.254.169.254: %v", err)
	}
	var dnsErr *net.DNSError
	if err := (Guard{}).CheckHost(ctx, "openvitals-test.invalid"); !errors.As(err, &dnsErr) {
		t.Errorf("unresolvable name: %v, want a DNS error", err)
	}
}

func TestHTTPClient(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/metadata" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	// The environment's proxy must not be used: it would reach the target unchecked.
	t.Setenv("HTTP_PROXY", "http://192.0.2.1:3128")
	t.Setenv("http_proxy", "http://192.0.2.1:3128")

	_, err := NewHTTPClient(Guard{}).Get(srv.URL)
	if !errors.Is(err, ErrForbiddenTarget) || !strings.Contains(err.Error(), "refused: 127.0.0.1 is a loopback address") {
		t.Errorf("strict client: %v, want a refusal", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server was reached %d times through a refusing client", n)
	}

	c := NewHTTPClient(Guard{AllowPrivate: true})
	res, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("AllowPrivate client: %v", err)
	}
	body, err := ReadLimited(res.Body, MaxBodyBytes)
	res.Body.Close()
	if err != nil || string(body) != "hello" {
		t.Errorf("body %q, %v", body, err)
	}

	// A redirect is dialed through the guard too: link-local stays refused.
	_, err = c.Get(srv.URL + "/metadata")
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Kind != "link-local" {
		t.Errorf("redirect to 169.254.169.254: %v, want a link-local refusal", err)
	}
}

func TestReadLimited(t *testing.T) {
	b, err := ReadLimited(strings.NewReader("12345"), 5)
	if err != nil || string(b) != "12345" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if _, err := ReadLimited(strings.NewReader("123456"), 5); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

// TestReasonHidesResolverAndAddresses shows the messages callers get for targets that cannot be
// reached: the host and what happened, never the resolver's address or the addresses a name
// resolved to (those stay in the error, for the log).
func TestReasonHidesResolverAndAddresses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		host, want, hidden string
	}{
		{"localhost", "refused: the address of localhost is not public", "127.0.0.1"},
		{"no-such-host.invalid", "no-such-host.invalid: the host does not resolve", ":53"},
		{"127.0.0.1", "refused: 127.0.0.1 is a loopback address", ""},
	} {
		err := Guard{}.CheckHost(ctx, tc.host)
		if err == nil {
			t.Fatalf("%s: not refused", tc.host)
		}
		got := Reason(err)
		if got != tc.want || tc.hidden != "" && strings.Contains(got, tc.hidden) {
			t.Errorf("Reason(%v) = %q, want %q", err, got, tc.want)
		}
	}
	wrapped := fmt.Errorf("html validation: %w", &net.DNSError{Err: "no such host", Name: "example.com", Server: "10.255.255.53:53", IsNotFound: true})
	if got := Reason(wrapped); got != "example.com: the host does not resolve" {
		t.Errorf("Reason(%v) = %q", wrapped, got)
	}
	if got := Reason(errors.New("lighthouse: NO_FCP")); got != "lighthouse: NO_FCP" {
		t.Errorf("another error's message changed: %q", got)
	}
}
