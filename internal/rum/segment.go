package rum

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// A page view's segments are packed into one integer, the key of the segment tables: each
// dimension a field of bits, 0 meaning unknown. Filters and breakdowns are masks over it, so
// the fold and the reports never compare strings.
type Segments uint64

// Dim is one dimension of the segments: its name in the API, its field of bits and the names
// of its values (index 0 is "unknown"). Country and group have values outside a fixed list.
type Dim struct {
	Name   string
	shift  uint
	width  uint
	values []string
}

// The segment dimensions.
var (
	DimDevice     = &Dim{Name: "device", shift: 0, width: 2, values: []string{"unknown", "mobile", "tablet", "desktop"}}
	DimBrowser    = &Dim{Name: "browser", shift: 2, width: 4, values: []string{"unknown", "chrome", "edge", "firefox", "safari", "samsung", "opera", "other"}}
	DimOS         = &Dim{Name: "os", shift: 6, width: 4, values: []string{"unknown", "android", "ios", "windows", "macos", "linux", "chromeos", "other"}}
	DimConnection = &Dim{Name: "connection", shift: 10, width: 3, values: []string{"unknown", "4g", "3g", "2g", "slow-2g"}}
	DimNavigation = &Dim{Name: "navigation", shift: 13, width: 3, values: []string{"unknown", "navigate", "reload", "back-forward", "back-forward-cache", "prerender", "restore", "soft"}}
	// DimCountry holds ISO 3166-1 alpha-2 codes: 1 + 26*(first letter) + (second letter); 0
	// is unknown (XX).
	DimCountry = &Dim{Name: "country", shift: 16, width: 10}
	// DimGroup holds the ID of the website's page group the view matched; 0 is none.
	DimGroup = &Dim{Name: "group", shift: 26, width: 16}
)

// Dims are the segment dimensions, in the order of the API's documentation.
var Dims = []*Dim{DimGroup, DimDevice, DimBrowser, DimOS, DimConnection, DimNavigation, DimCountry}

// DimByName finds a dimension by its API name.
func DimByName(name string) (*Dim, bool) {
	for _, d := range Dims {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// Mask is the dimension's bits.
func (d *Dim) Mask() Segments { return Segments((uint64(1)<<d.width - 1) << d.shift) }

// Of reads the dimension's value from s.
func (d *Dim) Of(s Segments) uint64 { return uint64(s>>d.shift) & (1<<d.width - 1) }

// With returns s with the dimension set to v.
func (d *Dim) With(s Segments, v uint64) Segments {
	return s&^d.Mask() | Segments(v&(1<<d.width-1))<<d.shift
}

// Values are the names of the dimension's values, "unknown" first; nil for country and group.
func (d *Dim) Values() []string { return d.values }

// Unknown is what the API calls a value that is not known.
const Unknown = "unknown"

// Value returns the index of a value's name; false if the dimension has no such value.
// Countries are codes (XX or unknown for unknown); groups are read by the caller, which knows
// the website's group names.
func (d *Dim) Value(name string) (uint64, bool) {
	switch d {
	case DimCountry:
		if name == Unknown || strings.EqualFold(name, "XX") {
			return 0, true
		}
		v := countryIndex(strings.ToUpper(name))
		return v, v != 0
	case DimGroup:
		return 0, false
	}
	i := slices.Index(d.values, name)
	return uint64(max(i, 0)), i >= 0
}

// Name returns the API name of the dimension's value v (country codes for country, "" for a
// group, which the caller names).
func (d *Dim) ValueName(v uint64) string {
	switch d {
	case DimCountry:
		return CountryCode(v)
	case DimGroup:
		return ""
	}
	if v < uint64(len(d.values)) {
		return d.values[v]
	}
	return Unknown
}

// countryIndex packs an ISO code; 0 for anything that is not two capital letters or is XX.
func countryIndex(code string) uint64 {
	if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' || code == "XX" {
		return 0
	}
	return 1 + uint64(code[0]-'A')*26 + uint64(code[1]-'A')
}

// CountryCode is the ISO code of a packed country; XX for 0.
func CountryCode(v uint64) string {
	if v == 0 || v > 26*26 {
		return "XX"
	}
	v--
	return string([]byte{byte('A' + v/26), byte('A' + v%26)})
}

// WithCountry sets the country of s from its ISO code.
func (s Segments) WithCountry(code string) Segments {
	return DimCountry.With(s, countryIndex(code))
}

// MaskOf is the mask of a set of dimensions.
func MaskOf(dims ...*Dim) Segments {
	var m Segments
	for _, d := range dims {
		m |= d.Mask()
	}
	return m
}

// Full is the mask of every dimension.
var Full = MaskOf(Dims...)

// The materialized projections of the website-wide segment tables. A report over a set of
// dimensions (its filters and breakdown) reads the smallest table whose mask covers them:
// every pair of dimensions is in one of the small tables, so that any report naming at most
// two dimensions besides the group reads one; Full answers the rest. The device, browser, OS,
// connection and navigation go together in one table (they are few and correlated), and the
// country with the device, with browser and OS, and with connection and navigation. Measured
// on realistic traffic (BENCHMARKS.md), a day of 333,000 views fills these with 50 to 8,000
// rows, Full with 34,000; every table a view goes into costs the fold, which is why there are
// six.
var SiteMasks = []Segments{
	MaskOf(DimGroup, DimDevice),
	MaskOf(DimGroup, DimDevice, DimBrowser, DimOS, DimConnection, DimNavigation),
	MaskOf(DimGroup, DimCountry, DimDevice),
	MaskOf(DimGroup, DimCountry, DimBrowser, DimOS),
	MaskOf(DimGroup, DimCountry, DimConnection, DimNavigation),
	Full,
}

// AttributionMasks are the projections an attribution kind's website-wide tables keep: the
// group with the device, the browser, the country or the navigation, so that top attributions
// filter by group and one of those (an element's or a script's cost depends on them, and a
// single-page app's routes are not its page loads; the other segments matter less for what
// is slow, and every table a view goes into costs the fold); scripts and entities, several
// rows a view, by group and device only. Monitored pages keep every segment of their
// attributions.
func AttributionMasks(wide bool) []Segments {
	if !wide {
		return []Segments{MaskOf(DimGroup, DimDevice)}
	}
	return []Segments{MaskOf(DimGroup, DimDevice), MaskOf(DimGroup, DimBrowser), MaskOf(DimGroup, DimCountry), MaskOf(DimGroup, DimNavigation)}
}

// CoveringMask picks, of masks, the one covering need with the fewest possible rows (by the
// dimensions' widths); false if none covers it.
func CoveringMask(masks []Segments, need Segments) (Segments, bool) {
	best, found := Segments(0), false
	for _, m := range masks {
		if m&need != need {
			continue
		}
		if !found || bits.OnesCount64(uint64(m)) < bits.OnesCount64(uint64(best)) {
			best, found = m, true
		}
	}
	return best, found
}

// MaskDims names the dimensions of a mask.
func MaskDims(m Segments) []string {
	var names []string
	for _, d := range Dims {
		if m&d.Mask() == d.Mask() {
			names = append(names, d.Name)
		}
	}
	return names
}

// String shows the segments for logs and test failures.
func (s Segments) String() string {
	var parts []string
	for _, d := range Dims {
		v := d.Of(s)
		name := d.ValueName(v)
		if d == DimGroup {
			name = fmt.Sprint(v)
		}
		parts = append(parts, d.Name+"="+name)
	}
	return strings.Join(parts, ",")
}
