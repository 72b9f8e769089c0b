package rumworker

import (
	"fmt"
	"slices"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
)

// The daily segment and attribution tables are folded differently from the running totals: a
// view goes into one row of each of some 20 website-wide tables and a few attribution tables,
// so folding each message into tables of its own and merging them into the stored ones would
// build and grow tens of thousands of one-value sketches a batch. Instead the stored tables a
// batch touches are read into memory once (dayTables), every view is added to them directly
// (their sketches are already wide, so an add is an increment), and they are written back.
// Each stored table still remembers the batches last folded into it: a message it already
// holds (a retried fold) is not added to it again.

// daily holds the daily tables of the days a batch touches, by day.
type daily map[string]*dayTables

// segRow is a segment key's counts of every vital: one map entry per key and table.
type segRow [rum.NumVitals]rollup.Counts

// attrKey is a row of an attribution table: the segments and the interned attribution key.
type attrKey struct {
	seg uint64
	key uint32
}

// dayTables are one day's tables: the website-wide segment tables (per mask of rum.SiteMasks
// and shard), the attribution tables (per kind and mask of its Masks) and the
// monitored pages' tables (per page shard), with the attribution keys interned.
type dayTables struct {
	seg [][]map[rum.Segments]*segRow // [mask][shard]
	// segOverflow holds the overflow row of each website-wide segment table (rollup's
	// OverflowKey), kept apart so that the tables' rows are keyed by their segments alone.
	segOverflow [][]*segRow
	attr        [][]map[attrKey]*rollup.Stat                // [kind][mask]
	pageSeg     [][rum.PageShards]map[rollup.RowKey]*segRow // [mask][shard]
	pageAttr    [rum.PageShards][]map[attrKey]*rollup.Stat  // [shard][kind]
	keys        map[string]uint32
	names       []string
	// byFields and byPage find an attribution row's interned key from its fields, and a
	// monitored page's from the page and the row's key, without building the key.
	byFields map[attrFields]uint32
	byPage   map[pageKey]uint32
	// seen holds the stored tables that already hold a message of the batch (by the message's
	// index): such a message is added to the day's other tables only.
	seen map[model.RUMCell][]int
}

func newDayTables() *dayTables {
	d := &dayTables{seg: make([][]map[rum.Segments]*segRow, len(rum.SiteMasks)),
		attr: make([][]map[attrKey]*rollup.Stat, len(rum.AttrKinds)), keys: map[string]uint32{},
		byFields: map[attrFields]uint32{}, byPage: map[pageKey]uint32{}}
	for i, m := range rum.SiteMasks {
		d.seg[i] = make([]map[rum.Segments]*segRow, rum.Shards(rum.SegmentDim(m)))
		d.segOverflow = append(d.segOverflow, make([]*segRow, len(d.seg[i])))
		for s := range d.seg[i] {
			d.seg[i][s] = map[rum.Segments]*segRow{}
		}
	}
	for k, kind := range rum.AttrKinds {
		d.attr[k] = make([]map[attrKey]*rollup.Stat, len(kind.Masks))
		for m := range d.attr[k] {
			d.attr[k][m] = map[attrKey]*rollup.Stat{}
		}
	}
	d.pageSeg = make([][rum.PageShards]map[rollup.RowKey]*segRow, len(rum.PageMasks))
	for m := range d.pageSeg {
		for s := range d.pageSeg[m] {
			d.pageSeg[m][s] = map[rollup.RowKey]*segRow{}
		}
	}
	for s := range d.pageAttr {
		d.pageAttr[s] = make([]map[attrKey]*rollup.Stat, len(rum.AttrKinds))
		for k := range d.pageAttr[s] {
			d.pageAttr[s][k] = map[attrKey]*rollup.Stat{}
		}
	}
	return d
}

// attrFields are an attribution key's fields (rum.AttrRow's).
type attrFields struct {
	fields [3]string
	n      int
}

