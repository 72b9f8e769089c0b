package auditworker

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/model"
)

// interception is what a run's browser changes in the requests of every page, Lighthouse's
// included (DevTools Fetch on the browser target): a test profile's headers for the website's
// own origins, and an experiment's changes. Every connection still goes through the guarded
// proxy: a request is only changed, held or refused here, never sent another way.
type interception struct {
	// origins are the website's origin and those its profile names: the only ones that get
	// headers and document edits.
	origins []origin
	headers map[string]string
	changes model.ExperimentChanges
	block   []*regexp.Regexp
	delay   []delayRule
}

// origin is a scheme, host and port, as browsers compare them.
type origin struct{ scheme, host, port string }

// defaultPorts are the ports a URL of each scheme leaves out.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// originOf is u's origin, its port made explicit.
func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		o.port = defaultPorts[o.scheme]
	}
	return o
}

// pattern is the DevTools URL pattern of the origin's requests (a default port is left out of
// URLs, as Chromium writes them).
func (o origin) pattern() string {
	host := o.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if o.port != defaultPorts[o.scheme] {
		host += ":" + o.port
	}
	return o.scheme + "://" + host + "/*"
}

// owns tells whether raw is a URL of one of the origins.
func (ic *interception) owns(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && slices.Contains(ic.origins, originOf(u))
}

type delayRule struct {
	re *regexp.Regexp
	d  time.Duration
}

// newInterception compiles the changes' patterns.
func newInterception(origins []origin, headers map[string]string, changes model.ExperimentChanges) *interception {
	ic := &interception{origins: origins, headers: headers, changes: changes}
	for _, p := range changes.Block {
		ic.block = append(ic.block, wildcard(p))
	}
	for _, d := range changes.Delay {
		ic.delay = append(ic.delay, delayRule{wildcard(d.Pattern), time.Duration(d.Ms) * time.Millisecond})
	}
	return ic
}

