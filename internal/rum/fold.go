package rum

import (
	"encoding/json"
	"slices"

	"github.com/openvitals/openvitals/internal/store"
)

// View is one page view as the collect endpoint queues it: validated, with its page key,
// country and UTC day resolved.
type View struct {
	Day     string // yyyymmdd
	Page    string // normalized path
	Country string // ISO 3166-1 alpha-2, or XX; empty when IP is to be placed
	// IP is the client address when the country is not known yet: the aggregator places it
	// and keeps nothing of it.
	IP string
	// Metrics holds the timing metrics and the custom variables.
	Metrics map[string]float64
}

// timingNames are the timing metrics in the fixed order of the queue format and the fold.
var timingNames = func() []string {
	names := make([]string, 0, len(Metrics))
	for name := range Metrics {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}()

const numTimings = 16

var timingIndex = func() map[string]int {
	if len(timingNames) != numTimings {
		panic("rum: numTimings is out of date")
	}
	idx := make(map[string]int, numTimings)
	for i, name := range timingNames {
		idx[name] = i
	}
	return idx
}()

// wireView is a View on the queue: the timing metrics as an array in timingNames order (-1
// where absent), which decodes several times faster than a map, and the custom variables.
type wireView struct {
	Day     string             `json:"d"`
	Page    string             `json:"p"`
	Country string             `json:"c,omitempty"`
	IP      string             `json:"ip,omitempty"`
	T       []float64          `json:"t"`
	X       map[string]float64 `json:"x,omitempty"`
}

// MarshalJSON writes the queue format.
func (v View) MarshalJSON() ([]byte, error) {
	w := wireView{Day: v.Day, Page: v.Page, Country: v.Country, IP: v.IP, T: make([]float64, numTimings)}
	for i := range w.T {
		w.T[i] = -1
	}
	for name, x := range v.Metrics {
		if i, ok := timingIndex[name]; ok {
			w.T[i] = x
		} else {
			if w.X == nil {
				w.X = map[string]float64{}
			}
			w.X[name] = x
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the queue format.
func (v *View) UnmarshalJSON(b []byte) error {
	var w wireView
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*v = View{Day: w.Day, Page: w.Page, Country: w.Country, IP: w.IP, Metrics: map[string]float64{}}
	for i, x := range w.T {
		if i < numTimings && x >= 0 {
			v.Metrics[timingNames[i]] = x
		}
	}
	for name, x := range w.X {
		v.Metrics[name] = x
	}
	return nil
}

// Batch is one queue message: page views of one website. The queue is FIFO with the website as
// message group, so one website's batches are folded in order by one consumer at a time.
type Batch struct {
	ID      string `json:"id"`
	Account string `json:"a"`
	Website string `json:"w"`
	Views   []View `json:"v"`
}

// wireBatch is a Batch as the aggregator reads it.
type wireBatch struct {
	ID      string     `json:"id"`
	Account string     `json:"a"`
	Website string     `json:"w"`
	Views   []wireView `json:"v"`
}

// partKey names the tables of one day, dimension and shard.
type partKey struct {
	day, dim string
	shard    int
}

// part is what a fold adds to one day, dimension and shard: page views per key, a sketch per
// key and timing metric (one allocation per key), and custom variables.
type part struct {
	views   map[string]uint64
	timings map[string]*[numTimings]Sketch
	custom  map[string]map[string]*Sketch // name, key
}

// fold is what one batch adds to the tables it touches.
type fold map[partKey]*part

// add folds one view into the given days (the view's day and the later days of its month
// that already have running totals).
func (f fold) add(days []string, v wireView) {
	for _, day := range days {
		f.addKey(partKey{day, DimPages, shardOf(DimPages, v.Page)}, v.Page, v)
		f.addKey(partKey{day, DimCountries, 0}, v.Country, v)
	}
}

func (f fold) addKey(pk partKey, key string, v wireView) {
	p := f[pk]
	if p == nil {
		p = &part{views: map[string]uint64{}, timings: map[string]*[numTimings]Sketch{}}
		f[pk] = p
	}
	p.views[key]++
	ts := p.timings[key]
	if ts == nil {
		ts = new([numTimings]Sketch)
		p.timings[key] = ts
	}
	for i, x := range v.T[:min(len(v.T), numTimings)] {
		if x >= 0 {
			ts[i].Add(x)
		}
	}
	for name, x := range v.X {
		if p.custom == nil {
			p.custom = map[string]map[string]*Sketch{}
		}
		byKey := p.custom[name]
		if byKey == nil {
			byKey = map[string]*Sketch{}
			p.custom[name] = byKey
		}
		s := byKey[key]
		if s == nil {
			s = &Sketch{}
			byKey[key] = s
		}
		s.Add(x)
	}
}

// cells lists the stored tables the fold touches.
func (f fold) cells() []store.RUMCell {
	var cells []store.RUMCell
	for pk, p := range f {
		cells = append(cells, store.RUMCell{Day: pk.day, Dim: pk.dim, Metric: viewsMetric, Shard: pk.shard})
		var used [numTimings]bool
		for _, ts := range p.timings {
			for i := range ts {
				used[i] = used[i] || ts[i].Count() > 0
			}
		}
		for i, u := range used {
			if u {
				cells = append(cells, store.RUMCell{Day: pk.day, Dim: pk.dim, Metric: timingNames[i], Shard: pk.shard})
			}
		}
		for name := range p.custom {
			cells = append(cells, store.RUMCell{Day: pk.day, Dim: pk.dim, Metric: name, Shard: pk.shard})
		}
	}
	return cells
}

// table is the fold's contribution to one stored table, or nil.
func (f fold) table(c store.RUMCell) *table {
	p := f[partKey{c.Day, c.Dim, c.Shard}]
	if p == nil {
		return nil
	}
	if c.Metric == viewsMetric {
		return &table{counts: p.views}
	}
	t := newTable(c.Metric)
	if i, ok := timingIndex[c.Metric]; ok {
		for key, ts := range p.timings {
			if ts[i].Count() > 0 {
				t.sketches[key] = &ts[i]
			}
		}
	} else {
		for key, s := range p.custom[c.Metric] {
			t.sketches[key] = s
		}
	}
	if t.len() == 0 {
		return nil
	}
	return t
}

// renamePage moves a page key to another in one day and shard.
func (f fold) renamePage(day string, shard int, from, to string) {
	p := f[partKey{day, DimPages, shard}]
	if p == nil {
		return
	}
	if n, ok := p.views[from]; ok {
		delete(p.views, from)
		p.views[to] += n
	}
	if ts, ok := p.timings[from]; ok {
		delete(p.timings, from)
		if mine := p.timings[to]; mine != nil {
			for i := range ts {
				mine[i].Merge(&ts[i])
			}
		} else {
			p.timings[to] = ts
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
