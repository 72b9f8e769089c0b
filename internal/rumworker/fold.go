package rumworker

import (
	"sync"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
)

// partKey names the tables of one day, dimension and shard.
type partKey struct {
	day, dim string
	shard    int
}

// part is what a fold adds to one day, dimension and shard: page views and a sketch per
// timing metric by key, and custom variables.
type part struct {
	keys   map[string]*keyTotals
	custom map[string]map[string]*rollup.Sketch // name, key
}

// keyTotals are a key's page views and a sketch per timing metric: one map entry a key.
type keyTotals struct {
	views   uint64
	timings [rum.NumTimings]rollup.Sketch
}

// fold is what one batch adds to the tables it touches.
type fold struct {
	parts map[partKey]*part
	// bins and totals are where the parts' keys' totals and their sketches' bins come from:
	// a few allocations a batch instead of a few a key, and none once the fold is reused.
	bins                  rollup.Arena
	totals                [][]keyTotals // chunks of totalsChunk; totals[:usedTotals] hand out, the last up to nextTotal
	usedTotals, nextTotal int
}

// totalsChunk is the keys' totals a fold makes at once.
const totalsChunk = 64

// folds keeps released folds: a worker folds message after message, and reusing a fold's
// chunks spares it allocating the same bins and totals again for each.
var folds = sync.Pool{New: func() any { return &fold{parts: map[partKey]*part{}} }}

// newFold returns an empty fold, reused if one was released.
func newFold() *fold { return folds.Get().(*fold) }

// release empties f for the next newFold. Nothing may read f, its tables or their sketches
// after: their bins become another fold's.
func (f *fold) release() {
	clear(f.parts)
	f.bins.Reset()
	for _, c := range f.totals[:f.usedTotals] {
		clear(c)
	}
	f.usedTotals, f.nextTotal = 0, 0
	folds.Put(f)
}

// newTotals is a new key's zero totals.
func (f *fold) newTotals() *keyTotals {
	if f.usedTotals == 0 || f.nextTotal == totalsChunk {
		if f.usedTotals == len(f.totals) {
			f.totals = append(f.totals, make([]keyTotals, totalsChunk))
		}
		f.usedTotals++
		f.nextTotal = 0
	}
	kt := &f.totals[f.usedTotals-1][f.nextTotal]
	f.nextTotal++
	return kt
}

// add folds one view into the given days (the view's day and the later days of its month
// that already have running totals).
func (f *fold) add(days []string, v rum.WireView) {
	// Each value's bin, found once for the two tables and the days it goes into.
	var prep [rum.NumTimings]rollup.Prepared
	for i, x := range v.Timings[:min(len(v.Timings), rum.NumTimings)] {
		prep[i] = rollup.Prepare(x)
	}
	for _, day := range days {
		f.addKey(partKey{day, rollup.DimPages, rollup.ShardOf(rollup.DimPages, v.Page)}, v.Page, v, &prep)
		f.addKey(partKey{day, rollup.DimCountries, 0}, v.Country, v, &prep)
	}
}

func (f *fold) addKey(pk partKey, key string, v rum.WireView, prep *[rum.NumTimings]rollup.Prepared) {
	p := f.parts[pk]
	if p == nil {
		p = &part{keys: map[string]*keyTotals{}}
		f.parts[pk] = p
	}
	w := v.Weighted()
	kt := p.keys[key]
	if kt == nil {
		kt = f.newTotals()
		p.keys[key] = kt
	}
	kt.views += w
	for i := range prep {
		kt.timings[i].AddPreparedIn(&f.bins, prep[i], w)
	}
	for name, x := range v.Custom {
		if p.custom == nil {
			p.custom = map[string]map[string]*rollup.Sketch{}
		}
		byKey := p.custom[name]
		if byKey == nil {
			byKey = map[string]*rollup.Sketch{}
			p.custom[name] = byKey
		}
		s := byKey[key]
		if s == nil {
			s = &rollup.Sketch{}
			byKey[key] = s
		}
		s.AddWeighted(x, w)
	}
}

// cells lists the stored tables the fold touches.
func (f *fold) cells() []model.RUMCell {
	var cells []model.RUMCell
	for pk, p := range f.parts {
		cells = append(cells, model.RUMCell{Day: pk.day, Dim: pk.dim, Metric: rollup.ViewsMetric, Shard: pk.shard})
		var used [rum.NumTimings]bool
		for _, kt := range p.keys {
			for i := range kt.timings {
				used[i] = used[i] || kt.timings[i].Count() > 0
			}
		}
		for i, u := range used {
			if u {
				cells = append(cells, model.RUMCell{Day: pk.day, Dim: pk.dim, Metric: rum.TimingNames[i], Shard: pk.shard})
			}
		}
		for name := range p.custom {
			cells = append(cells, model.RUMCell{Day: pk.day, Dim: pk.dim, Metric: name, Shard: pk.shard})
		}
	}
	return cells
}

// table is the fold's contribution to one stored table, or nil.
func (f *fold) table(c model.RUMCell) *rollup.Table {
	p := f.parts[partKey{c.Day, c.Dim, c.Shard}]
	if p == nil {
		return nil
	}
	if c.Metric == rollup.ViewsMetric {
		t := &rollup.Table{Counts: make(map[string]uint64, len(p.keys))}
		for key, kt := range p.keys {
			t.Counts[key] = kt.views
		}
		return t
	}
	t := rollup.NewTable(c.Metric)
	if i, ok := rum.TimingIndex(c.Metric); ok {
		for key, kt := range p.keys {
			if kt.timings[i].Count() > 0 {
				t.Sketches[key] = &kt.timings[i]
			}
		}
	} else {
		for key, s := range p.custom[c.Metric] {
			t.Sketches[key] = s
		}
	}
	if t.Len() == 0 {
		return nil
	}
	return t
}

// renamePage moves a page key to another in one day and shard.
func (f *fold) renamePage(day string, shard int, from, to string) {
	p := f.parts[partKey{day, rollup.DimPages, shard}]
	if p == nil {
		return
	}
	if kt, ok := p.keys[from]; ok {
		delete(p.keys, from)
		if mine := p.keys[to]; mine != nil {
			mine.views += kt.views
			for i := range kt.timings {
				mine.timings[i].Merge(&kt.timings[i])
			}
		} else {
			p.keys[to] = kt
		}
	}
	for _, byKey := range p.custom {
		if s, ok := byKey[from]; ok {
			delete(byKey, from)
			if mine := byKey[to]; mine != nil {
				mine.Merge(s)
			} else {
				byKey[to] = s
			}
		}
	}
}
