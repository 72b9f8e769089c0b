package rum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
)

// SettingsStore reads a website's RUM settings (its page groups' names).
type SettingsStore interface {
	RUMSettings(ctx context.Context, account, website string) (model.RUMSettings, error)
}

// SegmentReader answers the reports over segments and attributions from the daily tables:
// trends, distributions, breakdowns and top attributions, for the whole website or one
// monitored page, filtered by any segments.
type SegmentReader struct {
	tables   ReportStore
	settings SettingsStore
}

// NewSegmentReader returns a SegmentReader over the table.
func NewSegmentReader(tables ReportStore, settings SettingsStore) *SegmentReader {
	return &SegmentReader{tables: tables, settings: settings}
}

// Filter keeps the views whose dimension has one of Values: names as the API writes them
// (device, browser... value names; country codes; group names).
type Filter struct {
	Dim    *Dim
	Values []string
}

// SegmentQuery asks for a vital's views of a website over a range of UTC days: all of them,
// or a monitored page's (Page), those matching every filter, broken down by a dimension (By).
type SegmentQuery struct {
	Account, Website string
	Metric           string
	From, To         time.Time
	Page             string
	Filters          []Filter
	By               *Dim
	// Percentile is the percentile reported (0 to 100); 0 means 75.
	Percentile float64
}

// QueryError is a query the reports cannot answer: Field names the parameter, as the API does.
type QueryError struct{ Field, Message string }

func (e *QueryError) Error() string { return e.Field + ": " + e.Message }

// Summary is what a set of views says of a vital.
type Summary struct {
	Views uint64 // weighted views with a value
	// Value is the requested percentile, Rated the weighted views rated good, needs
	// improvement and poor.
	Value float64
	Rated [3]uint64
}

// summarize reads a summary from counts.
func summarize(c *rollup.Counts, metric string, q float64) Summary {
	s := Summary{Views: c.Views(), Rated: c.Rated}
	if v, ok := c.Sketch.Quantile(q); ok {
		s.Value = Round(metric, v)
	}
	return s
}

// TrendDay is one day of a trend.
type TrendDay struct {
	Day string // yyyy-MM-dd
	Summary
}

// Series is one key's trend in a broken-down trend.
type Series struct {
	Key  string
	Days []TrendDay
}

// Trend is a vital day by day, overall and per key of the breakdown.
type Trend struct {
	Days   []TrendDay
	Series []Series
	// Partial tells that some views could not be told apart by segment (a day's table
	// reached its size and kept its smallest rows together): they are left out.
	Partial bool
}

// Bucket is a histogram bucket: the weighted views with From <= value < To (To 0: no bound).
type Bucket struct {
	From, To float64
	Views    uint64
}

// Distribution is the spread of a vital: its summary, percentiles and histogram.
type Distribution struct {
	Summary
	Percentiles map[string]float64 // p50, p75, p90, p95, p99
	Histogram   []Bucket
	Partial     bool
}

// Breakdown is a vital per key of a dimension.
type Breakdown struct {
	Total   Summary
	Rows    []BreakdownRow
	Partial bool
}

// BreakdownRow is one key of a breakdown.
type BreakdownRow struct {
	Key string
	Summary
}

// plan is where a query's rows are.
type plan struct {
	cells  []model.RUMCell
	filter func(rollup.RowKey) (ok, overflow bool)
	key    func(seg uint64) string // the breakdown key of a row
}

// maxReportDays bounds a report's range.
const maxReportDays = 400

func (r *SegmentReader) days(q SegmentQuery) ([]string, error) {
	from, to := q.From.UTC().Truncate(24*time.Hour), q.To.UTC().Truncate(24*time.Hour)
	if to.Before(from) || to.Sub(from) > maxReportDays*24*time.Hour {
		return nil, &QueryError{"date", fmt.Sprintf("a range of at most %d days", maxReportDays)}
	}
	var days []string
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(dayLayout))
	}
	return days, nil
}

