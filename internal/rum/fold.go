package rum

import (
	"github.com/openvitals/openvitals/internal/store"
)

// View is one page view as the collect endpoint queues it: validated, with its page key,
// country and UTC day resolved.
type View struct {
	Day     string `json:"d"`           // yyyymmdd
	Page    string `json:"p"`           // normalized path
	Country string `json:"c,omitempty"` // ISO 3166-1 alpha-2, or XX
	// IP is the client address when the country is not known yet: the aggregator places it
	// and keeps nothing of it.
	IP      string             `json:"ip,omitempty"`
	Metrics map[string]float64 `json:"m"` // timing metrics and custom variables
}

// Batch is one queue message: page views of one website. The queue is FIFO with the website as
// message group, so one website's batches are folded in order by one consumer at a time.
type Batch struct {
	ID      string `json:"id"`
	Account string `json:"a"`
	Website string `json:"w"`
	Views   []View `json:"v"`
}

// fold is what one batch adds to the cells it touches.
type fold map[store.RUMCell]*table

// add folds one view into the cells of the given days (the view's day and the later days of its
// month that already have running totals).
func (f fold) add(days []string, v View) {
	for _, day := range days {
		f.addKey(day, DimPages, v.Page, v.Metrics)
		f.addKey(day, DimCountries, v.Country, v.Metrics)
	}
}

func (f fold) addKey(day, dim, key string, metrics map[string]float64) {
	shard := shardOf(dim, key)
	f.cell(store.RUMCell{Day: day, Dim: dim, Metric: viewsMetric, Shard: shard}).counts[key]++
	for name, v := range metrics {
		t := f.cell(store.RUMCell{Day: day, Dim: dim, Metric: name, Shard: shard})
		s := t.sketches[key]
		if s == nil {
			s = &Sketch{}
			t.sketches[key] = s
		}
		s.Add(v)
	}
}

func (f fold) cell(c store.RUMCell) *table {
	t := f[c]
	if t == nil {
		t = newTable(c.Metric)
		f[c] = t
	}
	return t
}

// renamePage moves a page key to another in every cell of one day and shard.
func (f fold) renamePage(day string, shard int, from, to string) {
	for c, t := range f {
		if c.Day == day && c.Dim == DimPages && c.Shard == shard {
			t.rename(from, to)
		}
	}
}
