package auditworker

import (
	"errors"
	"fmt"
	"net"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
)

// permanentRuntimeErrors are the Lighthouse runtimeError codes that say something of the
// document itself, which another attempt would find again: it answered 400 or more, its host
// does not resolve, its certificate is not valid, it is not HTML, its URL is not valid.
// Lighthouse's other codes (a page that hung, no first paint, a protocol timeout, Chromium's
// own troubles, a document request that failed without a status) may pass on a retry.
var permanentRuntimeErrors = map[string]bool{
	"ERRORED_DOCUMENT_REQUEST":  true,
	"DNS_FAILURE":               true,
	"INSECURE_DOCUMENT_REQUEST": true,
	"NOT_HTML":                  true,
	"INVALID_URL":               true,
}

// permanent tells whether an audit failed for a reason that another delivery of its message
// would meet again, so that it ends at once instead of after every delivery: the SSRF guard
// refuses the target, its host does not resolve, the document answers 400 or more (to
// Lighthouse or the validation) or is otherwise unusable as
// Lighthouse reports it. Anything else is transient: Chromium crashing, a timeout, a
// connection refused or reset, a resolver that timed out, Lighthouse failing for a reason of
// its own. The proxy's view of the target comes first: a document "answering" 502 because the
// proxy could not reach it is a connection failure, not the document's answer.
func permanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, browser.ErrForbiddenTarget) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsNotFound
	}
	var load *browser.LoadError
	if errors.As(err, &load) {
		// Err is the proxy's dial error (its refusal and an unresolved host were found above);
		// without it, a status says the document answered.
		return load.Err == nil && load.Status >= 400
	}
	var status *documentStatusError
	var login *loginError // retried, a wrong password could lock the account
	if errors.As(err, &status) || errors.As(err, &login) {
		return true
	}
	var runtime *lighthouse.RuntimeError
	if errors.As(err, &runtime) {
		return permanentRuntimeErrors[runtime.Code]
	}
	return errors.Is(err, errDocumentTooLarge)
}

// documentStatusError is the validation fetch's document answering 400 or more.
type documentStatusError struct {
	URL    string
	Status string
}

func (e *documentStatusError) Error() string { return fmt.Sprintf("%s answered %s", e.URL, e.Status) }

// errDocumentTooLarge is the validation fetch's document exceeding the validation limit.
var errDocumentTooLarge = errors.New("the document is larger than the validation limit")

// unreachedError is Lighthouse's runtime error for a document the guarded proxy could not
// reach, with the proxy's reason (net::ERR_CONNECTION_REFUSED). It unwraps to both, so that
// the proxy's dial error decides whether to retry, and says the reason only: the dial error
// names the address a host name resolved to, which a page's lastError does not show.
type unreachedError struct {
	runtime *lighthouse.RuntimeError
	load    *browser.LoadError
}

func (e *unreachedError) Error() string {
	return e.runtime.Error() + " (" + e.load.URL + ": " + e.load.Reason + ")"
}

func (e *unreachedError) Unwrap() []error { return []error{e.runtime, e.load} }
