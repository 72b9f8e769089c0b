package api

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/profile"
)

// profileJSON is a test profile as the API shows it: the names of its headers and cookies, the
// user of its basic authentication and its login steps, never their secret values.
type profileJSON struct {
	ID        string              `json:"id"`
	Name      string              `json:"name"`
	Default   bool                `json:"default"`
	Pages     []model.ProfilePage `json:"pages"`
	Headers   []secretJSON        `json:"headers"`
	Cookies   []secretJSON        `json:"cookies"`
	BasicAuth *basicAuthJSON      `json:"basicAuth,omitempty"`
	Origins   []string            `json:"origins"`
	Login     []step.Step         `json:"login"`
	Network   networkJSON         `json:"network"`
	Viewport  *viewportJSON       `json:"viewport,omitempty"`
	UserAgent string              `json:"userAgent,omitempty"`
	Method    string              `json:"method"`
	CreatedAt time.Time           `json:"createdAt"`
	UpdatedAt time.Time           `json:"updatedAt"`
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

// toProfileJSON shows p, a profile of site: its method is its own, else the website's that it
// follows.
func toProfileJSON(site model.Website, p model.Profile) profileJSON {
	out := profileJSON{ID: p.ID, Name: p.Name, Default: p.Default, Pages: append([]model.ProfilePage{}, p.Pages...), Method: model.MethodOr(p.Method, site.Method),
		Headers: []secretJSON{}, Cookies: []secretJSON{}, Origins: append([]string{}, p.Origins...), Login: append([]step.Step{}, p.Login...), UserAgent: p.UserAgent,
		Network:   networkJSON{Preset: p.Network, RTTMs: nonZero(p.RTTMs), ThroughputKbps: nonZero(p.ThroughputK), CPUSlowdown: nonZero(p.CPUSlowdown)},
		CreatedAt: p.Created.UTC(), UpdatedAt: p.Updated.UTC()}
	for _, n := range p.HeaderNames {
		out.Headers = append(out.Headers, secretJSON{Name: n})
	}
	for _, n := range p.CookieNames {
		out.Cookies = append(out.Cookies, secretJSON{Name: n})
	}
	if p.BasicAuthUser != "" {
		out.BasicAuth = &basicAuthJSON{User: p.BasicAuthUser}
	}
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

// profileKind is how test profiles are shown, created, changed and deleted: their secrets
// sealed, one profile a page and device, one default, and a change of what measures the pages
// annotated.
func (s *Server) profileKind() itemKind[model.Profile, model.ProfilePatch] {
	return itemKind[model.Profile, model.ProfilePatch]{
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
func (s *Server) applyProfileWrite(ctx context.Context, site model.Website, in model.ProfilePatch, old model.Profile, p *model.Profile, create bool) (string, error) {
	p.Pages = slices.Clone(old.Pages)
	secrets, err := in.Apply(p, site, create, model.ProfileStore{
		Pages:   func() ([]model.Page, error) { return s.store.Pages(ctx, site) },
		Secrets: func() (model.ProfileSecrets, error) { return profile.Open(ctx, s.sealer, site, old) },
	})
	if err != nil {
		return "", err
	}
	others, err := s.store.Profiles(ctx, site)
	if err != nil {
		return "", err
	}
	if err := p.CheckOthers(others); err != nil {
		return "", err
	}
	if create || in.ChangesSecrets() {
		if err := profile.Seal(ctx, s.sealer, site, p, secrets); err != nil {
			return "", err
		}
	}
	return "", nil
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
	same := old.MeasuresLike(p, site.Method)
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
