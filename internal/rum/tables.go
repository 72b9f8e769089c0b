package rum

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/rollup"
)

// Vital is a metric the segment and attribution tables keep, with the Core Web Vitals
// thresholds of its ratings: good up to Good, poor above Poor, needs improvement between.
type Vital struct {
	Name       string
	Good, Poor float64
}

// Vitals are the metrics of the segment tables (the Core Web Vitals and their two loading
// companions), in the order of the fold.
var Vitals = []Vital{
	{"lcp", 2500, 4000},
	{"inp", 200, 500},
	{"cls", 0.1, 0.25},
	{"fcp", 1800, 3000},
	{"ttfb", 800, 1800},
}

// NumVitals is len(Vitals).
const NumVitals = 5

// VitalIndex finds a vital by name.
func VitalIndex(name string) (int, bool) {
	for i, v := range Vitals {
		if v.Name == name {
			return i, true
		}
	}
	return 0, false
}

// Rate is the rating of x: 0 good, 1 needs improvement, 2 poor.
func (v Vital) Rate(x float64) int {
	switch {
	case x <= v.Good:
		return 0
	case x <= v.Poor:
		return 1
	}
	return 2
}

// AttrKind is a kind of attribution row: what its key names, which vital's values it keeps
// and the names of the parts it sums.
type AttrKind struct {
	Name  string
	Vital int
	Parts []string
	// Masks are the projections of its website-wide tables (AttributionMasks).
	Masks []Segments
}

// The attribution kinds. Keys join their fields with KeySep.
var (
	// KindLCP rows are keyed by element and resource URL, with the four LCP phases.
	KindLCP = &AttrKind{"lcp", 0, []string{"timeToFirstByte", "resourceLoadDelay", "resourceLoadDuration", "elementRenderDelay"}, AttributionMasks(true)}
	// KindINP rows are keyed by interaction target and type, with the three INP phases.
	KindINP = &AttrKind{"inp", 1, []string{"inputDelay", "processingDuration", "presentationDelay"}, AttributionMasks(true)}
	// KindScript rows are keyed by entity, script URL and function, with the script's
	// duration; a view counts once per script of its interaction (up to three).
	KindScript = &AttrKind{"script", 1, []string{"duration"}, AttributionMasks(false)}
	// KindEntity rows are keyed by entity, with the duration of its scripts; a view counts
	// once per entity.
	KindEntity = &AttrKind{"entity", 1, []string{"duration"}, AttributionMasks(false)}
	// KindCLS rows are keyed by the element the largest shift moved, with its time.
	KindCLS = &AttrKind{"cls", 2, []string{"time"}, AttributionMasks(true)}
	// KindBFCache rows are keyed by a reason the back/forward cache gave for not restoring a
	// back or forward navigation, with the TTFB of the load it cost; a view counts once per
	// reason (up to three).
	KindBFCache = &AttrKind{"bfcache", 4, nil, AttributionMasks(false)}
	// KindStart rows are keyed by the target and type of the interaction that started a soft
	// navigation, with the LCP of the route it led to: which links lead to slow routes. Only
	// soft views have them, so that the navigation costs its table no rows: it filters by it.
	KindStart = &AttrKind{"start", 0, nil, []Segments{MaskOf(DimGroup, DimDevice, DimNavigation)}}
)

// AttrKinds are the attribution kinds in the order of the fold.
var AttrKinds = []*AttrKind{KindLCP, KindINP, KindScript, KindEntity, KindCLS, KindBFCache, KindStart}

// KeySep joins the fields of an attribution key.
const KeySep = "\x1f"

// AttrRow is one attribution of a view: its key, as the fields Key joins, and its parts.
// The fold finds a row by its fields and joins them only for a row it has not seen (a
// view's keys, joined, were a sixth of the fold's allocations).
type AttrRow struct {
	Fields  [3]string
	NFields int
	Parts   [rollup.MaxParts]float64
}

// Key is the row's key: its fields joined with KeySep.
func (r *AttrRow) Key() string { return strings.Join(r.Fields[:r.NFields], KeySep) }

func row(fields ...string) AttrRow {
	r := AttrRow{NFields: len(fields)}
	copy(r.Fields[:], fields)
	return r
}