// pageKey is a monitored page's attribution key: the page and the interned row key.
type pageKey struct {
	page string
	key  uint32
}

// internRow interns the key of an attribution row.
func (d *dayTables) internRow(r *rum.AttrRow) uint32 {
	f := attrFields{r.Fields, r.NFields}
	id, ok := d.byFields[f]
	if !ok {
		id = d.intern(r.Key())
		d.byFields[f] = id
	}
	return id
}

// internPage interns the key of a monitored page's attribution row of key id.
func (d *dayTables) internPage(page string, id uint32) uint32 {
	k := pageKey{page, id}
	pid, ok := d.byPage[k]
	if !ok {
		pid = d.intern(rum.PageRowKey(page, d.names[id]))
		d.byPage[k] = pid
	}
	return pid
}

func (d *dayTables) intern(key string) uint32 {
	id, ok := d.keys[key]
	if !ok {
		id = uint32(len(d.names))
		d.keys[key] = id
		d.names = append(d.names, key)
	}
	return id
}

// vitalTimings are the vitals' places in a view's timings.
var vitalTimings = func() (idx [rum.NumVitals]int) {
	if len(rum.Vitals) != rum.NumVitals {
		panic("rumworker: rum.NumVitals is out of date")
	}
	for i, v := range rum.Vitals {
		j, ok := rum.TimingIndex(v.Name)
		if !ok {
			panic("rumworker: a vital is not a timing metric: " + v.Name)
		}
		idx[i] = j
	}
	return idx
}()

// fullMask is the index of rum.Full in rum.SiteMasks.
var fullMask = func() int {
	for i, m := range rum.SiteMasks {
		if m == rum.Full {
			return i
		}
	}
	panic("rumworker: rum.SiteMasks lacks Full")
}()

// measured is a view's vitals, each prepared once for the many rows it goes into.
type measured struct {
	have   uint8 // bit i: the view has vital i
	value  [rum.NumVitals]float64
	prep   [rum.NumVitals]rollup.Prepared
	rating [rum.NumVitals]int
	weight uint64
}

func measure(v *rum.WireView) measured {
	m := measured{weight: v.Weighted()}
	for i, j := range vitalTimings {
		if j < len(v.Timings) && v.Timings[j] >= 0 {
			x := v.Timings[j]
			m.have |= 1 << i
			m.value[i] = x
			m.prep[i] = rollup.Prepare(x)
			m.rating[i] = rum.Vitals[i].Rate(x)
		}
	}
	return m
}

func (r *segRow) add(m *measured, have uint8) {
	if have == 0 {
		return
	}
	for i := range r {
		if have&(1<<i) != 0 {
			r[i].Add(m.prep[i], m.rating[i], m.weight)
		}
	}
}

func segRowOf[K comparable](rows map[K]*segRow, k K) *segRow {
	row := rows[k]
	if row == nil {
		row = new(segRow)
		rows[k] = row
	}
	return row
}

func statOf(rows map[attrKey]*rollup.Stat, k attrKey) *rollup.Stat {
	s := rows[k]
	if s == nil {
		s = &rollup.Stat{}
		rows[k] = s
	}
	return s
}

// addMessage folds the views of the batch's message msg (their segments with the country)
// into their days' tables. It goes table by table, each over every view, so that a small
// table's rows stay in the processor's cache while the views go into it.
func (d daily) addMessage(msg int, views []rum.WireView) {
	f := messageFold{msg: msg, views: views, ms: make([]measured, len(views)), tables: make([]*dayTables, len(views))}
	for i := range views {
		f.ms[i] = measure(&views[i])
		f.tables[i] = d[views[i].Day]
	}
	f.addSegments()
	f.addAttributions(f.addPages())
}

// messageFold is one message's views on their way into their days' tables: each view's
// vitals, measured once, and its day's tables (nil for a day not folded), found once.
type messageFold struct {
	msg    int
	views  []rum.WireView
	ms     []measured
	tables []*dayTables
}

