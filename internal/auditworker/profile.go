package auditworker

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/profile"
	"github.com/openvitals/openvitals/internal/redact"
)

// loginStepTimeout bounds each login step: a login that waits for a page that never comes
// (a wrong password) fails in that time.
const loginStepTimeout = 15 * time.Second

// auditProfile is the test profile an audit runs with, its secrets opened for this audit only.
type auditProfile struct {
	model.Profile
	secrets model.ProfileSecrets
	// origin is the website's scheme, host and port, which gets the profile's headers and
	// credentials (with the profile's Origins, no other); host is its host name, the one its
	// cookies are set for.
	origin, host string

	mu sync.Mutex
	// cookies are the website's cookies after the last login: what the run's redaction
	// searches for besides the sealed values.
	cookies []*http.Cookie
}

// profileFor returns the profile of a page on a device, nil when none applies, and the method
// the page is measured with there (the profile's, else the website's: model.MethodFor).
func (w *Worker) profileFor(ctx context.Context, site model.Website, page model.Page, device string) (*auditProfile, string, error) {
	profiles, err := w.store.Profiles(ctx, site)
	if err != nil {
		return nil, "", err
	}
	method := model.MethodFor(site, profiles, page.ID, device)
	p, ok := model.ProfileFor(profiles, page.ID, device)
	if !ok {
		return nil, method, nil
	}
	if w.cfg.Secrets == nil && len(p.Secrets) > 0 {
		return nil, "", errors.New("the page's test profile has secrets, and the worker no key to open them")
	}
	secrets, err := profile.Open(ctx, w.cfg.Secrets, site, p)
	if err != nil {
		return nil, "", err
	}
	u := &url.URL{Scheme: w.cfg.Scheme, Host: site.Domain}
	return &auditProfile{Profile: p, secrets: secrets, origin: u.String(), host: u.Hostname()}, method, nil
}

// launch starts a browser session for a run of target and prepares it: with the profile (nil
// for none), its cookies set, its headers and credentials added to the website's own requests,
// its login played; then the experiment's changes (none for an audit). stop ends what was
// started; call it before closing the session.
func (w *Worker) launch(ctx context.Context, p *auditProfile, target, device string, changes model.ExperimentChanges) (*browser.Session, func(), error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, nil, err
	}
	sess, err := browser.Launch(ctx, w.cfg.Browser)
	if err != nil {
		return nil, nil, fmt.Errorf("launch browser: %w", err)
	}
	fail := func(stop func(), err error) (*browser.Session, func(), error) {
		stop()
		if cerr := sess.Close(); cerr != nil {
			w.log.WarnContext(ctx, "close browser", "err", cerr)
		}
		return nil, nil, err
	}
	var headers map[string]string
	origins := []origin{originOf(u)}
	if p != nil {
		headers = p.headers()
		origins = append(origins, p.otherOrigins()...)
	}
	stop, err := newInterception(origins, headers, model.ExperimentChanges{}).start(ctx, sess.Browser())
	if err != nil {
		return fail(func() {}, err)
	}
	if p != nil {
		if err := p.prepare(ctx, sess, w.cfg.Browser, device); err != nil {
			return fail(stop, err)
		}
	}
	if !changes.IsZero() {
		// After the login: the experiment changes the audited load, not the login's.
		stop()
		if stop, err = newInterception(origins, headers, changes).start(ctx, sess.Browser()); err != nil {
			return fail(func() {}, err)
		}
	}
	return sess, stop, nil
}

// otherOrigins are the origins besides the website's that get the profile's headers (checked
// by model.ProfileOrigin when the profile was stored).
func (p *auditProfile) otherOrigins() []origin {
	var out []origin
	for _, raw := range p.Origins {
		if u, err := url.Parse(raw); err == nil {
			out = append(out, originOf(u))
		}
	}
	return out
}

