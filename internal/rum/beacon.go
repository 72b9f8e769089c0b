// Package rum is the pipeline of real-user monitoring: the snippet, the beacons it sends and
// their validation, the page views the collect endpoint queues (its messages, message.go) and
// the field-testing reports read from the rollups. The rumworker package consumes the queues
// and folds the views into the rollups; the rollup package is the engine beneath both.
package rum

import (
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// MaxBeaconBytes is the largest beacon the collect endpoint reads.
const MaxBeaconBytes = 16 << 10

// Metrics are the timing metric names the field-testing reports take in timing=, with the
// largest value a browser can plausibly report for each; a value above it is dropped as garbage.
var Metrics = map[string]float64{
	"lcp": hour, "fcp": hour, "fp": hour, "fid": hour, "inp": hour, "ttfb": hour,
	"cls":      100,
	"dns_time": hour, "connect_time": hour, "server_time": hour, "transfer_time": hour,
	"dom_time": hour, "fully_loaded_time": hour,
	"transfer_size": 1 << 34, "dom_size": 1 << 34, "dom_elements": 1 << 24,
}

const hour = 3_600_000 // ms

// Custom variables: numeric values a page sets; names must not shadow a metric.
const (
	maxCustomPerBeacon = 10
	maxCustomValue     = 1e12
)

var customName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// IsCustomName tells whether name is a valid custom variable name.
func IsCustomName(name string) bool {
	_, std := Metrics[name]
	return !std && customName.MatchString(name)
}

// Beacon is one page view as the snippet sends it.
type Beacon struct {
	Website string             `json:"w"`
	URL     string             `json:"u"`
	Metrics map[string]float64 `json:"m"`
	Custom  map[string]float64 `json:"c"`
	// ID is the view's ID as the snippet made it (see NewViewID), so that a beacon sent twice
	// counts once; "" from snippets before it, and collect makes one.
	ID string `json:"-"`
	// Hints are what the page knows of its visit: navigation type, connection, touch.
	Hints Hints `json:"-"`
	// Attribution is why the Core Web Vitals were what they were; nil without any.
	Attribution *Attribution `json:"-"`
}

// Hints are the segments the page tells: navigation type and effective connection type
// (values of DimNavigation and DimConnection, 0 when not told), whether the screen has
// several touch points (an iPad says Macintosh otherwise), and whether the browser is
// automated (navigator.webdriver). NotRestored are the reasons the back/forward cache gave
// for not restoring a back or forward navigation (notRestoredReasons, Chrome 123+).
type Hints struct {
	Navigation, Connection uint64
	Touch, Webdriver       bool
	NotRestored            []string
}

// ErrBadBeacon is a beacon that cannot be read; the collect endpoint answers 400 and says no
// more (it never echoes input).
var ErrBadBeacon = errors.New("the beacon is not valid")

// MaxViewsPerBeacon is the most page views one beacon carries: a page lifecycle's hard load
// and its soft navigations, which the snippet sends together when the page is hidden (more in
// several beacons).
const MaxViewsPerBeacon = 32

// ParseBeacon reads a beacon of one page view (the snippet's before soft navigations).
func ParseBeacon(body []byte) (Beacon, error) {
	views, err := ParseBeacons(body)
	if err != nil {
		return Beacon{}, err
	}
	if len(views) != 1 {
		return Beacon{}, ErrBadBeacon
	}
	return views[0], nil
}

// ParseBeacons reads a beacon: one page view (w, u, m, c, s, a: every snippet before soft
// navigations, still embedded in pages) or a page lifecycle's views (w, c and v, an array of
// views each with its i, u, m, s and a). Unknown metric names and values that are not finite,
// negative or implausibly large are dropped, not refused: one broken metric must not lose the
// page view.
func ParseBeacons(body []byte) ([]Beacon, error) {
	var raw struct {
		Website string                     `json:"w"`
		Custom  map[string]json.RawMessage `json:"c"`
		Views   []json.RawMessage          `json:"v"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, ErrBadBeacon
	}
	if raw.Website == "" || len(raw.Website) > 64 || len(raw.Views) > MaxViewsPerBeacon {
		return nil, ErrBadBeacon
	}
	var custom map[string]float64
	for name, v := range raw.Custom {
		if len(custom) == maxCustomPerBeacon {
			break
		}
		if f, ok := number(v); ok && IsCustomName(name) && f <= maxCustomValue {
			if custom == nil {
				custom = map[string]float64{}
			}
			custom[name] = f
		}
	}
	if raw.Views == nil {
		b, err := parseView(body)
		if err != nil {
			return nil, err
		}
		b.Website, b.Custom, b.ID = raw.Website, custom, ""
		return []Beacon{b}, nil
	}
	out := make([]Beacon, 0, len(raw.Views))
	for _, v := range raw.Views {
		b, err := parseView(v)
		if err != nil {
			return nil, err
		}
		b.Website, b.Custom = raw.Website, custom
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, ErrBadBeacon
	}
	return out, nil
}

// parseView reads one view's members: i, u, m, s and a.
func parseView(body []byte) (Beacon, error) {
	var raw struct {
		ID          json.RawMessage            `json:"i"`
		URL         string                     `json:"u"`
		Metrics     map[string]json.RawMessage `json:"m"`
		Hints       json.RawMessage            `json:"s"`
		Attribution json.RawMessage            `json:"a"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Beacon{}, ErrBadBeacon
	}
	if raw.URL == "" || len(raw.URL) > 2048 {
		return Beacon{}, ErrBadBeacon
	}
	b := Beacon{URL: raw.URL, Metrics: map[string]float64{},
		Hints: parseHints(raw.Hints), Attribution: parseAttribution(raw.Attribution)}
	if id := str(raw.ID); id != "" {
		if _, ok := ParseViewID(id); ok {
			b.ID = strings.ToLower(id)
		}
	}
	for name, v := range raw.Metrics {
		limit, known := Metrics[name]
		if f, ok := number(v); known && ok && f <= limit {
			b.Metrics[name] = f
		}
	}
	return b, nil
}

// The limits of the back/forward cache's reasons: at most three, each a short token.
const (
	maxNotRestored      = 3
	maxNotRestoredBytes = 64
)

// parseHints reads the snippet's hints field by field; what is not valid is unknown.
func parseHints(raw json.RawMessage) Hints {
	var in struct {
		Navigation  json.RawMessage   `json:"n"`
		Connection  json.RawMessage   `json:"e"`
		Touch       json.RawMessage   `json:"t"`
		Webdriver   json.RawMessage   `json:"d"`
		NotRestored []json.RawMessage `json:"b"`
	}
	var h Hints
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return h
	}
	nav := str(in.Navigation)
	if nav == "soft-navigation" { // web-vitals' own name, in case a page sends it
		nav = "soft"
	}
	h.Navigation, _ = DimNavigation.Value(nav)
	h.Connection, _ = DimConnection.Value(str(in.Connection))
	t, _ := number(in.Touch)
	d, _ := number(in.Webdriver)
	h.Touch, h.Webdriver = t > 0 || string(in.Touch) == "true", d > 0 || string(in.Webdriver) == "true"
	for _, r := range in.NotRestored {
		if len(h.NotRestored) == maxNotRestored {
			break
		}
		if reason := notRestoredReason(str(r)); reason != "" && !slices.Contains(h.NotRestored, reason) {
			h.NotRestored = append(h.NotRestored, reason)
		}
	}
	return h
}

