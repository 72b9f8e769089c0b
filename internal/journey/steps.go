package journey

import (
	"context"
	_ "embed"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
	"github.com/go-rod/rod/lib/utils"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/model/step"
)

// pollSleeper paces rod's retries while waiting for a selector or an element's state. rod's
// default backs off to a second between checks; a journey's duration would carry that slack.
func pollSleeper() utils.Sleeper {
	return utils.BackoffSleeper(50*time.Millisecond, 250*time.Millisecond, nil)
}

// do performs one step (other than wait) in the step's context, keeping ph up to date.
func (r *runner) do(ctx context.Context, st step.Step, ph *phase) error {
	p := r.page.Context(ctx).Sleeper(pollSleeper)
	if st.Type == step.Navigate {
		return r.navigate(ctx, p, st, ph)
	}
	// Counted before the action: the navigation it causes may commit before the action returns.
	mark := r.rec.navCount()
	if err := r.act(p, st, ph); err != nil {
		return err
	}
	if st.WaitForNavigation {
		return r.waitNavigation(ctx, st, mark, ph)
	}
	return nil
}

// act performs the action of a click, type, select, hover, scroll or waitForSelector step.
func (r *runner) act(p *rod.Page, st step.Step, ph *phase) error {
	if st.Type == step.Scroll && st.Target == "" {
		*ph = phaseAct
		_, err := p.Eval(scrollJS)
		return err
	}
	for {
		*ph = phaseFind
		el, err := p.Element(st.Target)
		if err != nil {
			return err
		}
		*ph = phaseReady
		err = r.actOn(p, el, st, ph)
		// The page replaced the element between finding it and acting on it (a framework
		// re-rendering): find it again. Never once input has been sent, which a retry would
		// repeat.
		if errors.Is(err, errDetached) && *ph == phaseReady && p.GetContext().Err() == nil {
			continue
		}
		return err
	}
}

// actOn performs the step's action on the element that matched.
func (r *runner) actOn(p *rod.Page, el *rod.Element, st step.Step, ph *phase) error {
	switch st.Type {
	case step.WaitForSelector:
		// Presence, as puppeteer's waitForSelector by default: Element has waited for it.
		return nil
	case step.Scroll:
		if _, err := ready(p, el, true, false, false); err != nil {
			return err
		}
		return proto.DOMScrollIntoViewIfNeeded{ObjectID: el.Object.ObjectID}.Call(p)
	case step.Click, step.Hover:
		// rod's Click and Hover drive the page's shared Mouse, whose calls use the context the
		// page was created with, not the step's: the events are sent here, under the step's limit.
		pt, err := ready(p, el, true, st.Type == step.Click, true)
		if err != nil {
			return err
		}
		*ph = phaseAct
		if st.Type == step.Hover {
			return mouse(p, proto.InputDispatchMouseEventTypeMouseMoved, *pt)
		}
		for _, t := range []proto.InputDispatchMouseEventType{
			proto.InputDispatchMouseEventTypeMouseMoved,
			proto.InputDispatchMouseEventTypeMousePressed,
			proto.InputDispatchMouseEventTypeMouseReleased,
		} {
			if err := mouse(p, t, *pt); err != nil {
				return err
			}
		}
		return nil
	case step.TypeText:
		if _, err := ready(p, el, true, true, false); err != nil {
			return err
		}
		*ph = phaseAct
		if err := (proto.DOMScrollIntoViewIfNeeded{ObjectID: el.Object.ObjectID}).Call(p); err != nil {
			return err
		}
		if _, err := el.Evaluate(rod.Eval(`() => this.focus()`).ByUser()); err != nil {
			return err
		}
		return typeText(p, st.Value)
	case step.Select:
		// Not visible: sites often hide the <select> behind a styled stand-in.
		if _, err := ready(p, el, false, true, false); err != nil {
			return err
		}
		*ph = phaseAct
		res, err := el.Evaluate(rod.Eval(selectJS, st.Value).ByUser())
		if err != nil {
			return err
		}
		if msg := res.Value.Str(); msg != "" {
			return failf("%s", msg)
		}
		return nil
	}
	return failf("unknown step type %q", st.Type)
}

// errDetached is an element that left the document after it matched.
var errDetached = errors.New("the element left the document")