// attrOf is a view's attribution row of a kind: the view's index, the row's interned key and
// its parts.
type attrOf struct {
	view  int
	id    uint32
	parts [rollup.MaxParts]float64
}

// skip returns the vitals the stored table of day, dim and shard of t already holds from this
// message (a retried fold).
func (f *messageFold) skip(t *dayTables, day, dim string, shard int) uint8 {
	var bits uint8
	if len(t.seen) == 0 {
		return 0
	}
	for vi, vital := range rum.Vitals {
		if slices.Contains(t.seen[model.RUMCell{Day: day, Dim: dim, Metric: vital.Name, Shard: shard, Daily: true}], f.msg) {
			bits |= 1 << vi
		}
	}
	return bits
}

// addSegments adds the views to the website-wide segment tables. Each table's rows are found
// for every view first, then added to: the additions, a short loop of independent loads, then
// wait for several rows' cache lines at once instead of one after the other behind each map
// lookup.
func (f *messageFold) addSegments() {
	views := f.views
	segRows := make([]*segRow, len(views))
	segHave := make([]uint8, len(views))
	for mi, mask := range rum.SiteMasks {
		for j := range views {
			v, m, t := &views[j], &f.ms[j], f.tables[j]
			segRows[j] = nil
			if m.have == 0 || t == nil {
				continue
			}
			shard := 0
			if mi == fullMask {
				shard = rum.FullShard(v.Segments)
			}
			segRows[j] = segRowOf(t.seg[mi][shard], v.Segments&mask)
			segHave[j] = m.have &^ f.skip(t, v.Day, segDims[mi], shard)
		}
		for j, row := range segRows {
			if row != nil {
				row.add(&f.ms[j], segHave[j])
			}
		}
	}
}

// addPages adds each view to its monitored pages' segment and attribution tables, view by
// view, and returns the views' attribution rows of each kind, interned once, for
// addAttributions.
func (f *messageFold) addPages() [][]attrOf {
	var rows []rum.AttrRow
	perKind := make([][]attrOf, len(rum.AttrKinds))
	for j := range f.views {
		v, m, t := &f.views[j], &f.ms[j], f.tables[j]
		if m.have == 0 || t == nil {
			continue
		}
		for _, page := range v.Pages {
			shard := rum.PageShard(page)
			for mi, mask := range rum.PageMasks {
				segRowOf(t.pageSeg[mi][shard], rollup.RowKey{Seg: uint64(v.Segments & mask), Key: page}).add(m, m.have&^f.skip(t, v.Day, pageSegDims[mi], shard))
			}
		}
		if v.Attribution == nil {
			continue
		}
		for ki, kind := range rum.AttrKinds {
			vi := kind.Vital
			if m.have&(1<<vi) == 0 {
				continue
			}
			rows = v.Attribution.Rows(kind, rows[:0])
			for _, r := range rows {
				id := t.internRow(&r)
				if perKind[ki] == nil {
					perKind[ki] = make([]attrOf, 0, len(f.views))
				}
				perKind[ki] = append(perKind[ki], attrOf{view: j, id: id, parts: r.Parts})
				for _, page := range v.Pages {
					shard := rum.PageShard(page)
					if f.skip(t, v.Day, pageAttrDims[ki], shard)&(1<<vi) != 0 {
						continue
					}
					s := statOf(t.pageAttr[shard][ki], attrKey{seg: uint64(v.Segments & rum.PageAttributionMask), key: t.internPage(page, id)})
					s.Add(m.prep[vi], m.rating[vi], m.weight)
					s.AddSums(m.value[vi], r.Parts[:len(kind.Parts)], m.weight)
				}
			}
		}
	}
	return perKind
}