// resolve reads the filters' values and the group names, and builds the filter of rows.
func (r *SegmentReader) resolve(ctx context.Context, q SegmentQuery) (need Segments, filter func(uint64) bool, groupName func(uint64) string, err error) {
	set, err := r.settings.RUMSettings(ctx, q.Account, q.Website)
	if err != nil {
		return 0, nil, nil, err
	}
	names := map[uint64]string{}
	ids := map[string]uint64{}
	for id, name := range set.GroupNames {
		names[uint64(id)] = name
		ids[strings.ToLower(name)] = uint64(id)
	}
	for _, g := range set.Groups {
		names[uint64(g.ID)] = g.Name
		ids[strings.ToLower(g.Name)] = uint64(g.ID)
	}
	groupName = func(id uint64) string {
		if id == 0 {
			return "(none)"
		}
		if name, ok := names[id]; ok {
			return name
		}
		return "#" + strconv.FormatUint(id, 10)
	}
	type allowed struct {
		dim    *Dim
		values []uint64
	}
	var filters []allowed
	for _, f := range q.Filters {
		a := allowed{dim: f.Dim}
		for _, name := range f.Values {
			var v uint64
			var ok bool
			if f.Dim == DimGroup {
				v, ok = ids[strings.ToLower(name)]
				if name == "(none)" {
					v, ok = 0, true
				}
			} else {
				v, ok = f.Dim.Value(name)
			}
			if !ok {
				return 0, nil, nil, &QueryError{f.Dim.Name, fmt.Sprintf("no %s %q", f.Dim.Name, name)}
			}
			a.values = append(a.values, v)
		}
		filters = append(filters, a)
		need |= f.Dim.Mask()
	}
	if q.By != nil {
		need |= q.By.Mask()
	}
	filter = func(seg uint64) bool {
		for _, f := range filters {
			if !slices.Contains(f.values, f.dim.Of(Segments(seg))) {
				return false
			}
		}
		return true
	}
	return need, filter, groupName, nil
}

// keyName names a row's breakdown key.
func keyName(by *Dim, seg uint64, groupName func(uint64) string) string {
	v := by.Of(Segments(seg))
	if by == DimGroup {
		return groupName(v)
	}
	return by.ValueName(v)
}

// scope reads the days of q and resolves its filters (see days and resolve).
func (r *SegmentReader) scope(ctx context.Context, q SegmentQuery) (days []string, need Segments, filter func(uint64) bool, groupName func(uint64) string, err error) {
	if days, err = r.days(q); err != nil {
		return nil, 0, nil, nil, err
	}
	need, filter, groupName, err = r.resolve(ctx, q)
	return days, need, filter, groupName, err
}

// segmentPlan plans a segment report.
func (r *SegmentReader) segmentPlan(ctx context.Context, q SegmentQuery) (plan, error) {
	if _, ok := VitalIndex(q.Metric); !ok {
		return plan{}, &QueryError{"metric", "one of lcp, inp, cls, fcp, ttfb"}
	}
	days, need, filter, groupName, err := r.scope(ctx, q)
	if err != nil {
		return plan{}, err
	}
	var p plan
	var dim string
	shards := []int{PageShard(q.Page)}
	if q.Page != "" {
		mask, ok := CoveringMask(PageMasks, need)
		if !ok {
			return plan{}, &QueryError{"filter", "a monitored page's views filter and break down by device with browser, os, connection and navigation, or by device and country"}
		}
		dim = PageSegmentDim(mask)
	} else {
		mask, _ := CoveringMask(SiteMasks, need) // Full covers every need
		dim = SegmentDim(mask)
		shards = make([]int, Shards(dim))
		for i := range shards {
			shards[i] = i
		}
	}
	for _, day := range days {
		for _, s := range shards {
			p.cells = append(p.cells, model.RUMCell{Day: day, Dim: dim, Metric: q.Metric, Shard: s, Daily: true})
		}
	}
	filtered := len(q.Filters) > 0 || q.By != nil
	p.filter = func(k rollup.RowKey) (bool, bool) {
		if q.Page != "" {
			if k.Key != q.Page {
				return false, false
			}
		} else if k.Key != "" { // the overflow row
			return !filtered, true
		}
		return filter(k.Seg), false
	}
	p.key = func(seg uint64) string {
		if q.By == nil {
			return ""
		}
		return keyName(q.By, seg, groupName)
	}
	return p, nil
}

// scan reads a plan's tables and calls row for each row the filter keeps, with its day; it
// reports whether rows were left out as overflow.
func (r *SegmentReader) scan(ctx context.Context, q SegmentQuery, p plan, row func(day string, k rollup.RowKey, s *rollup.Stat)) (partial bool, err error) {
	stored, err := r.tables.RUMTables(ctx, q.Account, q.Website, p.cells, false)
	if err != nil {
		return false, err
	}
	for _, c := range p.cells {
		st, ok := stored[c]
		if !ok {
			continue
		}
		keep := func(k rollup.RowKey) bool {
			keep, overflow := p.filter(k)
			if overflow && !keep {
				partial = true
			}
			return keep
		}
		err := rollup.ScanStatTableReusing(st.Data, keep, func(k rollup.RowKey, s *rollup.Stat) { row(c.Day, k, s) })
		if err != nil {
			return false, fmt.Errorf("RUM table %v: %w", c, err)
		}
	}
	return partial, nil
}

