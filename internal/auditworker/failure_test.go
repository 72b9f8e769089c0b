package auditworker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
)

// TestPermanentFailures: an audit failure is permanent (final on its first delivery) only when
// another delivery would meet it again: the guard's refusal and an unresolvable host (the
// guard's own errors for them), a document answering 400 or more, and Lighthouse's runtime
// errors about the document. The proxy's view decides over Lighthouse's: a 502 the proxy wrote
// for a target it could not connect to is a connection failure, retried like timeouts,
// crashes and Lighthouse's own troubles.
func TestPermanentFailures(t *testing.T) {
	ctx := context.Background()
	refused := browser.Guard{}.CheckHost(ctx, "127.0.0.1")
	unresolved := browser.Guard{}.CheckHost(ctx, "no-such-host.invalid")
	if refused == nil || unresolved == nil {
		t.Fatalf("the guard let through a loopback address (%v) or an unresolvable host (%v)", refused, unresolved)
	}
	rt := func(code string) *lighthouse.RuntimeError {
		return &lighthouse.RuntimeError{Code: code, Message: "..."}
	}
	runtime := func(code string) error { return fmt.Errorf("lighthouse: %w", rt(code)) }
	connRefused := &browser.LoadError{URL: "http://example.com/", Reason: "net::ERR_CONNECTION_REFUSED",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"guard refusal", refused, true},
		{"unresolvable host", unresolved, true},
		{"refusal behind a load", &browser.LoadError{URL: "http://a/", Status: 403, Err: refused}, true},
		{"document 404 to the timing load", &browser.LoadError{URL: "http://a/", Status: 404, Reason: "HTTP 404"}, true},
		{"document 500 to the validation fetch", fmt.Errorf("html validation: %w", &documentStatusError{URL: "http://a/", Status: "500 Internal Server Error"}), true},
		{"document too large", fmt.Errorf("html validation: %w", errDocumentTooLarge), true},
		{"lighthouse: document answered 404", runtime("ERRORED_DOCUMENT_REQUEST"), true},
		{"lighthouse: dns failure", runtime("DNS_FAILURE"), true},
		{"lighthouse: not html", runtime("NOT_HTML"), true},
		{"lighthouse: invalid certificate", runtime("INSECURE_DOCUMENT_REQUEST"), true},
		{"lighthouse: 502 of the proxy, connection refused", fmt.Errorf("lighthouse: %w", &unreachedError{runtime: rt("ERRORED_DOCUMENT_REQUEST"), load: connRefused}), false},
		{"lighthouse: tunnel of the proxy failed, host unresolved", &unreachedError{runtime: rt("FAILED_DOCUMENT_REQUEST"),
			load: &browser.LoadError{URL: "http://a/", Reason: "net::ERR_NAME_NOT_RESOLVED", Err: unresolved}}, true},
		{"lighthouse: page hung", runtime("PAGE_HUNG"), false},
		{"lighthouse: no first paint", runtime("NO_FCP"), false},
		{"lighthouse: protocol timeout", runtime("PROTOCOL_TIMEOUT"), false},
		{"lighthouse: document request failed", runtime("FAILED_DOCUMENT_REQUEST"), false},
		{"resolver timed out", &net.DNSError{Name: "example.com", IsTimeout: true}, false},
		{"connection refused to the timing load", connRefused, false},
		{"run timed out", fmt.Errorf("lighthouse: %w", context.DeadlineExceeded), false},
		{"chromium did not start", errors.New("launch browser: chromium exited"), false},
		{"no error", nil, false},
	} {
		if got := permanent(tc.err); got != tc.want {
			t.Errorf("%s (%v): permanent %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	// The page's lastError names the proxy's reason, not the address it dialed.
	unreached := &unreachedError{runtime: rt("ERRORED_DOCUMENT_REQUEST"), load: connRefused}
	if got, want := browser.Reason(unreached), "lighthouse runtime error ERRORED_DOCUMENT_REQUEST: ... (http://example.com/: net::ERR_CONNECTION_REFUSED)"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
}
