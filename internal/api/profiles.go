package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/profile"
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

// profileJSON is a test profile as the API shows it: the names of its headers and cookies, the
// user of its basic authentication and its login steps, never their secret values.
type profileJSON struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Default   bool              `json:"default"`
	Pages     []profilePageJSON `json:"pages"`
	Headers   []secretJSON      `json:"headers"`
	Cookies   []secretJSON      `json:"cookies"`
	BasicAuth *basicAuthJSON    `json:"basicAuth,omitempty"`
	Origins   []string          `json:"origins"`
	Login     []stepJSON        `json:"login"`
	Network   networkJSON       `json:"network"`
	Viewport  *viewportJSON     `json:"viewport,omitempty"`
	UserAgent string            `json:"userAgent,omitempty"`
	Method    string            `json:"method"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
}

type profilePageJSON struct {
	Page   string `json:"page"`
	Device string `json:"device"`
}

// secretJSON is a header or cookie as shown: its name (its value is taken, never shown).
type secretJSON struct {
	Name string `json:"name"`
}

type basicAuthJSON struct {
	User string `json:"user"`
}

type networkJSON struct {
	Preset         string   `json:"preset,omitempty"`
	RTTMs          *float64 `json:"rttMs,omitempty"`
	ThroughputKbps *float64 `json:"throughputKbps,omitempty"`
	CPUSlowdown    *float64 `json:"cpuSlowdown,omitempty"`
}

type viewportJSON struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// profileInput is a create or update request; nil means omitted (kept, on update). Headers,
// cookies, basicAuth and login are replaced whole when sent, with their secret values.
type profileInput struct {
	Name      *string             `json:"name"`
	Default   *bool               `json:"default"`
	Pages     *[]profilePageInput `json:"pages"`
	Headers   *[]secretInput      `json:"headers"`
	Cookies   *[]secretInput      `json:"cookies"`
	BasicAuth *basicAuthInput     `json:"basicAuth"`
	Origins   *[]string           `json:"origins"`
	Login     *[]stepInput        `json:"login"`
	Network   *networkInput       `json:"network"`
	Viewport  *viewportInput      `json:"viewport"`
	UserAgent *string             `json:"userAgent"`
	Method    *string             `json:"method"`
}

type profilePageInput struct {
	Page   *string `json:"page"`
	Device *string `json:"device"`
}

type secretInput struct {
	Name  *string `json:"name"`
	Value *string `json:"value"`
}

type basicAuthInput struct {
	User     *string `json:"user"`
	Password *string `json:"password"`
}

type networkInput struct {
	Preset         *string  `json:"preset"`
	RTTMs          *float64 `json:"rttMs"`
	ThroughputKbps *float64 `json:"throughputKbps"`
	CPUSlowdown    *float64 `json:"cpuSlowdown"`
}

type viewportInput struct {
	Width  *int `json:"width"`
	Height *int `json:"height"`
}

// toProfileJSON shows p, a profile of site: its method is its own, else the website's that it
// follows.
func toProfileJSON(site model.Website, p model.Profile) profileJSON {
	out := profileJSON{ID: p.ID, Name: p.Name, Default: p.Default, Pages: []profilePageJSON{}, Method: model.MethodOr(p.Method, site.Method),
		Headers: []secretJSON{}, Cookies: []secretJSON{}, Origins: append([]string{}, p.Origins...), Login: []stepJSON{}, UserAgent: p.UserAgent,
		Network:   networkJSON{Preset: p.Network, RTTMs: nonZero(p.RTTMs), ThroughputKbps: nonZero(p.ThroughputK), CPUSlowdown: nonZero(p.CPUSlowdown)},
		CreatedAt: p.Created.UTC(), UpdatedAt: p.Updated.UTC()}
	for _, pp := range p.Pages {
		out.Pages = append(out.Pages, profilePageJSON{Page: pp.Page, Device: pp.Device})
	}
	for _, n := range p.HeaderNames {
		out.Headers = append(out.Headers, secretJSON{Name: n})
	}
	for _, n := range p.CookieNames {
		out.Cookies = append(out.Cookies, secretJSON{Name: n})
	}
	if p.BasicAuthUser != "" {
		out.BasicAuth = &basicAuthJSON{User: p.BasicAuthUser}
	}
	out.Login = toTestJSON(model.Test{Steps: p.Login}).Steps
	if p.Width > 0 {
		out.Viewport = &viewportJSON{Width: p.Width, Height: p.Height}
	}
	return out
}

func nonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

// applyProfile sets the fields present in in over p and returns the secrets to seal: those
// opened from the stored profile with the ones sent in their place. open reads the stored
// secrets, only when some but not all change.
func (s *Server) applyProfile(ctx context.Context, site model.Website, in profileInput, p *model.Profile, create bool,
	open func() (model.ProfileSecrets, error)) (model.ProfileSecrets, error) {
	var errs model.FieldErrors
	if in.Name != nil {
		p.Name = *in.Name
		if msg := model.CheckName(p.Name); msg != "" {
			errs.Add("name", "%s", msg)
		}
	} else if create {
		errs.Add("name", "is required")
	}
	if in.Default != nil {
		p.Default = *in.Default
	}
	if in.Pages != nil && len(*in.Pages) > maxProfilePages {
		errs.Add("pages", "at most %d, not %d", maxProfilePages, len(*in.Pages))
	} else if in.Pages != nil {
		p.Pages = nil
		// The website's pages, read once: a profile may name up to maxProfilePages of them.
		known := map[string]bool{}
		if len(*in.Pages) > 0 {
			pages, err := s.store.Pages(ctx, site)
			if err != nil {
				return model.ProfileSecrets{}, err
			}
			for _, pg := range pages {
				known[pg.ID] = true
			}
		}
		for i, pi := range *in.Pages {
			field := fmt.Sprintf("pages[%d]", i)
			var pp model.ProfilePage
			if pi.Device == nil || !slices.Contains(model.Devices, *pi.Device) {
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
	}
	if in.Network != nil {
		n := *in.Network
		p.Network, p.RTTMs, p.ThroughputK, p.CPUSlowdown = "", 0, 0, 0
		if n.Preset != nil && *n.Preset != "" {
			if _, ok := model.NetworkPresets[*n.Preset]; !ok {
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
	if in.Viewport != nil {
		v := *in.Viewport
		if v.Width == nil || v.Height == nil {
			errs.Add("viewport", "needs width and height")
		} else {
			p.Width, p.Height = *v.Width, *v.Height
			for field, n := range map[string]int{"width": p.Width, "height": p.Height} {
				if n < minViewport || n > maxViewport {
					errs.Add("viewport."+field, "must be from %d to %d", minViewport, maxViewport)
				}
			}
		}
	}
	if in.Origins != nil {
		p.Origins = nil
		if len(*in.Origins) > model.MaxProfileOrigins {
			errs.Add("origins", "at most %d, not %d", model.MaxProfileOrigins, len(*in.Origins))
		} else {
			for i, raw := range *in.Origins {
				o, err := model.ProfileOrigin(site.Domain, raw)
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
	}
	if in.Method != nil {
		if err := model.CheckMethod(*in.Method); err != nil {
			errs.Add("method", "%s", err)
		}
		p.Method = *in.Method
	}
	if in.UserAgent != nil {
		p.UserAgent = *in.UserAgent
		if msg := model.CheckHeaderValue(p.UserAgent, maxUserAgentLen); msg != "" {
			errs.Add("userAgent", "%s", msg)
		}
	}

	// Secrets: what is sent replaces what was; the rest is kept as sealed.
	var secrets model.ProfileSecrets
	if !create && (in.Headers == nil || in.Cookies == nil || in.BasicAuth == nil || in.Login == nil) &&
		(in.Headers != nil || in.Cookies != nil || in.BasicAuth != nil || in.Login != nil) {
		opened, err := open()
		if err != nil {
			return secrets, err
		}
		secrets = opened
	}
	if in.Headers != nil {
		p.HeaderNames, secrets.Headers = checkSecrets(*in.Headers, "headers", maxProfileHeaders, true, &errs)
	}
	if in.Cookies != nil {
		p.CookieNames, secrets.Cookies = checkSecrets(*in.Cookies, "cookies", maxProfileCookies, false, &errs)
	}
	if in.BasicAuth != nil {
		b := *in.BasicAuth
		p.BasicAuthUser, secrets.Password = "", ""
		if b.User != nil && *b.User != "" {
			p.BasicAuthUser = *b.User
			if msg := model.CheckHeaderValue(p.BasicAuthUser, maxCredentialLen); msg != "" || strings.Contains(p.BasicAuthUser, ":") {
				errs.Add("basicAuth.user", "must be up to %d characters of printable text without a colon", maxCredentialLen)
			}
			if b.Password == nil {
				errs.Add("basicAuth.password", "is required with a user")
			} else if secrets.Password = *b.Password; model.CheckHeaderValue(secrets.Password, maxCredentialLen) != "" {
				errs.Add("basicAuth.password", "must be up to %d characters of printable text", maxCredentialLen)
			}
		}
	}
	if in.Login != nil {
		p.Login, secrets.Typed = nil, nil
		if len(*in.Login) > maxProfileLogin {
			errs.Add("login", "at most %d steps, not %d", maxProfileLogin, len(*in.Login))
		} else {
			for i, si := range *in.Login {
				st, problems := step.Parse(si.input())
				if si.Value != nil && si.Value.outOfRange {
					errs.Add(fmt.Sprintf("login[%d].value", i), "as a number must be a whole number from 0 to %.0f; send other text as a string", maxStepNumber)
					problems = slices.DeleteFunc(problems, func(p step.Problem) bool { return p.Field == "value" })
				}
				for _, pr := range problems {
					errs.Add(fmt.Sprintf("login[%d].%s", i, pr.Field), "%s", pr.Message)
				}
				if st.Type == step.TypeText || st.Type == step.Select {
					if secrets.Typed == nil {
						secrets.Typed = map[int]string{}
					}
					secrets.Typed[i], st.Value = st.Value, ""
				}
				p.Login = append(p.Login, st)
			}
		}
	}
	if !create && in == (profileInput{}) {
		errs.Add("body", "send at least one field")
	}
	return secrets, errs.Err()
}

func presetNames() []string {
	var out []string
	for name := range model.NetworkPresets {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
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
func checkSecrets(in []secretInput, field string, max int, header bool, errs *model.FieldErrors) ([]string, map[string]string) {
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
		if msg := model.CheckHeaderValue(*s.Value, maxHeaderValueLen); msg != "" {
			errs.Add(f+".value", "%s", msg)
		} else if !header && strings.ContainsAny(*s.Value, "; ,\"\\") {
			errs.Add(f+".value", "must not contain spaces, commas, semicolons, quotes or backslashes")
		}
		names = append(names, name)
		values[key] = *s.Value
	}
	return names, values
}

// profileKind is how test profiles are shown, created, changed and deleted: their secrets
// sealed, one profile a page and device, one default, and a change of what measures the pages
// annotated.
func (s *Server) profileKind() itemKind[model.Profile, profileInput] {
	return itemKind[model.Profile, profileInput]{
		pathID:  "profileID",
		newItem: func() model.Profile { return model.Profile{ID: "prof_" + model.NewID()} },
		apply:   s.applyProfileWrite,
		list:    s.store.Profiles,
		get:     s.store.Profile,
		create:  s.store.CreateProfile,
		update:  s.store.UpdateProfile,
		remove:  s.store.DeleteProfile,
		written: func(ctx context.Context, site model.Website, old, p model.Profile) error {
			if p.ID != "" {
				if err := s.unsetOtherDefaults(ctx, site, p); err != nil {
					return err
				}
			}
			s.annotateProfile(ctx, site, old, p)
			return nil
		},
		show: func(site model.Website, p model.Profile, _ string) any { return toProfileJSON(site, p) },
	}
}

// applyProfileWrite applies a create's or update's fields over p and seals its secrets (on
// update only when some were sent), refusing a page and device another profile measures.
func (s *Server) applyProfileWrite(ctx context.Context, site model.Website, in profileInput, old model.Profile, p *model.Profile, create bool) (string, error) {
	p.Pages = slices.Clone(old.Pages)
	var open func() (model.ProfileSecrets, error)
	if !create {
		open = func() (model.ProfileSecrets, error) { return profile.Open(ctx, s.sealer, site, old) }
	}
	secrets, err := s.applyProfile(ctx, site, in, p, create, open)
	if err != nil {
		return "", err
	}
	others, err := s.store.Profiles(ctx, site)
	if err != nil {
		return "", err
	}
	if err := checkOthers(*p, others); err != nil {
		return "", err
	}
	if create || in.Headers != nil || in.Cookies != nil || in.BasicAuth != nil || in.Login != nil {
		if err := profile.Seal(ctx, s.sealer, site, p, secrets); err != nil {
			return "", err
		}
	}
	return "", nil
}

// checkOthers refuses a page and device another profile measures already: one profile
// measures a page on a device.
func checkOthers(p model.Profile, others []model.Profile) error {
	var errs model.FieldErrors
	for i, pp := range p.Pages {
		for _, o := range others {
			if o.ID != p.ID && o.Measures(pp.Page, pp.Device) {
				errs.Add(fmt.Sprintf("pages[%d]", i), "is measured by the profile %s (%s): take it from that one first", o.ID, o.Name)
			}
		}
	}
	return errs.Err()
}

// unsetOtherDefaults keeps one default profile: p, when it is.
func (s *Server) unsetOtherDefaults(ctx context.Context, site model.Website, p model.Profile) error {
	if !p.Default {
		return nil
	}
	others, err := s.store.Profiles(ctx, site)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != p.ID && o.Default {
			o.Default = false
			if err := s.store.UpdateProfile(ctx, site, &o); err != nil && !model.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// annotateProfile records a change of what measures the pages as an annotation, so that a
// change of their metrics it causes is not blamed on the pages: the pages a profile starts or
// stops measuring, or whose measuring profile changes its settings; the whole website when the
// default profile changes. A change of measurement method says so: its level shift is the
// method's (the regression detector starts a new baseline there, see docs/regressions.md). A
// failure is logged: the profile is stored already.
func (s *Server) annotateProfile(ctx context.Context, site model.Website, old, p model.Profile) {
	method := func(x model.Profile) string { return model.MethodOr(x.Method, site.Method) }
	measuring := func(a, b model.Profile) bool { // a measures the same way b does
		return a.Network == b.Network && a.RTTMs == b.RTTMs && a.ThroughputK == b.ThroughputK && a.CPUSlowdown == b.CPUSlowdown &&
			a.Width == b.Width && a.Height == b.Height && a.UserAgent == b.UserAgent && slices.Equal(a.HeaderNames, b.HeaderNames) &&
			slices.Equal(a.CookieNames, b.CookieNames) && a.BasicAuthUser == b.BasicAuthUser && slices.Equal(a.Origins, b.Origins) && slices.Equal(a.Login, b.Login) &&
			string(a.Secrets) == string(b.Secrets) && method(a) == method(b)
	}
	same := measuring(old, p)
	pages := map[string]bool{}
	for _, pp := range old.Pages {
		if !same || !p.Measures(pp.Page, pp.Device) {
			pages[pp.Page] = true
		}
	}
	for _, pp := range p.Pages {
		if !same || !old.Measures(pp.Page, pp.Device) {
			pages[pp.Page] = true
		}
	}
	website := old.Default != p.Default || (p.Default && !same)
	if len(pages) == 0 && !website {
		return
	}
	name := p.Name
	if p.ID == "" {
		name = old.Name
	}
	a := model.Annotation{ID: "ann_" + model.NewID(), At: s.now(), Created: s.now(),
		Text: fmt.Sprintf("Test profile %q changed: the pages it measures are measured differently", name)}
	if !website {
		for id := range pages {
			a.Pages = append(a.Pages, id)
		}
		slices.Sort(a.Pages)
	} else {
		a.Text = fmt.Sprintf("Default test profile changed (%q): pages without a profile of their own are measured differently", name)
	}
	if from, to := method(old), method(p); from != to {
		a.Text = fmt.Sprintf("Measurement method switched from %s to %s (test profile %q): a change of level here is the method's, not the page's", model.MethodLabel(from), model.MethodLabel(to), name)
		if website {
			a.Text = fmt.Sprintf("Measurement method switched from %s to %s (default test profile %q): a change of level here is the method's, not the pages'", model.MethodLabel(from), model.MethodLabel(to), name)
		}
	}
	if err := s.store.PutAnnotation(ctx, site, a); err != nil {
		s.log.ErrorContext(ctx, "annotate a change of test profile", "profile", p.ID, "err", err)
	}
}
