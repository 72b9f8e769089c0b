package model

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model/step"
)

// Limits of a test profile, so that none bloats its item or a browser's requests.
const (
	maxProfileHeaders = 20
	maxProfileCookies = 20
	maxHeaderValueLen = 4096
	maxCredentialLen  = 256
	maxUserAgentLen   = 512
	maxProfileLogin   = 20
	maxProfilePages   = 1000
	minViewport       = 200
	maxViewport       = 4000
	maxRTTMs          = 10000
	maxThroughputKbps = 1000000
	maxCPUSlowdown    = 20
	minThroughputKbps = 1
	minCPUSlowdown    = 1
)

// forbiddenHeaders are the request headers a profile may not set: the browser's own framing
// and addressing, and those a profile sets otherwise (cookies, basic authentication).
var forbiddenHeaders = []string{"host", "content-length", "connection", "transfer-encoding", "upgrade",
	"keep-alive", "te", "trailer", "expect", "cookie", "authorization", "proxy-authorization", "proxy-connection"}

// ProfilePatch is a test profile's create or update request; nil means omitted (kept, on
// update). Headers, cookies, basicAuth and login are replaced whole when sent, with their
// secret values.
type ProfilePatch struct {
	Name      *string             `json:"name"`
	Default   *bool               `json:"default"`
	Pages     *[]ProfilePagePatch `json:"pages"`
	Headers   *[]SecretPatch      `json:"headers"`
	Cookies   *[]SecretPatch      `json:"cookies"`
	BasicAuth *BasicAuthPatch     `json:"basicAuth"`
	Origins   *[]string           `json:"origins"`
	Login     *[]step.Request     `json:"login"`
	Network   *NetworkPatch       `json:"network"`
	Viewport  *ViewportPatch      `json:"viewport"`
	UserAgent *string             `json:"userAgent"`
	Method    *string             `json:"method"`
}

// ProfilePagePatch is a page and device a profile is to measure.
type ProfilePagePatch struct {
	Page   *string `json:"page"`
	Device *string `json:"device"`
}