func (q SegmentQuery) quantile() float64 {
	if q.Percentile <= 0 {
		return 0.75
	}
	return q.Percentile / 100
}

// Trend is the vital's percentile and ratings day by day, and per key of the breakdown (the
// keys with most views first, at most maxSeries).
func (r *SegmentReader) Trend(ctx context.Context, q SegmentQuery) (Trend, error) {
	p, err := r.segmentPlan(ctx, q)
	if err != nil {
		return Trend{}, err
	}
	days, _ := r.days(q)
	total := map[string]*rollup.Counts{}
	byKey := map[string]map[string]*rollup.Counts{}
	partial, err := r.scan(ctx, q, p, func(day string, k rollup.RowKey, s *rollup.Stat) {
		merge(total, day, s)
		if q.By != nil {
			key := p.key(k.Seg)
			if byKey[key] == nil {
				byKey[key] = map[string]*rollup.Counts{}
			}
			merge(byKey[key], day, s)
		}
	})
	if err != nil {
		return Trend{}, err
	}
	series := func(m map[string]*rollup.Counts) []TrendDay {
		out := make([]TrendDay, 0, len(days))
		for _, day := range days {
			d := TrendDay{Day: isoDay(day)}
			if c := m[day]; c != nil {
				d.Summary = summarize(c, q.Metric, q.quantile())
			}
			out = append(out, d)
		}
		return out
	}
	t := Trend{Days: series(total), Partial: partial}
	for key, m := range byKey {
		t.Series = append(t.Series, Series{Key: key, Days: series(m)})
	}
	views := func(s Series) (n uint64) {
		for _, d := range s.Days {
			n += d.Views
		}
		return n
	}
	slices.SortFunc(t.Series, func(a, b Series) int {
		if c := cmp.Compare(views(b), views(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if len(t.Series) > maxSeries {
		t.Series = t.Series[:maxSeries]
	}
	return t, nil
}

const maxSeries = 10

// merge adds s's sketch and ratings to m's counts of key.
func merge[K comparable](m map[K]*rollup.Counts, key K, s *rollup.Stat) {
	c := m[key]
	if c == nil {
		c = &rollup.Counts{}
		m[key] = c
	}
	c.Sketch.Merge(&s.Sketch)
	for i := range c.Rated {
		c.Rated[i] += s.Rated[i]
	}
}

func isoDay(day string) string { return day[:4] + "-" + day[4:6] + "-" + day[6:] }

// Histogram bounds of each vital: buckets of equal width up to a bound, then one open bucket.
var histograms = map[string]struct{ width, bound float64 }{
	"lcp": {250, 8000}, "fcp": {200, 6000}, "ttfb": {100, 3000}, "inp": {25, 1000}, "cls": {0.01, 0.5},
}

// Distribution is the vital's summary, its usual percentiles and its histogram over the range.
func (r *SegmentReader) Distribution(ctx context.Context, q SegmentQuery) (Distribution, error) {
	if q.By != nil {
		return Distribution{}, &QueryError{"by", "a distribution is not broken down"}
	}
	p, err := r.segmentPlan(ctx, q)
	if err != nil {
		return Distribution{}, err
	}
	var all rollup.Counts
	partial, err := r.scan(ctx, q, p, func(_ string, _ rollup.RowKey, s *rollup.Stat) {
		all.Sketch.Merge(&s.Sketch)
		for i := range all.Rated {
			all.Rated[i] += s.Rated[i]
		}
	})
	if err != nil {
		return Distribution{}, err
	}
	d := Distribution{Summary: summarize(&all, q.Metric, q.quantile()), Partial: partial, Percentiles: map[string]float64{}}
	for _, pc := range []float64{50, 75, 90, 95, 99} {
		if v, ok := all.Sketch.Quantile(pc / 100); ok {
			d.Percentiles["p"+strconv.Itoa(int(pc))] = Round(q.Metric, v)
		}
	}
	h := histograms[q.Metric]
	n := int(math.Round(h.bound / h.width))
	d.Histogram = make([]Bucket, n+1)
	for i := range d.Histogram {
		d.Histogram[i] = Bucket{From: Round(q.Metric, float64(i)*h.width), To: Round(q.Metric, float64(i+1)*h.width)}
	}
	d.Histogram[n].To = 0
	all.Sketch.Each(func(v float64, c uint64) {
		i := min(int(v/h.width), n)
		d.Histogram[i].Views += c
	})
	return d, nil
}

// Breakdown is the vital per key of q.By, the keys with most views first.
func (r *SegmentReader) Breakdown(ctx context.Context, q SegmentQuery) (Breakdown, error) {
	if q.By == nil {
		return Breakdown{}, &QueryError{"by", "the dimension to break down by: " + strings.Join(dimNames(), ", ")}
	}
	p, err := r.segmentPlan(ctx, q)
	if err != nil {
		return Breakdown{}, err
	}
	var total rollup.Counts
	byKey := map[string]*rollup.Counts{}
	partial, err := r.scan(ctx, q, p, func(_ string, k rollup.RowKey, s *rollup.Stat) {
		merge(byKey, p.key(k.Seg), s)
		total.Sketch.Merge(&s.Sketch)
		for i := range total.Rated {
			total.Rated[i] += s.Rated[i]
		}
	})
	if err != nil {
		return Breakdown{}, err
	}
	b := Breakdown{Total: summarize(&total, q.Metric, q.quantile()), Partial: partial}
	for key, c := range byKey {
		b.Rows = append(b.Rows, BreakdownRow{Key: key, Summary: summarize(c, q.Metric, q.quantile())})
	}
	slices.SortFunc(b.Rows, func(a, b BreakdownRow) int {
		if c := cmp.Compare(b.Views, a.Views); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return b, nil
}

func dimNames() []string {
	var names []string
	for _, d := range Dims {
		names = append(names, d.Name)
	}
	return names
}

// AttributionRow is one attribution: what it names (Fields: element and url; target and type;
// entity, url and function; entity; target), its weighted views and slow views (needs
// improvement or poor), the vital's percentile and mean over them, and the means of its parts
// (which add up to the mean where the parts are phases).
type AttributionRow struct {
	Fields    map[string]string
	Views     uint64
	SlowViews uint64
	Value     float64
	Mean      float64
	Parts     map[string]float64
}

// Attributions are a vital's top attributions of each kind.
type Attributions struct {
	Metric    string
	Views     uint64 // weighted views with the vital in the attribution rows of its first kind
	SlowViews uint64
	Kinds     map[string][]AttributionRow
	Partial   bool
	// Unfiltered names the kinds left out because their tables do not keep the filter's
	// segments (scripts and entities by navigation), with why.
	Unfiltered map[string]string
}

// kindFields name the fields of each kind's key.
var kindFields = map[*AttrKind][]string{
	KindLCP:     {"element", "url"},
	KindINP:     {"target", "type"},
	KindScript:  {"entity", "url", "function"},
	KindEntity:  {"entity"},
	KindCLS:     {"target"},
	KindBFCache: {"reason"},
	KindStart:   {"target", "type"},
}

// ErrNoAttribution is a metric without attribution.
var ErrNoAttribution = errors.New("attribution is kept for lcp, inp, cls and ttfb (the back/forward cache's reasons)")

// Attributions ranks the attributions of q.Metric (lcp: elements; inp: targets, scripts and
// their entities; cls: shifted elements) by the slow views they account for, at most limit
// of each kind.
func (r *SegmentReader) Attributions(ctx context.Context, q SegmentQuery, limit int) (Attributions, error) {
	vi, ok := VitalIndex(q.Metric)
	if !ok || !slices.ContainsFunc(AttrKinds, func(k *AttrKind) bool { return k.Vital == vi }) {
		return Attributions{}, &QueryError{"metric", ErrNoAttribution.Error()}
	}
	if q.By != nil {
		return Attributions{}, &QueryError{"by", "attributions are not broken down"}
	}
	days, need, filter, _, err := r.scope(ctx, q)
	if err != nil {
		return Attributions{}, err
	}
	out := Attributions{Metric: q.Metric, Kinds: map[string][]AttributionRow{}}
	first := true
	for _, kind := range AttrKinds {
		if kind.Vital != vi {
			continue
		}
		p, unfiltered, err := attributionPlan(q, kind, days, need, filter)
		if err != nil {
			return Attributions{}, err
		}
		if unfiltered != "" {
			// The vital's first kind answers or the query is refused; a later one is left out
			// and said so.
			if first {
				return Attributions{}, &QueryError{"filter", unfiltered}
			}
			if out.Unfiltered == nil {
				out.Unfiltered = map[string]string{}
			}
			out.Unfiltered[kind.Name] = unfiltered
			continue
		}
		rows, partial, err := r.attributionStats(ctx, q, p)
		if err != nil {
			return Attributions{}, err
		}
		out.Partial = out.Partial || partial
		var list []AttributionRow
		for key, s := range rows {
			row := attributionRow(q, kind, key, s)
			if first {
				out.Views += row.Views
				out.SlowViews += row.SlowViews
			}
			list = append(list, row)
		}
		first = false
		out.Kinds[kind.Name] = rankAttributions(list, kind, limit)
	}
	return out, nil
}

// attributionPlan plans the reading of kind's attributions of q over days. When the kind's
// tables do not keep the segments q filters by (need), it returns why instead.
func attributionPlan(q SegmentQuery, kind *AttrKind, days []string, need Segments, filter func(uint64) bool) (p plan, unfiltered string, err error) {
	if q.Page != "" {
		if need&^PageAttributionMask != 0 {
			return plan{}, "", &QueryError{"filter", "a monitored page's attributions filter by device only"}
		}
		for _, day := range days {
			p.cells = append(p.cells, model.RUMCell{Day: day, Dim: PageAttributionDim(kind), Metric: q.Metric, Shard: PageShard(q.Page), Daily: true})
		}
	} else {
		mask, ok := CoveringMask(kind.Masks, need)
		if !ok {
			var kept []string
			for _, m := range kind.Masks {
				kept = append(kept, strings.Join(MaskDims(m), "+"))
			}
			return plan{}, fmt.Sprintf("%s attributions filter by %s only", kind.Name, strings.Join(kept, " or ")), nil
		}
		for _, day := range days {
			p.cells = append(p.cells, model.RUMCell{Day: day, Dim: AttributionDim(kind, mask), Metric: q.Metric, Daily: true})
		}
	}
	prefix := q.Page + KeySep
	p.filter = func(k rollup.RowKey) (bool, bool) {
		if k == rollup.OverflowKey {
			return len(q.Filters) == 0 && q.Page == "", true
		}
		if q.Page != "" && !strings.HasPrefix(k.Key, prefix) {
			return false, false
		}
		return filter(k.Seg), false
	}
	return p, "", nil
}

// attributionStats reads a plan of attributions and sums the rows it keeps by attribution
// (a monitored page's without the page's prefix).
func (r *SegmentReader) attributionStats(ctx context.Context, q SegmentQuery, p plan) (map[string]*rollup.Stat, bool, error) {
	prefix := q.Page + KeySep
	rows := map[string]*rollup.Stat{}
	partial, err := r.scan(ctx, q, p, func(_ string, k rollup.RowKey, s *rollup.Stat) {
		key := k.Key
		if q.Page != "" {
			key = strings.TrimPrefix(key, prefix)
		}
		acc := rows[key]
		if acc == nil {
			acc = &rollup.Stat{}
			rows[key] = acc
		}
		acc.Merge(s)
	})
	return rows, partial, err
}

// attributionRow is the row of the attribution key of kind, of its summed views s.
func attributionRow(q SegmentQuery, kind *AttrKind, key string, s *rollup.Stat) AttributionRow {
	views := s.Views()
	row := AttributionRow{Fields: map[string]string{}, Views: views, SlowViews: s.Rated[1] + s.Rated[2], Parts: map[string]float64{}}
	fields := strings.Split(key, KeySep)
	for i, name := range kindFields[kind] {
		if i < len(fields) {
			row.Fields[name] = fields[i]
		}
	}
	if v, ok := s.Sketch.Quantile(q.quantile()); ok {
		row.Value = Round(q.Metric, v)
	}
	if views > 0 {
		row.Mean = roundMean(q.Metric, s.Sum/float64(views))
		for i, name := range kind.Parts {
			// Parts are times in milliseconds, CLS's too (when its largest shift came).
			row.Parts[name] = roundMean("ms", s.Parts[i]/float64(views))
		}
	}
	return row
}

// rankAttributions sorts a kind's rows by the slow views they account for, then by views, and
// keeps the first limit.
func rankAttributions(list []AttributionRow, kind *AttrKind, limit int) []AttributionRow {
	slices.SortFunc(list, func(a, b AttributionRow) int {
		// The back/forward cache's reasons rank by the navigations they cost.
		if c := cmp.Compare(b.SlowViews, a.SlowViews); c != 0 && kind != KindBFCache {
			return c
		}
		if c := cmp.Compare(b.Views, a.Views); c != 0 {
			return c
		}
		return cmp.Compare(fmt.Sprint(a.Fields), fmt.Sprint(b.Fields))
	})
	if len(list) > limit {
		list = list[:limit]
	}
	return list
}

// roundMean rounds a mean: to 0.1 ms for times (phases adding up to the LCP within rounding),
// to 4 decimals for cls.
func roundMean(metric string, v float64) float64 {
	if metric == "cls" {
		return math.Round(v*10000) / 10000
	}
	return math.Round(v*10) / 10
}
