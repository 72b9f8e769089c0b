package rum

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// Site is what collect needs of a website to turn a beacon into a page view: its domain, its
// settings (page groups, sample rate, lab agents) and its monitored pages.
type Site struct {
	model.Website
	Settings model.RUMSettings
	groups   []compiledGroup
	// pages maps a normalized path to the monitored pages with that path, each with the
	// query parameters it names.
	pages map[string][]pageMatch
}

type compiledGroup struct {
	id      int
	pattern string
}

type pageMatch struct {
	id    string
	query url.Values
}

// NewSite prepares a website's settings and monitored pages for matching views.
func NewSite(w model.Website, set model.RUMSettings, pages []model.Page) *Site {
	s := &Site{Website: w, Settings: set, pages: map[string][]pageMatch{}}
	for _, g := range set.Groups {
		s.groups = append(s.groups, compiledGroup{id: g.ID, pattern: NormalizePattern(g.Pattern)})
	}
	for _, p := range pages {
		path, query, _ := strings.Cut(p.URL, "?")
		key, err := pathKey(path)
		if err != nil {
			continue
		}
		q, _ := url.ParseQuery(query)
		s.pages[key] = append(s.pages[key], pageMatch{id: p.ID, query: q})
	}
	return s
}

// Group is the ID of the first page group whose pattern matches a page key; 0 for none.
func (s *Site) Group(key string) int {
	for _, g := range s.groups {
		if Glob(g.pattern, key) {
			return g.id
		}
	}
	return 0
}

// Pages are the monitored pages a view of the page key and query matches: the page's path
// is the key, and each query parameter the page names has the same value in the view's query
// (parameters the page does not name do not matter).
func (s *Site) Pages(key string, query url.Values) []string {
	var ids []string
	for _, p := range s.pages[key] {
		if matchesQuery(p.query, query) {
			ids = append(ids, p.id)
		}
	}
	return ids
}

func matchesQuery(want, got url.Values) bool {
	for name, values := range want {
		for _, v := range values {
			if !slices.Contains(got[name], v) {
				return false
			}
		}
	}
	return true
}

// pathKey normalizes a path as PageKey does.
func pathKey(path string) (string, error) {
	u, err := url.Parse(path)
	if err != nil {
		return "", err
	}
	key := strings.TrimRight(strings.ToLower(u.EscapedPath()), "/")
	if key == "" {
		key = "/"
	}
	return key, nil
}

// NormalizePattern writes a page group pattern as the page keys it is matched against are
// written: lower-case, without a trailing slash (but "/").
func NormalizePattern(p string) string {
	p = strings.ToLower(strings.TrimSpace(p))
	if p != "/" {
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		p = "/"
	}
	return p
}