// SecretPatch is a header or cookie, with its secret value.
type SecretPatch struct {
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

// BasicAuthPatch is basic authentication's user and password; no user means none.
type BasicAuthPatch struct {
	User     *string `json:"user"`
	Password *string `json:"password"`
}

// NetworkPatch is the network a profile emulates: a preset and the values that override it.
type NetworkPatch struct {
	Preset         *string  `json:"preset"`
	RTTMs          *float64 `json:"rttMs"`
	ThroughputKbps *float64 `json:"throughputKbps"`
	CPUSlowdown    *float64 `json:"cpuSlowdown"`
}

// ViewportPatch is the viewport a profile emulates, in CSS pixels.
type ViewportPatch struct {
	Width  *int `json:"width"`
	Height *int `json:"height"`
}

// ProfileStore is what applying a patch reads of the rest of the website, each only when the
// patch needs it: its pages (when the patch names some), and the profile's secrets as stored
// (when some but not all of them change).
type ProfileStore struct {
	Pages   func() ([]Page, error)
	Secrets func() (ProfileSecrets, error)
}

// Apply sets the fields present in the patch over p, a profile of site, and returns the
// secrets to seal: those stored with the ones sent in their place.
func (in ProfilePatch) Apply(p *Profile, site Website, create bool, read ProfileStore) (ProfileSecrets, error) {
	var errs FieldErrors
	patchField(&errs, "name", in.Name, &p.Name, create, CheckName)
	if in.Default != nil {
		p.Default = *in.Default
	}
	if in.Pages != nil {
		if err := p.applyPages(*in.Pages, read.Pages, &errs); err != nil {
			return ProfileSecrets{}, err
		}
	}
	if in.Network != nil {
		p.applyNetwork(*in.Network, &errs)
	}
	if in.Viewport != nil {
		p.applyViewport(*in.Viewport, &errs)
	}
	if in.Origins != nil {
		p.applyOrigins(site.Domain, *in.Origins, &errs)
	}
	if in.Method != nil {
		if err := CheckMethod(*in.Method); err != nil {
			errs.Add("method", "%s", err)
		}
		p.Method = *in.Method
	}
	if in.UserAgent != nil {
		p.UserAgent = *in.UserAgent
		if msg := checkHeaderValue(p.UserAgent, maxUserAgentLen); msg != "" {
			errs.Add("userAgent", "%s", msg)
		}
	}
	secrets, err := in.applySecrets(p, create, read.Secrets, &errs)
	if err != nil {
		return secrets, err
	}
	if !create && in == (ProfilePatch{}) {
		errs.Add("body", "send at least one field")
	}
	return secrets, errs.Err()
}

// ChangesSecrets tells whether the patch sends any of the secrets' fields: headers, cookies,
// basicAuth or login.
func (in ProfilePatch) ChangesSecrets() bool {
	return in.Headers != nil || in.Cookies != nil || in.BasicAuth != nil || in.Login != nil
}

// applyPages replaces the pages and devices p measures; readPages reads the website's pages,
// once (a profile may name up to maxProfilePages of them).
func (p *Profile) applyPages(in []ProfilePagePatch, readPages func() ([]Page, error), errs *FieldErrors) error {
	if len(in) > maxProfilePages {
		errs.Add("pages", "at most %d, not %d", maxProfilePages, len(in))
		return nil
	}
	p.Pages = nil
	known := map[string]bool{}
	if len(in) > 0 {
		pages, err := readPages()
		if err != nil {
			return err
		}
		for _, pg := range pages {
			known[pg.ID] = true
		}
	}
	for i, pi := range in {
		field := fmt.Sprintf("pages[%d]", i)
		var pp ProfilePage
		if pi.Device == nil || !slices.Contains(Devices, *pi.Device) {
			errs.Add(field+".device", "must be desktop or mobile")
		} else {
			pp.Device = *pi.Device
		}
		if pi.Page == nil {
			errs.Add(field+".page", "is required")
		} else if !known[*pi.Page] {
			errs.Add(field+".page", "is not a page of the website")
		} else {
			pp.Page = *pi.Page
		}
		if slices.Contains(p.Pages, pp) {
			errs.Add(field, "repeats a page and device")
		}
		p.Pages = append(p.Pages, pp)
	}
	return nil
}

// applyNetwork replaces the network p emulates.
func (p *Profile) applyNetwork(n NetworkPatch, errs *FieldErrors) {
	p.Network, p.RTTMs, p.ThroughputK, p.CPUSlowdown = "", 0, 0, 0
	if n.Preset != nil && *n.Preset != "" {
		if _, ok := NetworkPresets[*n.Preset]; !ok {
			errs.Add("network.preset", "must be one of %s", strings.Join(presetNames(), ", "))
		}
		p.Network = *n.Preset
	}
	check := func(v *float64, field string, lo, hi float64, dst *float64) {
		if v == nil {
			return
		}
		if *v < lo || *v > hi {
			errs.Add("network."+field, "must be from %g to %g", lo, hi)
		}
		*dst = *v
	}
	check(n.RTTMs, "rttMs", 0, maxRTTMs, &p.RTTMs)
	check(n.ThroughputKbps, "throughputKbps", minThroughputKbps, maxThroughputKbps, &p.ThroughputK)
	check(n.CPUSlowdown, "cpuSlowdown", minCPUSlowdown, maxCPUSlowdown, &p.CPUSlowdown)
}

func presetNames() []string {
	var out []string
	for name := range NetworkPresets {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// applyViewport sets the viewport p emulates.
func (p *Profile) applyViewport(v ViewportPatch, errs *FieldErrors) {
	if v.Width == nil || v.Height == nil {
		errs.Add("viewport", "needs width and height")
		return
	}
	p.Width, p.Height = *v.Width, *v.Height
	for field, n := range map[string]int{"width": p.Width, "height": p.Height} {
		if n < minViewport || n > maxViewport {
			errs.Add("viewport."+field, "must be from %d to %d", minViewport, maxViewport)
		}
	}
}

// applyOrigins replaces the other origins of the website's site that p sends its secrets to.
func (p *Profile) applyOrigins(domain string, in []string, errs *FieldErrors) {
	p.Origins = nil
	if len(in) > MaxProfileOrigins {
		errs.Add("origins", "at most %d, not %d", MaxProfileOrigins, len(in))
		return
	}
	for i, raw := range in {
		o, err := ProfileOrigin(domain, raw)
		switch {
		case err != nil:
			errs.Add(fmt.Sprintf("origins[%d]", i), "%s", err)
		case slices.Contains(p.Origins, o):
			errs.Add(fmt.Sprintf("origins[%d]", i), "repeats an origin")
		default:
			p.Origins = append(p.Origins, o)
		}
	}
}

// applySecrets replaces the secrets the patch sends (headers, cookies, basicAuth, login) and
// keeps the others as stored, which it reads only when some but not all change.
func (in ProfilePatch) applySecrets(p *Profile, create bool, stored func() (ProfileSecrets, error), errs *FieldErrors) (ProfileSecrets, error) {
	var secrets ProfileSecrets
	if !create && in.ChangesSecrets() && (in.Headers == nil || in.Cookies == nil || in.BasicAuth == nil || in.Login == nil) {
		opened, err := stored()
		if err != nil {
			return secrets, err
		}
		secrets = opened
	}
	if in.Headers != nil {
		p.HeaderNames, secrets.Headers = checkSecrets(*in.Headers, "headers", maxProfileHeaders, true, errs)
	}
	if in.Cookies != nil {
		p.CookieNames, secrets.Cookies = checkSecrets(*in.Cookies, "cookies", maxProfileCookies, false, errs)
	}
	if in.BasicAuth != nil {
		p.BasicAuthUser, secrets.Password = applyBasicAuth(*in.BasicAuth, errs)
	}
	if in.Login != nil {
		p.Login, secrets.Typed = applyLogin(*in.Login, errs)
	}
	return secrets, nil
}

// applyBasicAuth checks basic authentication and returns its user and password ("" for none).
func applyBasicAuth(b BasicAuthPatch, errs *FieldErrors) (user, password string) {
	if b.User == nil || *b.User == "" {
		return "", ""
	}
	user = *b.User
	if msg := checkHeaderValue(user, maxCredentialLen); msg != "" || strings.Contains(user, ":") {
		errs.Add("basicAuth.user", "must be up to %d characters of printable text without a colon", maxCredentialLen)
	}
	if b.Password == nil {
		errs.Add("basicAuth.password", "is required with a user")
	} else if password = *b.Password; checkHeaderValue(password, maxCredentialLen) != "" {
		errs.Add("basicAuth.password", "must be up to %d characters of printable text", maxCredentialLen)
	}
	return user, password
}

// applyLogin parses login steps and returns them with the values their type and select steps
// type, by step, which are secret: the steps keep them blank.
func applyLogin(in []step.Request, errs *FieldErrors) ([]step.Step, map[int]string) {
	if len(in) > maxProfileLogin {
		errs.Add("login", "at most %d steps, not %d", maxProfileLogin, len(in))
		return nil, nil
	}
	steps := parseSteps("login", in, errs)
	var typed map[int]string
	for i, st := range steps {
		if st.Type == step.TypeText || st.Type == step.Select {
			if typed == nil {
				typed = map[int]string{}
			}
			typed[i], steps[i].Value = st.Value, ""
		}
	}
	return steps, typed
}

// isToken tells whether s is an HTTP token (a header or cookie name).
func isToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// checkSecrets checks headers or cookies and returns their names and values.
func checkSecrets(in []SecretPatch, field string, max int, header bool, errs *FieldErrors) ([]string, map[string]string) {
	if len(in) > max {
		errs.Add(field, "at most %d, not %d", max, len(in))
		return nil, nil
	}
	var names []string
	values := map[string]string{}
	for i, s := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		if s.Name == nil || !isToken(*s.Name) {
			errs.Add(f+".name", "must be a name of letters, digits and !#$%%&'*+-.^_`|~")
			continue
		}
		name := *s.Name
		key := name
		if header {
			name = http.CanonicalHeaderKey(name)
			key = name
			if slices.Contains(forbiddenHeaders, strings.ToLower(name)) || strings.HasPrefix(strings.ToLower(name), "proxy-") || strings.HasPrefix(strings.ToLower(name), "sec-") {
				errs.Add(f+".name", "cannot be set by a profile (cookies and basicAuth have fields of their own)")
				continue
			}
		}
		if _, dup := values[key]; dup {
			errs.Add(f+".name", "repeats a name")
			continue
		}
		if s.Value == nil {
			errs.Add(f+".value", "is required")
			continue
		}
		if msg := checkHeaderValue(*s.Value, maxHeaderValueLen); msg != "" {
			errs.Add(f+".value", "%s", msg)
		} else if !header && strings.ContainsAny(*s.Value, "; ,\"\\") {
			errs.Add(f+".value", "must not contain spaces, commas, semicolons, quotes or backslashes")
		}
		names = append(names, name)
		values[key] = *s.Value
	}
	return names, values
}

// CheckOthers refuses a page and device another profile measures already: one profile
// measures a page on a device.
func (p Profile) CheckOthers(others []Profile) error {
	var errs FieldErrors
	for i, pp := range p.Pages {
		for _, o := range others {
			if o.ID != p.ID && o.Measures(pp.Page, pp.Device) {
				errs.Add(fmt.Sprintf("pages[%d]", i), "is measured by the profile %s (%s): take it from that one first", o.ID, o.Name)
			}
		}
	}
	return errs.Err()
}
