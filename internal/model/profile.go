package model

import (
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/openvitals/openvitals/internal/model/step"
)

// Profile is a test profile: how a website's pages are audited when they are not anonymous
// visits over Lighthouse's default network. It says which requests carry extra headers,
// cookies and basic authentication (to the website's own hosts only), which login steps run in
// the browser before each Lighthouse run, and the network, CPU, viewport and user agent the
// run emulates. Its secrets (header and cookie values, the password, the values typed by
// steps) are sealed in Secrets; the other fields hold no secret.
type Profile struct {
	ID   string
	Name string
	// Default makes it the profile of every page and device that no profile names in Pages.
	Default bool `dynamodbav:",omitempty"`
	// Pages are the pages and devices it measures.
	Pages []ProfilePage `dynamodbav:",omitempty"`
	// HeaderNames and CookieNames name the headers and cookies whose values are sealed.
	HeaderNames []string `dynamodbav:",omitempty"`
	CookieNames []string `dynamodbav:",omitempty"`
	// BasicAuthUser is the user name of HTTP basic authentication ("" for none); its password
	// is sealed.
	BasicAuthUser string `dynamodbav:",omitempty"`
	// Origins are other origins of the website's site (scheme://host[:port], see
	// ProfileOrigin) that get the headers and basic authentication too; the website's own
	// origin always does, and no other.
	Origins []string `dynamodbav:",omitempty"`
	// Login steps are played in the audit's browser before each Lighthouse run; the values of
	// type and select steps are sealed, and blank here.
	Login []step.Step `dynamodbav:",omitempty"`
	// Network is a NetworkPresets name ("" for the device's default), and RTT, Throughput and
	// CPUSlowdown override its values when not zero.
	Network     string  `dynamodbav:",omitempty"`
	RTTMs       float64 `dynamodbav:",omitempty"`
	ThroughputK float64 `dynamodbav:",omitempty"` // kilobits per second
	CPUSlowdown float64 `dynamodbav:",omitempty"`
	// Width and Height are the viewport in CSS pixels (0: the device's).
	Width, Height int `dynamodbav:",omitempty"`
	// UserAgent replaces the device's user agent ("": the device's).
	UserAgent string `dynamodbav:",omitempty"`
	// Method is how its pages are measured, MethodApplied or MethodSimulated; "" (a profile
	// stored before methods, or created without one) follows the website's (see MethodFor).
	Method string `dynamodbav:",omitempty"`
	// Secrets is the sealed ProfileSecrets.
	Secrets []byte `dynamodbav:",omitempty"`
	Created time.Time
	Updated time.Time
}

// ProfilePage is a page and device a profile measures. The API shows it as it is (its JSON
// names).
type ProfilePage struct {
	Page   string `json:"page"`
	Device string `json:"device"`
}

// Measures tells whether p measures the page on the device by name (not by being the default).
func (p Profile) Measures(page, device string) bool {
	for _, pp := range p.Pages {
		if pp.Page == page && pp.Device == device {
			return true
		}
	}
	return false
}

// MeasuresLike tells whether p measures its pages the same way o does: the same network,
// viewport, user agent, headers, cookies, authentication, origins, login, secrets and method
// (a profile without one follows its website's, websiteMethod).
func (p Profile) MeasuresLike(o Profile, websiteMethod string) bool {
	return p.Network == o.Network && p.RTTMs == o.RTTMs && p.ThroughputK == o.ThroughputK && p.CPUSlowdown == o.CPUSlowdown &&
		p.Width == o.Width && p.Height == o.Height && p.UserAgent == o.UserAgent && slices.Equal(p.HeaderNames, o.HeaderNames) &&
		slices.Equal(p.CookieNames, o.CookieNames) && p.BasicAuthUser == o.BasicAuthUser && slices.Equal(p.Origins, o.Origins) &&
		slices.Equal(p.Login, o.Login) && string(p.Secrets) == string(o.Secrets) &&
		MethodOr(p.Method, websiteMethod) == MethodOr(o.Method, websiteMethod)
}