// addAttributions adds the views' attribution rows of each kind to the website-wide
// attribution tables, table by table, finding the rows first as addSegments does.
func (f *messageFold) addAttributions(perKind [][]attrOf) {
	var stats []*rollup.Stat
	for ki, kind := range rum.AttrKinds {
		vi := kind.Vital
		parts := len(kind.Parts)
		for mi, mask := range kind.Masks {
			stats = stats[:0]
			for _, a := range perKind[ki] {
				v, t := &f.views[a.view], f.tables[a.view]
				var s *rollup.Stat
				if f.skip(t, v.Day, attrDims[ki][mi], 0)&(1<<vi) == 0 {
					s = statOf(t.attr[ki][mi], attrKey{seg: uint64(v.Segments & mask), key: a.id})
				}
				stats = append(stats, s)
			}
			for i, a := range perKind[ki] {
				if s := stats[i]; s != nil {
					m := &f.ms[a.view]
					s.Add(m.prep[vi], m.rating[vi], m.weight)
					s.AddSums(m.value[vi], a.parts[:parts], m.weight)
				}
			}
		}
	}
}

// The names of the stored tables, made once.
var (
	segDims = func() (out []string) {
		for _, m := range rum.SiteMasks {
			out = append(out, rum.SegmentDim(m))
		}
		return out
	}()
	attrDims = func() (out [][]string) {
		for _, kind := range rum.AttrKinds {
			var names []string
			for _, m := range kind.Masks {
				names = append(names, rum.AttributionDim(kind, m))
			}
			out = append(out, names)
		}
		return out
	}()
	pageSegDims = func() (out []string) {
		for _, m := range rum.PageMasks {
			out = append(out, rum.PageSegmentDim(m))
		}
		return out
	}()
	pageAttrDims = func() (out []string) {
		for _, kind := range rum.AttrKinds {
			out = append(out, rum.PageAttributionDim(kind))
		}
		return out
	}()
)

// dailyTable tells which of a day's tables a stored dimension names.
type dailyTable struct {
	mask, kind int // indexes in rum.SiteMasks or the kind's Masks, and in rum.AttrKinds; -1 if none
	page       bool
}

var dailyTables = func() map[string]dailyTable {
	out := map[string]dailyTable{}
	for i, m := range rum.PageMasks {
		out[rum.PageSegmentDim(m)] = dailyTable{mask: i, kind: -1, page: true}
	}
	for i, m := range rum.SiteMasks {
		out[rum.SegmentDim(m)] = dailyTable{mask: i, kind: -1}
	}
	for k, kind := range rum.AttrKinds {
		for i, m := range kind.Masks {
			out[rum.AttributionDim(kind, m)] = dailyTable{mask: i, kind: k}
		}
		out[rum.PageAttributionDim(kind)] = dailyTable{mask: -1, kind: k, page: true}
	}
	return out
}()

// dailyCells lists the daily tables the views of a batch touch, without folding them.
func dailyCells(msgs []message) []model.RUMCell {
	set := map[model.RUMCell]bool{}
	var scratch []rum.AttrRow
	for _, msg := range msgs {
		for i := range msg.batch.Views {
			v := &msg.batch.Views[i]
			m := measure(v)
			if m.have == 0 || len(v.Day) != 8 {
				continue
			}
			add := func(dim string, shard int, have uint8) {
				for vi, vital := range rum.Vitals {
					if have&(1<<vi) != 0 {
						set[model.RUMCell{Day: v.Day, Dim: dim, Metric: vital.Name, Shard: shard, Daily: true}] = true
					}
				}
			}
			for mi := range rum.SiteMasks {
				shard := 0
				if mi == fullMask {
					shard = rum.FullShard(v.Segments)
				}
				add(segDims[mi], shard, m.have)
			}
			for _, page := range v.Pages {
				for mi := range rum.PageMasks {
					add(pageSegDims[mi], rum.PageShard(page), m.have)
				}
			}
			for ki, kind := range rum.AttrKinds {
				vital := uint8(1) << kind.Vital
				if v.Attribution == nil || m.have&vital == 0 {
					continue
				}
				if scratch = v.Attribution.Rows(kind, scratch[:0]); len(scratch) == 0 {
					continue
				}
				for mi := range kind.Masks {
					add(attrDims[ki][mi], 0, vital)
				}
				for _, page := range v.Pages {
					add(pageAttrDims[ki], rum.PageShard(page), vital)
				}
			}
		}
	}
	cells := make([]model.RUMCell, 0, len(set))
	for c := range set {
		cells = append(cells, c)
	}
	return cells
}