// notReady is a wait for an element's state that ran out of time, with the latest reason.
type notReady struct {
	reason string
	err    error
}

func (e *notReady) Error() string { return e.reason + ": " + e.err.Error() }
func (e *notReady) Unwrap() error { return e.err }

// stateJS says what keeps an element from being acted on: "detached", "hidden", "disabled",
// or "" for nothing.
//
//go:embed state.js
var stateJS string

// ready waits until el is visible and enabled (as asked) and, for pointer, can be pointed at:
// scrolled into view and not covered by another element. It returns the point to aim at. rod's
// own waits never end for an element that left the document; this one returns errDetached.
func ready(p *rod.Page, el *rod.Element, visible, enabled, pointer bool) (*proto.Point, error) {
	var pt *proto.Point
	reason := ""
	err := utils.Retry(p.GetContext(), pollSleeper(), func() (bool, error) {
		res, err := el.Evaluate(rod.Eval(stateJS, visible, enabled))
		if err != nil {
			return true, err
		}
		switch state := res.Value.Str(); state {
		case "detached":
			return true, errDetached
		case "hidden":
			reason = "it is not visible"
			return false, nil
		case "disabled":
			reason = "it is disabled"
			return false, nil
		}
		if !pointer {
			return true, nil
		}
		if err := (proto.DOMScrollIntoViewIfNeeded{ObjectID: el.Object.ObjectID}).Call(p); err != nil {
			return true, err
		}
		pt, err = el.Interactable()
		var covered *rod.CoveredError
		switch {
		case errors.As(err, &covered):
			reason = "it is covered by " + covered.String()
		case errors.Is(err, &rod.InvisibleShapeError{}):
			reason = "it has no visible area"
		case errors.Is(err, &rod.NoPointerEventsError{}):
			reason = "it has pointer-events: none"
		default:
			return true, err
		}
		return false, nil
	})
	if err != nil && p.GetContext().Err() != nil && reason != "" {
		return nil, &notReady{reason: reason, err: err}
	}
	return pt, err
}

// mouse sends one mouse event with the left button at pt.
func mouse(p *rod.Page, t proto.InputDispatchMouseEventType, pt proto.Point) error {
	e := proto.InputDispatchMouseEvent{Type: t, X: pt.X, Y: pt.Y}
	// buttons is the state after the event, as a real mouse reports it.
	switch t {
	case proto.InputDispatchMouseEventTypeMousePressed:
		held := 1
		e.Button, e.ClickCount, e.Buttons = proto.InputMouseButtonLeft, 1, &held
	case proto.InputDispatchMouseEventTypeMouseReleased:
		none := 0
		e.Button, e.ClickCount, e.Buttons = proto.InputMouseButtonLeft, 1, &none
	}
	return e.Call(p)
}

// typeText types s into the focused element. Characters of a US keyboard are pressed as keys
// (keydown, keypress, input, keyup: the events a user's typing makes, and interactions for
// Event Timing, like puppeteer's type); others are inserted as text, like puppeteer's
// sendCharacter. Existing text is kept, as puppeteer does: the new text goes at the caret.
func typeText(p *rod.Page, s string) error {
	var pending strings.Builder
	flush := func() error {
		if pending.Len() == 0 {
			return nil
		}
		err := proto.InputInsertText{Text: pending.String()}.Call(p)
		pending.Reset()
		return err
	}
	for _, c := range s {
		k, ok := keyFor(c)
		if !ok {
			pending.WriteRune(c)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := k.Encode(proto.InputDispatchKeyEventTypeKeyDown, 0).Call(p); err != nil {
			return err
		}
		if err := k.Encode(proto.InputDispatchKeyEventTypeKeyUp, 0).Call(p); err != nil {
			return err
		}
	}
	return flush()
}

// keyFor returns the rod key that types c, for ASCII only: rod files its named keys under
// runes from U+0100 up (Backspace is 'Ĉ'), so a non-ASCII character could press one of them.
func keyFor(c rune) (k input.Key, ok bool) {
	switch {
	case c == '\n':
		return input.Enter, true
	case c >= 0x80:
		return 0, false
	}
	// Key.Info panics for a key rod does not know; that only means "insert it as text".
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	k = input.Key(c)
	_ = k.Info()
	return k, true
}

// scrollJS scrolls the document to its end.
//
//go:embed scroll.js
var scrollJS string

// selectJS selects the option of a <select> whose value, or else whose text, is v, and fires
// input and change as a user's choice does. It returns why it could not, or "": never v itself,
// which may be a test profile's sealed value.
//
//go:embed select.js
var selectJS string

// navigate opens the step's target (a URL, or a path of BaseURL) and waits for waitUntil.
func (r *runner) navigate(ctx context.Context, p *rod.Page, st step.Step, ph *phase) error {
	target, err := r.resolve(st.Target)
	if err != nil {
		return err
	}
	// The proxy would refuse it anyway; refusing here says so plainly, where Chromium would only
	// see a failed tunnel.
	*ph = phaseAct
	if err := r.opts.Browser.Guard.CheckHost(ctx, target.Hostname()); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return failf("could not load %s: %s", target, browser.Reason(err))
	}

	mark := r.rec.navCount()
	// The browser starts this navigation, unannounced to the page (see beforeNavigation): take
	// the leaving document's last entries and its CPU time (TaskDuration restarts with each
	// document) now.
	r.flush(ctx)
	r.cpu.sample(ctx)
	*ph = phaseNavStart
	nav, err := proto.PageNavigate{URL: target.String()}.Call(p)
	if err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return r.loadFailure(target.String(), nav.ErrorText)
	}
	return r.waitNavigation(ctx, st, mark, ph)
}