// wildcard compiles a URL pattern as DevTools reads one: * any characters, ? one, a
// backslash escapes the next character; everything else is itself (so it always compiles).
func wildcard(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`\A`)
	escaped := false
	for _, r := range p {
		switch {
		case escaped:
			b.WriteString(regexp.QuoteMeta(string(r)))
			escaped = false
		case r == '\\':
			escaped = true
		case r == '*':
			b.WriteString(`.*`)
		case r == '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if escaped {
		b.WriteString(regexp.QuoteMeta(`\`))
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// edits tells whether the document's HTML is changed.
func (ic *interception) edits() bool {
	return ic.changes.Script != "" || ic.changes.Style != "" || len(ic.changes.Replace) > 0
}

// patterns are the requests paused: every request when some may be blocked or delayed, else
// the website's; its documents again at the response when they are edited.
func (ic *interception) patterns() []*proto.FetchRequestPattern {
	var out []*proto.FetchRequestPattern
	var own []string
	for _, o := range ic.origins {
		own = append(own, o.pattern())
	}
	switch {
	case len(ic.block) > 0 || len(ic.delay) > 0:
		out = append(out, &proto.FetchRequestPattern{URLPattern: "*", RequestStage: proto.FetchRequestStageRequest})
	case len(ic.headers) > 0:
		for _, p := range own {
			out = append(out, &proto.FetchRequestPattern{URLPattern: p, RequestStage: proto.FetchRequestStageRequest})
		}
	}
	if ic.edits() {
		for _, p := range own {
			out = append(out, &proto.FetchRequestPattern{URLPattern: p, ResourceType: proto.NetworkResourceTypeDocument, RequestStage: proto.FetchRequestStageResponse})
		}
	}
	return out
}

// start enables the interception in the browser; stop ends it.
func (ic *interception) start(ctx context.Context, b *rod.Browser) (func(), error) {
	patterns := ic.patterns()
	if len(patterns) == 0 {
		return func() {}, nil
	}
	evCtx, cancel := context.WithCancel(ctx)
	b = b.Context(evCtx)
	wait := b.EachEvent(func(e *proto.FetchRequestPaused) {
		go ic.handle(evCtx, b, e)
	})
	if err := (proto.FetchEnable{Patterns: patterns}).Call(b); err != nil {
		cancel()
		return nil, fmt.Errorf("intercept requests: %w", err)
	}
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	return func() {
		_ = proto.FetchDisable{}.Call(b.Context(context.WithoutCancel(ctx)))
		cancel()
		<-done
	}, nil
}

// handle decides one paused request. A failure to answer leaves nothing to do: the request's
// page went away meanwhile.
func (ic *interception) handle(ctx context.Context, b *rod.Browser, e *proto.FetchRequestPaused) {
	own := ic.owns(e.Request.URL)
	if e.ResponseStatusCode != nil || e.ResponseErrorReason != "" {
		if own && e.ResponseErrorReason == "" && e.ResourceType == proto.NetworkResourceTypeDocument && ic.edits() {
			if ic.fulfillEdited(b, e) == nil {
				return
			}
		}
		_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(b)
		return
	}
	for _, re := range ic.block {
		if re.MatchString(e.Request.URL) {
			_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(b)
			return
		}
	}
	for _, d := range ic.delay {
		if d.re.MatchString(e.Request.URL) {
			t := time.NewTimer(d.d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			break
		}
	}
	cont := proto.FetchContinueRequest{RequestID: e.RequestID}
	if own && len(ic.headers) > 0 {
		entries := []*proto.FetchHeaderEntry{}
		for name, v := range e.Request.Headers {
			if _, replaced := ic.headers[http.CanonicalHeaderKey(name)]; !replaced {
				entries = append(entries, &proto.FetchHeaderEntry{Name: name, Value: v.Str()})
			}
		}
		for name, v := range ic.headers {
			entries = append(entries, &proto.FetchHeaderEntry{Name: name, Value: v})
		}
		cont.Headers = entries
	}
	_ = cont.Call(b)
}

// fulfillEdited answers a document with its edited HTML, its other headers kept (the body is
// now decoded and of another length).
func (ic *interception) fulfillEdited(b *rod.Browser, e *proto.FetchRequestPaused) error {
	body, err := proto.FetchGetResponseBody{RequestID: e.RequestID}.Call(b)
	if err != nil {
		return err
	}
	raw := []byte(body.Body)
	if body.Base64Encoded {
		if raw, err = base64.StdEncoding.DecodeString(body.Body); err != nil {
			return err
		}
	}
	var headers []*proto.FetchHeaderEntry
	for _, h := range e.ResponseHeaders {
		switch strings.ToLower(h.Name) {
		case "content-length", "content-encoding", "transfer-encoding":
		default:
			headers = append(headers, h)
		}
	}
	return proto.FetchFulfillRequest{RequestID: e.RequestID, ResponseCode: *e.ResponseStatusCode,
		ResponseHeaders: headers, Body: editHTML(raw, ic.changes), ResponsePhrase: e.ResponseStatusText}.Call(b)
}

// headOpen finds the end of a document's <head> start tag.
var headOpen = regexp.MustCompile(`(?i)<head(\s[^>]*)?>`)

// editHTML applies the replacements, then inserts the script and the stylesheet at the start
// of the head (before the document's own, so that they run and block as the first would);
// without a head, at the start of the document.
func editHTML(doc []byte, c model.ExperimentChanges) []byte {
	for _, r := range c.Replace {
		doc = bytes.ReplaceAll(doc, []byte(r.Find), []byte(r.With))
	}
	var ins strings.Builder
	if c.Style != "" {
		if isURL(c.Style) {
			ins.WriteString(`<link rel="stylesheet" href="` + html.EscapeString(c.Style) + `">`)
		} else {
			ins.WriteString("<style>" + strings.ReplaceAll(c.Style, "</", `<\/`) + "</style>")
		}
	}
	if c.Script != "" {
		if isURL(c.Script) {
			ins.WriteString(`<script src="` + html.EscapeString(c.Script) + `"></script>`)
		} else {
			ins.WriteString("<script>" + strings.ReplaceAll(c.Script, "</", `<\/`) + "</script>")
		}
	}
	if ins.Len() == 0 {
		return doc
	}
	at := 0
	if loc := headOpen.FindIndex(doc); loc != nil {
		at = loc[1]
	}
	return append(doc[:at:at], append([]byte(ins.String()), doc[at:]...)...)
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(s, " \n<>")
}