// Glob tells whether s matches pattern, where * matches any run of characters (slashes
// included) and every other character itself.
func Glob(pattern, s string) bool {
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			star, mark = px, sx
			px++
		case px < len(pattern) && pattern[px] == s[sx]:
			px++
			sx++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// The limits of the settings.
const (
	MaxGroups         = 50
	maxGroupName      = 64
	maxGroupPattern   = 200
	maxSampleWeight   = 1000
	maxGroupIDsInLife = 1<<16 - 1
)

// ApplySettings checks new settings and gives their groups IDs: a group keeps the ID of the
// group of the same name in old, a new name gets the next unused ID. GroupNames keeps every
// name an ID ever had (the latest). Settings that cannot be kept are a *model.InvalidError
// naming each bad field as the API does.
func ApplySettings(old, set model.RUMSettings) (model.RUMSettings, error) {
	var errs model.FieldErrors
	if len(set.Groups) > MaxGroups {
		errs.Add("groups", "at most %d groups", MaxGroups)
	}
	if set.SampleRate != 0 {
		w := 1 / set.SampleRate
		if set.SampleRate < 0 || set.SampleRate > 1 || w > maxSampleWeight || w-float64(int(w+0.5)) > 1e-9 || float64(int(w+0.5))-w > 1e-9 {
			errs.Add("sampleRate", "a rate r in (0, 1] with 1/r a whole number up to 1000 (1, 0.5, 0.25, 0.2, 0.1, 0.01 ...)")
		}
	}
	seen := map[string]bool{}
	for i, g := range set.Groups {
		field := fmt.Sprintf("groups[%d]", i)
		name := strings.TrimSpace(g.Name)
		switch {
		case name == "" || len(name) > maxGroupName:
			errs.Add(field+".name", "a name of 1 to %d characters", maxGroupName)
		case seen[strings.ToLower(name)]:
			errs.Add(field+".name", "names are unique")
		}
		seen[strings.ToLower(name)] = true
		if p := strings.TrimSpace(g.Pattern); !strings.HasPrefix(p, "/") || len(p) > maxGroupPattern || strings.ContainsAny(p, "?# \t") {
			errs.Add(field+".pattern", "a path starting with / (no query, no spaces), * for any run of characters")
		}
	}
	if err := errs.Err(); err != nil {
		return old, err
	}
	out := model.RUMSettings{SampleRate: set.SampleRate, ExcludeLabAgents: set.ExcludeLabAgents, GroupNames: map[int]string{}}
	if out.SampleRate == 1 {
		out.SampleRate = 0
	}
	next := 0
	for id, name := range old.GroupNames {
		out.GroupNames[id] = name
		next = max(next, id)
	}
	for _, g := range old.Groups {
		next = max(next, g.ID)
	}
	for _, g := range set.Groups {
		name := strings.TrimSpace(g.Name)
		id := 0
		for _, o := range old.Groups {
			if strings.EqualFold(o.Name, name) {
				id = o.ID
			}
		}
		if id == 0 {
			if next >= maxGroupIDsInLife {
				errs.Add("groups", "this website has used every group ID")
				return old, errs.Err()
			}
			next++
			id = next
		}
		out.Groups = append(out.Groups, model.PageGroup{ID: id, Name: name, Pattern: strings.TrimSpace(g.Pattern)})
		out.GroupNames[id] = name
	}
	return out, nil
}

// Route is where the real-user data of a page address is: its page key (the pages report's
// row), the monitored pages its views count for and the page group's name ("" for none).
type Route struct {
	Key   string
	Pages []string
	Group string
}

// Route matches a page address as View matches a view of it, so that a lab measurement of
// the address (a multistep journey's soft navigation) can be set beside its field data.
// ErrOffDomain: the address is not the website's.
func (s *Site) Route(raw string) (Route, error) {
	key, host, err := PageKey(raw)
	if err != nil {
		return Route{}, err
	}
	if !OnDomain(host, s.Domain) {
		return Route{}, ErrOffDomain
	}
	r := Route{Key: key}
	if u, err := url.Parse(raw); err == nil {
		r.Pages = s.Pages(key, u.Query())
	}
	if id := s.Group(key); id != 0 {
		for _, g := range s.Settings.Groups {
			if g.ID == id {
				r.Group = g.Name
			}
		}
	}
	return r, nil
}

// navSoft is DimNavigation's value of soft navigations.
var navSoft, _ = DimNavigation.Value("soft")

// Request is what collect knows of a beacon besides its body.
type Request struct {
	UserAgent string
	// Country is the trusted viewer country, "" when the aggregator is to place IP.
	Country, IP string
	Day         string // yyyymmdd, UTC
}

// Errors of View: the beacon is well formed but is not a real user's page view to count.
var (
	// ErrLabView is a page load of openvitals' own browsers, or of another lab agent where
	// the website excludes them.
	ErrLabView = errors.New("a lab agent's page view is not counted")
	// ErrOffDomain is a page outside the website's domain.
	ErrOffDomain = errors.New("the page is not on the website's domain")
	// ErrNoMetric is a beacon without any metric.
	ErrNoMetric = errors.New("the beacon has no metric")
)

// View turns a beacon of the website into the page view to queue: its page key, monitored
// pages and segments, its attribution with the scripts' entities named, and its weight.
func (s *Site) View(b Beacon, req Request) (View, error) {
	key, host, err := PageKey(b.URL)
	if err != nil {
		return View{}, ErrBadBeacon
	}
	if !OnDomain(host, s.Domain) {
		return View{}, ErrOffDomain
	}
	agent := ClassifyAgent(req.UserAgent, b.Hints.Touch, b.Hints.Webdriver)
	if agent.OwnLab || (agent.Lab && s.Settings.ExcludeLabAgents) {
		return View{}, ErrLabView
	}
	if len(b.Metrics) == 0 {
		return View{}, ErrNoMetric
	}
	v := View{ID: b.ID, Day: req.Day, Page: key, Country: req.Country, Metrics: b.Metrics, Weight: s.Settings.Weight(),
		Attribution: b.Attribution}
	// The interaction that started a navigation is a soft navigation's only.
	if v.Attribution != nil && v.Attribution.Start != nil && b.Hints.Navigation != navSoft {
		a := *v.Attribution
		a.Start = nil
		v.Attribution = &a
		if a.LCP == nil && a.INP == nil && a.CLS == nil {
			v.Attribution = nil
		}
	}
	if len(b.Hints.NotRestored) > 0 {
		if v.Attribution == nil {
			v.Attribution = &Attribution{}
		}
		v.Attribution.NotRestored = b.Hints.NotRestored
	}
	if v.Weight == 1 {
		v.Weight = 0
	}
	if v.Country == "" {
		v.IP = req.IP
	}
	for name, val := range b.Custom {
		v.Metrics[name] = val
	}
	var seg Segments
	seg = DimDevice.With(seg, agent.Device)
	seg = DimBrowser.With(seg, agent.Browser)
	seg = DimOS.With(seg, agent.OS)
	seg = DimConnection.With(seg, b.Hints.Connection)
	seg = DimNavigation.With(seg, b.Hints.Navigation)
	seg = DimGroup.With(seg, uint64(s.Group(key)))
	v.Segments = seg
	if u, err := url.Parse(b.URL); err == nil {
		v.Pages = s.Pages(key, u.Query())
	}
	v.Attribution.NameEntities(s.Domain)
	return v, nil
}
