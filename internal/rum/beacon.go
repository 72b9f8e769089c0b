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

// Beacon is what the snippet sends for one page view.
type Beacon struct {
	Website string             `json:"w"`
	URL     string             `json:"u"`
	Metrics map[string]float64 `json:"m"`
	Custom  map[string]float64 `json:"c"`
	// Hints are what the page knows of its visit: navigation type, connection, touch.
	Hints Hints `json:"-"`
	// Attribution is why the Core Web Vitals were what they were; nil without any.
	Attribution *Attribution `json:"-"`
}

// Hints are the segments the page tells: navigation type and effective connection type
// (values of DimNavigation and DimConnection, 0 when not told), whether the screen has
// several touch points (an iPad says Macintosh otherwise), and whether the browser is
// automated (navigator.webdriver).
type Hints struct {
	Navigation, Connection uint64
	Touch, Webdriver       bool
}

// ErrBadBeacon is a beacon that cannot be read; the collect endpoint answers 400 and says no
// more (it never echoes input).
var ErrBadBeacon = errors.New("the beacon is not valid")

// ParseBeacon reads a beacon from a request body. Unknown metric names and values that are not
// finite, negative or implausibly large are dropped, not refused: one broken metric must not
// lose the page view.
func ParseBeacon(body []byte) (Beacon, error) {
	var raw struct {
		Website     string                     `json:"w"`
		URL         string                     `json:"u"`
		Metrics     map[string]json.RawMessage `json:"m"`
		Custom      map[string]json.RawMessage `json:"c"`
		Hints       json.RawMessage            `json:"s"`
		Attribution json.RawMessage            `json:"a"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Beacon{}, ErrBadBeacon
	}
	if raw.Website == "" || len(raw.Website) > 64 || raw.URL == "" || len(raw.URL) > 2048 {
		return Beacon{}, ErrBadBeacon
	}
	b := Beacon{Website: raw.Website, URL: raw.URL, Metrics: map[string]float64{},
		Hints: parseHints(raw.Hints), Attribution: parseAttribution(raw.Attribution)}
	for name, v := range raw.Metrics {
		limit, known := Metrics[name]
		if f, ok := number(v); known && ok && f <= limit {
			b.Metrics[name] = f
		}
	}
	for name, v := range raw.Custom {
		if len(b.Custom) == maxCustomPerBeacon {
			break
		}
		if f, ok := number(v); ok && IsCustomName(name) && f <= maxCustomValue {
			if b.Custom == nil {
				b.Custom = map[string]float64{}
			}
			b.Custom[name] = f
		}
	}
	return b, nil
}

// parseHints reads the snippet's hints field by field; what is not valid is unknown.
func parseHints(raw json.RawMessage) Hints {
	var in struct {
		Navigation json.RawMessage `json:"n"`
		Connection json.RawMessage `json:"e"`
		Touch      json.RawMessage `json:"t"`
		Webdriver  json.RawMessage `json:"d"`
	}
	var h Hints
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return h
	}
	h.Navigation, _ = DimNavigation.Value(str(in.Navigation))
	h.Connection, _ = DimConnection.Value(str(in.Connection))
	t, _ := number(in.Touch)
	d, _ := number(in.Webdriver)
	h.Touch, h.Webdriver = t > 0 || string(in.Touch) == "true", d > 0 || string(in.Webdriver) == "true"
	return h
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