// Rows lists the view's attribution rows of a kind (appended to out).
func (a *Attribution) Rows(kind *AttrKind, out []AttrRow) []AttrRow {
	if a == nil {
		return out
	}
	switch kind {
	case KindLCP:
		if a.LCP != nil {
			r := row(a.LCP.Element, a.LCP.URL)
			copy(r.Parts[:], a.LCP.Phases[:])
			out = append(out, r)
		}
	case KindINP:
		if a.INP != nil {
			r := row(a.INP.Target, a.INP.Type)
			copy(r.Parts[:], a.INP.Phases[:])
			out = append(out, r)
		}
	case KindScript:
		if a.INP != nil {
			for _, s := range a.INP.Scripts {
				r := row(s.Entity, s.URL, s.Function)
				r.Parts[0] = s.Duration
				out = append(out, r)
			}
		}
	case KindEntity:
		if a.INP != nil {
			start := len(out)
		scripts:
			for _, s := range a.INP.Scripts {
				for i := start; i < len(out); i++ {
					if out[i].Fields[0] == s.Entity {
						out[i].Parts[0] += s.Duration
						continue scripts
					}
				}
				r := row(s.Entity)
				r.Parts[0] = s.Duration
				out = append(out, r)
			}
		}
	case KindCLS:
		if a.CLS != nil {
			r := row(a.CLS.Target)
			r.Parts[0] = a.CLS.Time
			out = append(out, r)
		}
	case KindBFCache:
		for _, reason := range a.NotRestored {
			out = append(out, row(reason))
		}
	case KindStart:
		if a.Start != nil {
			out = append(out, row(a.Start.Target, a.Start.Type))
		}
	}
	return out
}

// Where the daily tables are stored (model.RUMCell with Daily): the dimension names a table
// and its projection, the metric is the vital's name.
const (
	// FullShards split the Full segment table of a day by the segments' hash.
	FullShards = 8
	// PageShards split the monitored pages' tables of a day by page.
	PageShards = 16
)

// SegmentDim names the website-wide segment table of a mask.
func SegmentDim(m Segments) string { return "s" + strconv.FormatUint(uint64(m), 36) }

// AttributionDim names the website-wide attribution table of a kind and mask.
func AttributionDim(kind *AttrKind, m Segments) string {
	return "a" + kind.Name + "." + strconv.FormatUint(uint64(m), 36)
}

// PageMasks are the projections of the monitored pages' segment tables (rows keyed by page ID
// and segments): the device with browser, OS, connection and navigation, and the device with
// the country. A page's views are few, but each of them would be a row of its own on every
// segment, and a table is rewritten whenever a batch touches it.
var PageMasks = []Segments{
	MaskOf(DimDevice, DimBrowser, DimOS, DimConnection, DimNavigation),
	MaskOf(DimDevice, DimCountry),
}

// PageAttributionMask is the projection of the monitored pages' attribution tables: the
// device (the page view's mobile or desktop).
var PageAttributionMask = MaskOf(DimDevice)

// PageSegmentDim names the monitored pages' segment table of a mask; PageAttributionDim their
// attribution table of a kind (keys prefixed by the page ID).
func PageSegmentDim(m Segments) string { return "ps" + strconv.FormatUint(uint64(m), 36) }

// PageAttributionDim names the monitored pages' attribution table of a kind.
func PageAttributionDim(kind *AttrKind) string { return "pa" + kind.Name }

// Shards is the number of shards of a daily table.
func Shards(dim string) int {
	switch {
	case dim == SegmentDim(Full):
		return FullShards
	case strings.HasPrefix(dim, "ps") || strings.HasPrefix(dim, "pa"):
		return PageShards
	}
	return 1
}

// FullShard places segments in a shard of the Full table.
func FullShard(s Segments) int {
	x := uint64(s) * 0x9e3779b97f4a7c15
	return int(x >> 61) // FullShards is 8: the top three bits
}

// PageShard places a monitored page in a shard of the pages' tables.
func PageShard(page string) int {
	h := fnv.New32a()
	h.Write([]byte(page))
	return int(h.Sum32() % PageShards)
}

// PageRowKey is the key of a monitored page's attribution row.
func PageRowKey(page, key string) string { return page + KeySep + key }