// ProfileFor picks the profile of a page on a device: the one that names them, else the
// website's default; false when there is none.
func ProfileFor(profiles []Profile, page, device string) (Profile, bool) {
	for _, p := range profiles {
		if p.Measures(page, device) {
			return p, true
		}
	}
	for _, p := range profiles {
		if p.Default {
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileSecrets are a profile's secret values, sealed together.
type ProfileSecrets struct {
	Headers  map[string]string `json:"headers,omitempty"`
	Cookies  map[string]string `json:"cookies,omitempty"`
	Password string            `json:"password,omitempty"`
	// Typed are the values of the login's type and select steps, by the step's index.
	Typed map[int]string `json:"typed,omitempty"`
}

// ProfileAAD is what a profile's sealed values are bound to: its website and itself.
func ProfileAAD(w Website, profile string) []byte {
	return []byte("profile\x00" + w.Account + "\x00" + w.ID + "\x00" + profile)
}

// Network is one of Lighthouse's throttling presets: the round trip time and throughput its
// simulation assumes, the upload throughput, and how much slower the CPU is made.
type Network struct {
	RTTMs       float64
	ThroughputK float64
	UploadK     float64
	CPUSlowdown float64
}

// NetworkPresets are Lighthouse's throttling presets (lantern's constants), by the name a
// profile gives.
var NetworkPresets = map[string]Network{
	"mobileSlow4G":    {RTTMs: 150, ThroughputK: 1.6 * 1024, UploadK: 750, CPUSlowdown: 4},
	"mobileRegular3G": {RTTMs: 300, ThroughputK: 700, UploadK: 700, CPUSlowdown: 4},
	"desktopDense4G":  {RTTMs: 40, ThroughputK: 10 * 1024, UploadK: 10 * 1024, CPUSlowdown: 1},
}

// DevicePresets name each device's preset when no profile names one (Lighthouse's own:
// mobile's default settings, desktop-config.js).
var DevicePresets = map[string]string{"mobile": "mobileSlow4G", "desktop": "desktopDense4G"}

// Lighthouse's factors from a preset's round trip and throughput to what DevTools applies to
// each request (lantern's DEVTOOLS_RTT_ADJUSTMENT_FACTOR and
// DEVTOOLS_THROUGHPUT_ADJUSTMENT_FACTOR): DevTools adds latency per request, not per round
// trip, and its throughput is of the payload.
const (
	DevtoolsRTTFactor        = 3.75
	DevtoolsThroughputFactor = 0.9
)

// MaxProfileOrigins is how many other origins a profile may name.
const MaxProfileOrigins = 10

// ProfileOrigin checks an origin a profile names besides its website's and returns it as
// scheme://host[:port], lower case: http or https, no path, query or credentials, and a host of
// the website's own site (the same registrable domain, e.g. api.example.com for
// www.example.com; the same host for an IP address or a single-label name), so that no
// profile sends its secrets to someone else's server.
func ProfileOrigin(websiteDomain, raw string) (string, error) {
	if len(raw) > 300 {
		return "", errors.New("must be at most 300 characters")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", errors.New("must be an origin such as https://api.example.com")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", errors.New("must be an origin alone: no path, query or credentials")
	}
	if p := u.Port(); p != "" {
		if n, err := net.LookupPort("tcp", p); err != nil || n < 1 || n > 65535 {
			return "", errors.New("has an invalid port")
		}
	}
	host, site := strings.ToLower(u.Hostname()), strings.ToLower(websiteDomain)
	if h, _, err := net.SplitHostPort(site); err == nil {
		site = h
	}
	if !sameSite(host, site) {
		return "", errors.New("must be of the website's own site (" + site + " or another host of its domain)")
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), nil
}

// sameSite tells whether two hosts are of one registrable domain; an IP address or a name
// without a public suffix is only its own.
func sameSite(a, b string) bool {
	if a == b {
		return true
	}
	if net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	da, errA := publicsuffix.EffectiveTLDPlusOne(a)
	db, errB := publicsuffix.EffectiveTLDPlusOne(b)
	return errA == nil && errB == nil && da == db
}