// load reads the stored daily tables of cells into memory, and which messages each holds.
func (d daily) load(cells []model.RUMCell, stored map[model.RUMCell]model.RUMTable, msgs []message) error {
	for _, c := range cells {
		t := d[c.Day]
		if t == nil {
			t = newDayTables()
			d[c.Day] = t
		}
		st, ok := stored[c]
		if !ok {
			continue
		}
		for i, m := range msgs {
			if slices.Contains(st.Applied, m.batch.ID) {
				if t.seen == nil {
					t.seen = map[model.RUMCell][]int{}
				}
				t.seen[c] = append(t.seen[c], i)
			}
		}
		which, ok := dailyTables[c.Dim]
		vi, vok := rum.VitalIndex(c.Metric)
		if !ok || !vok {
			return fmt.Errorf("no daily table %q %q", c.Dim, c.Metric)
		}
		err := rollup.ScanStatTable(st.Data, nil, func(k rollup.RowKey, s *rollup.Stat) {
			switch {
			case which.kind >= 0:
				rows := t.pageAttr[c.Shard][which.kind]
				if !which.page {
					rows = t.attr[which.kind][which.mask]
				}
				rows[attrKey{seg: k.Seg, key: t.intern(k.Key)}] = s
			case which.page:
				segRowOf(t.pageSeg[which.mask][c.Shard], k)[vi] = s.Counts
			default:
				if k.Key != "" {
					if t.segOverflow[which.mask][c.Shard] == nil {
						t.segOverflow[which.mask][c.Shard] = new(segRow)
					}
					t.segOverflow[which.mask][c.Shard][vi] = s.Counts
					return
				}
				segRowOf(t.seg[which.mask][c.Shard], rum.Segments(k.Seg))[vi] = s.Counts
			}
		})
		if err != nil {
			return fmt.Errorf("cell %v: %w", c, err)
		}
	}
	return nil
}

// table is one daily table as it is to be stored.
func (d daily) table(c model.RUMCell) (*rollup.StatTable, error) {
	t := d[c.Day]
	which, ok := dailyTables[c.Dim]
	vi, vok := rum.VitalIndex(c.Metric)
	if t == nil || !ok || !vok {
		return nil, fmt.Errorf("no daily table %v", c)
	}
	out := rollup.NewStatTable()
	switch {
	case which.kind >= 0:
		rows := t.pageAttr[c.Shard][which.kind]
		if !which.page {
			rows = t.attr[which.kind][which.mask]
		}
		for k, s := range rows {
			out.Rows[rollup.RowKey{Seg: k.seg, Key: t.names[k.key]}] = s
		}
	case which.page:
		for k, r := range t.pageSeg[which.mask][c.Shard] {
			if r[vi].Views() > 0 {
				out.Rows[k] = &rollup.Stat{Counts: r[vi]}
			}
		}
	default:
		for k, r := range t.seg[which.mask][c.Shard] {
			if r[vi].Views() > 0 {
				out.Rows[rollup.RowKey{Seg: uint64(k)}] = &rollup.Stat{Counts: r[vi]}
			}
		}
		if r := t.segOverflow[which.mask][c.Shard]; r != nil && r[vi].Views() > 0 {
			out.Rows[rollup.OverflowKey] = &rollup.Stat{Counts: r[vi]}
		}
	}
	return out, nil
}
