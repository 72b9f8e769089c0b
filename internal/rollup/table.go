// Package rollup is the engine beneath real-user monitoring: DDSketches with integer bins that
// can be merged, subtracted and encoded compactly, and the tables of running totals the
// aggregator stores and the reports read (one per day, dimension, metric and shard).
package rollup

import (
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/axiomhq/hyperloglog"
)

// Rollups are running totals per UTC day since the start of its month: a day's tables hold
// everything from the 1st to that day, so any date range within a month is the difference of
// two days' tables, and a report over any range reads a few tables per month instead of one per
// day. Tables are split by dimension, metric and shard, so that a report reads only the metrics
// it asks for and no stored item comes near DynamoDB's 400 KB limit.
const (
	// DimPages keys tables by normalized page path, DimCountries by ISO country code.
	DimPages     = "p"
	DimCountries = "c"

	// ViewsMetric names the tables that count page views.
	ViewsMetric = "_n"

	// pageShards is how many tables share a day's page keys per metric.
	pageShards = 16
	// MaxKeysPerShard caps the page keys of a shard in a month (8,000 pages in all); further
	// pages count under OtherKey, so that a site with unbounded URLs cannot outgrow an item.
	MaxKeysPerShard = 500
	OtherKey        = "/(other)"

	// MaxCustomPerMonth caps the custom variable names a website keeps per month.
	MaxCustomPerMonth = 20
)

// Shards is the number of shards of a dimension.
func Shards(dim string) int {
	if dim == DimPages {
		return pageShards
	}
	return 1
}

// ShardOf places a key in one of a dimension's shards.
func ShardOf(dim, key string) int {
	if dim != DimPages {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % pageShards)
}

// Table is the content of one cell: page views per key (the views metric) or one sketch per
// key (a timing metric).
type Table struct {
	Counts   map[string]uint64
	Sketches map[string]*Sketch
}

// NewTable returns an empty table of a metric: counts for ViewsMetric, sketches otherwise.
func NewTable(metric string) *Table {
	if metric == ViewsMetric {
		return &Table{Counts: map[string]uint64{}}
	}
	return &Table{Sketches: map[string]*Sketch{}}
}

// IsCounts tells whether the table counts page views.
func (t *Table) IsCounts() bool { return t.Counts != nil }

// Len is the number of keys.
func (t *Table) Len() int {
	if t.IsCounts() {
		return len(t.Counts)
	}
	return len(t.Sketches)
}

// Merge adds o to t. With own, t may keep o's sketches (o is not used afterwards).
func (t *Table) Merge(o *Table, own bool) {
	for k, n := range o.Counts {
		t.Counts[k] += n
	}
	for k, s := range o.Sketches {
		switch mine := t.Sketches[k]; {
		case mine != nil:
			mine.Merge(s)
		case own:
			t.Sketches[k] = s
		default:
			c := &Sketch{}
			c.Merge(s)
			t.Sketches[k] = c
		}
	}
}

// Sub removes o, an earlier running total of the same cell, from t. Keys whose difference is
// inconsistent (which only a corrupted store could cause) are dropped.
func (t *Table) Sub(o *Table) {
	for k, n := range o.Counts {
		if t.Counts[k] < n {
			delete(t.Counts, k)
			continue
		}
		t.Counts[k] -= n
	}
	for k, s := range o.Sketches {
		if mine := t.Sketches[k]; mine == nil || !mine.Sub(s) {
			delete(t.Sketches, k)
		}
	}
}

// Encode writes the table: a kind byte (0 counts, 1 sketches), the number of keys, then per
// key in sorted order its length, its bytes and its count or sketch.
func (t *Table) Encode() []byte {
	keys := make([]string, 0, t.Len())
	for k := range t.Counts {
		keys = append(keys, k)
	}
	for k := range t.Sketches {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64+len(keys)*48)
	if t.IsCounts() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
	}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		if t.IsCounts() {
			b = binary.AppendUvarint(b, t.Counts[k])
		} else {
			b = t.Sketches[k].AppendBinary(b)
		}
	}
	return b
}

// DecodeTable reads a table Encode wrote.
func DecodeTable(b []byte) (*Table, error) {
	if len(b) == 0 || b[0] > 1 {
		return nil, errCorrupt
	}
	counts := b[0] == 0
	n, b, ok := uvarint(b[1:])
	if !ok || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	t := &Table{}
	if counts {
		t.Counts = make(map[string]uint64, n)
	} else {
		t.Sketches = make(map[string]*Sketch, n)
	}
	for range n {
		var l uint64
		if l, b, ok = uvarint(b); !ok || l > uint64(len(b)) {
			return nil, errCorrupt
		}
		k := string(b[:l])
		b = b[l:]
		if counts {
			var c uint64
			if c, b, ok = uvarint(b); !ok {
				return nil, errCorrupt
			}
			t.Counts[k] = c
			continue
		}
		s, rest, err := decodeSketch(b)
		if err != nil {
			return nil, err
		}
		t.Sketches[k], b = s, rest
	}
	if len(b) != 0 {
		return nil, errCorrupt
	}
	return t, nil
}

// DecodeDistinct reads a stored HyperLogLog of page keys; no data is an empty one.
func DecodeDistinct(b []byte) (*hyperloglog.Sketch, error) {
	hll := hyperloglog.New14() // 16 KB at most, about 0.8 % standard error
	if len(b) == 0 {
		return hll, nil
	}
	if err := hll.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return hll, nil
}

// LaterDays is day and the days of the index after it.
func LaterDays(days []string, day string) []string {
	i, _ := slices.BinarySearch(days, day)
	out := []string{day}
	for _, d := range days[i:] {
		if d != day {
			out = append(out, d)
		}
	}
	return out
}

// LatestBefore is the latest day of days (ascending) before day, or "".
func LatestBefore(days []string, day string) string {
	i, _ := slices.BinarySearch(days, day)
	if i == 0 {
		return ""
	}
	return days[i-1]
}

// LatestAtOrBefore is the latest day of days (ascending) on or before day, or "".
func LatestAtOrBefore(days []string, day string) string {
	i, found := slices.BinarySearch(days, day)
	if found {
		return days[i]
	}
	if i == 0 {
		return ""
	}
	return days[i-1]
}