// headers are the request headers the profile adds to the website's own requests.
func (p *auditProfile) headers() map[string]string {
	out := map[string]string{}
	for name, v := range p.secrets.Headers {
		out[name] = v
	}
	if p.BasicAuthUser != "" {
		out["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(p.BasicAuthUser+":"+p.secrets.Password))
	}
	return out
}

// prepare sets the profile's cookies in a fresh session and plays its login (its headers are
// the interception's).
func (p *auditProfile) prepare(ctx context.Context, sess *browser.Session, opts browser.Options, device string) error {
	b := sess.Browser().Context(ctx)
	if len(p.secrets.Cookies) > 0 {
		var cookies []*proto.NetworkCookieParam
		for _, name := range p.CookieNames {
			// By URL, without a domain: a host-only cookie, sent to the website's host only.
			// HttpOnly: no script of the page (an experiment's injected one included) reads it.
			cookies = append(cookies, &proto.NetworkCookieParam{Name: name, Value: p.secrets.Cookies[name], URL: p.origin + "/", Path: "/",
				HTTPOnly: true, Secure: strings.HasPrefix(p.origin, "https:")})
		}
		if err := b.SetCookies(cookies); err != nil {
			return fmt.Errorf("profile cookies: %w", err)
		}
	}
	if len(p.Login) > 0 {
		steps := profile.Login(p.Profile, p.secrets)
		res, err := journey.Play(ctx, sess, journey.Options{Browser: opts, BaseURL: p.origin, Device: device, StepTimeout: loginStepTimeout}, steps)
		if err != nil {
			return fmt.Errorf("login: %w", err)
		}
		if res.FailedStep >= 0 {
			return &loginError{step: res.FailedStep + 1, desc: journey.Describe(p.Login[res.FailedStep]), cause: res.Cause}
		}
		// The login's loads filled the HTTP cache, which Lighthouse, keeping the storage, no
		// longer empties: empty it here, keeping the cookies and storage.
		page, err := b.Page(proto.TargetCreateTarget{})
		if err != nil {
			return err
		}
		err = proto.NetworkClearBrowserCache{}.Call(page)
		_ = page.Close()
		if err != nil {
			return fmt.Errorf("clear the cache after the login: %w", err)
		}
	}
	if cs, err := b.GetCookies(); err == nil {
		p.keepCookies(cs)
	}
	return nil
}

// redaction is the rule that keeps the profile's secrets out of what a run stores, serves, logs
// or sends (see package redact): its header names, every sealed value, the values it sends
// (the basic authentication header) and the cookies of the latest login. Without a profile,
// only the credential headers are redacted.
func (p *auditProfile) redaction() *redact.Rule {
	if p == nil {
		return redact.New(nil)
	}
	var secrets []string
	for _, v := range p.headers() {
		secrets = append(secrets, v)
	}
	for _, v := range p.secrets.Cookies {
		secrets = append(secrets, v)
	}
	for _, v := range p.secrets.Typed {
		secrets = append(secrets, v)
	}
	secrets = append(secrets, p.secrets.Password)
	p.mu.Lock()
	for _, c := range p.cookies {
		secrets = append(secrets, c.Value)
	}
	p.mu.Unlock()
	return redact.New(p.HeaderNames, secrets...)
}

// keepCookies keeps the website's cookies, the login's session among them, for the redaction.
func (p *auditProfile) keepCookies(cs []*proto.NetworkCookie) {
	var out []*http.Cookie
	for _, c := range cs {
		if strings.TrimPrefix(c.Domain, ".") == p.host {
			out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	p.mu.Lock()
	p.cookies = out
	p.mu.Unlock()
}

// settings are the Lighthouse settings of a run of device with the profile (nil for none) by
// method, and the CPU multiplier the run uses: with applied throttling, the network preset's
// (the profile's, else the device's) round trip and throughput as DevTools applies them
// (Lighthouse's own factors) and the CPU slowdown calibrated from the machine's
// benchmarkIndex (model.CalibratedCPU); simulated, the profile's throttling as Lighthouse's
// simulation takes it (nil settings without a profile: Lighthouse's device defaults). Then the
// profile's viewport, user agent, and the storage kept when a login or cookies made it.
func settings(p *auditProfile, device, method string, benchmarkIndex float64) (map[string]any, float64) {
	out := map[string]any{}
	var custom model.Profile
	if p != nil {
		custom = p.Profile
	}
	n, ok := model.NetworkPresets[custom.Network]
	if !ok {
		n = model.NetworkPresets[model.DevicePresets[device]]
	}
	for dst, v := range map[*float64]float64{&n.RTTMs: custom.RTTMs, &n.ThroughputK: custom.ThroughputK, &n.CPUSlowdown: custom.CPUSlowdown} {
		if v != 0 {
			*dst = v
		}
	}
	cpu := n.CPUSlowdown
	if method == model.MethodApplied {
		cpu = model.CalibratedCPU(n.CPUSlowdown, benchmarkIndex)
		out["throttlingMethod"] = "devtools"
		out["throttling"] = map[string]any{
			"rttMs": n.RTTMs, "throughputKbps": n.ThroughputK,
			"requestLatencyMs":       n.RTTMs * model.DevtoolsRTTFactor,
			"downloadThroughputKbps": n.ThroughputK * model.DevtoolsThroughputFactor,
			"uploadThroughputKbps":   min(n.UploadK, n.ThroughputK) * model.DevtoolsThroughputFactor,
			"cpuSlowdownMultiplier":  cpu,
		}
		for name, ms := range model.AppliedWaits {
			out[name] = ms
		}
	} else if p != nil {
		throttling := map[string]any{}
		if n, ok := model.NetworkPresets[p.Network]; ok {
			throttling["rttMs"], throttling["throughputKbps"], throttling["cpuSlowdownMultiplier"] = n.RTTMs, n.ThroughputK, n.CPUSlowdown
		}
		for name, v := range map[string]float64{"rttMs": p.RTTMs, "throughputKbps": p.ThroughputK, "cpuSlowdownMultiplier": p.CPUSlowdown} {
			if v != 0 {
				throttling[name] = v
			}
		}
		if len(throttling) > 0 {
			out["throttling"] = throttling
		}
	}
	if p == nil {
		if len(out) == 0 {
			return nil, cpu
		}
		return out, cpu
	}
	if p.Width > 0 {
		out["screenEmulation"] = map[string]any{"width": p.Width, "height": p.Height}
	}
	if p.UserAgent != "" {
		// Still marked as a lab load, so that real-user monitoring does not count it.
		out["emulatedUserAgent"] = p.UserAgent + " " + model.LabUserAgentMark
	}
	if len(p.Login) > 0 || len(p.CookieNames) > 0 {
		// Lighthouse would clear the origin's storage before its load: the login's cookies and
		// storage are what the audit is about.
		out["disableStorageReset"] = true
	}
	return out, cpu
}

// loginError is a profile's login step failing: the audit ends, naming the step as the
// profile's list numbers it (from 1); the values it typed are never part of it.
type loginError struct {
	step  int
	desc  string
	cause string
}

func (e *loginError) Error() string {
	return fmt.Sprintf("login step %d (%s) failed: %s", e.step, e.desc, e.cause)
}