// resolve turns a navigate target into an absolute http(s) URL.
func (r *runner) resolve(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, failf("%q is not a URL", target)
	}
	if !u.IsAbs() {
		if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") {
			return nil, failf("%q is neither an http(s) URL nor a path starting with /", target)
		}
		if r.base == nil {
			return nil, failf("%q is a path, and the run has no base URL", target)
		}
		u = r.base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, failf("%q is not an http(s) URL", target)
	}
	return u, nil
}

// waitNavigation waits until a navigation of the main frame has committed since mark and the
// document it made has reached the step's waitUntil, and fails the step if that document is
// an error page or an HTTP error.
func (r *runner) waitNavigation(ctx context.Context, st step.Step, mark int, ph *phase) error {
	event, ok := lifecycleEvent(st.Event())
	if !ok {
		return failf("unknown waitUntil %q", st.WaitUntil)
	}
	*ph = phaseNavStart
	doc, err := r.rec.waitNavigation(ctx, mark, event, func() { *ph = phaseNavEvent })
	if err != nil {
		return err
	}
	switch {
	case doc.failed:
		return r.loadFailure(doc.url, doc.errorText)
	case doc.fromProxy:
		// The guarded proxy answered for a plain-http target it would not or could not reach.
		if reason := r.refusal(doc.url); reason != "" {
			return failf("could not load %s: %s", doc.url, reason)
		}
		return failf("could not load %s: the guarded proxy could not reach it (HTTP %d)", doc.url, doc.status)
	case doc.status >= 400:
		// A journey has no assertions of its own: a page that answers with an error is the
		// failure a monitor exists to report, though puppeteer would carry on.
		return failf("%s answered HTTP %d", doc.url, doc.status)
	}
	return nil
}

// loadFailure explains a navigation Chromium gave up on. Behind the proxy, every target the
// guard refuses looks like a failed tunnel (net::ERR_TUNNEL_CONNECTION_FAILED): the session
// knows the refusal.
func (r *runner) loadFailure(rawURL, errorText string) error {
	reason := errorText
	if refusal := r.refusal(rawURL); refusal != "" {
		reason = refusal
	}
	if reason == "" {
		reason = "the navigation failed"
	}
	if rawURL == "" {
		return failf("%s", reason)
	}
	return failf("could not load %s: %s", rawURL, reason)
}

// refusal returns the guard's latest refusal of rawURL's host and port ("refused: 10.0.0.1
// is a private address"), or "".
func (r *runner) refusal(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	prefix := net.JoinHostPort(u.Hostname(), port) + ": "
	refused := r.sess.RefusedConnections()
	for i := len(refused) - 1; i >= 0; i-- {
		if reason, ok := strings.CutPrefix(refused[i], prefix); ok {
			return reason
		}
	}
	return ""
}