// notRestoredReason keeps a reason the browser names (lower-case letters, digits, - and _,
// such as "unload-listener" or "response-cache-control-no-store"); anything else is dropped.
func notRestoredReason(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > maxNotRestoredBytes {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return ""
		}
	}
	return s
}

// number reads a JSON number that is finite and not negative; anything else (strings, null,
// NaN written as a string) is not a number here.
func number(raw json.RawMessage) (float64, bool) {
	var f float64
	if string(raw) == "null" {
		return 0, false
	}
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, false
	}
	return f, true
}

// PageKey normalizes a page URL into the page key of the field-testing reports: the path only (no scheme, host, query or
// fragment), lower-cased, without a trailing slash except for the home path "/". It also
// returns the URL's host (with port), for the domain check.
func PageKey(raw string) (key, host string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", ErrBadBeacon
	}
	key = strings.ToLower(u.EscapedPath())
	key = strings.TrimRight(key, "/")
	if key == "" {
		key = "/"
	}
	if len(key) > 512 {
		return "", "", ErrBadBeacon
	}
	return key, strings.ToLower(u.Host), nil
}

// OnDomain tells whether a page's host belongs to a website's domain: the domain itself or its
// www. twin (www.example.com for example.com, and example.com for www.example.com).
func OnDomain(host, domain string) bool {
	domain = strings.ToLower(domain)
	if host == domain {
		return true
	}
	if bare, ok := strings.CutPrefix(domain, "www."); ok {
		return host == bare
	}
	return host == "www."+domain
}
