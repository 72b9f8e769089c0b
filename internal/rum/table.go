package rum

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

	// viewsMetric names the tables that count page views.
	viewsMetric = "_n"

	// pageShards is how many tables share a day's page keys per metric.
	pageShards = 16
	// maxKeysPerShard caps the page keys of a shard in a month (8,000 pages in all); further
	// pages count under otherKey, so that a site with unbounded URLs cannot outgrow an item.
	maxKeysPerShard = 500
	otherKey        = "/(other)"

	// maxCustomPerMonth caps the custom variable names a website keeps per month.
	maxCustomPerMonth = 20
)

// shards is the number of shards of a dimension.
func shards(dim string) int {
	if dim == DimPages {
		return pageShards
	}
	return 1
}

// shardOf places a key in one of a dimension's shards.
func shardOf(dim, key string) int {
	if dim != DimPages {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % pageShards)
}

// table is the content of one cell: page views per key (the views metric) or one sketch per
// key (a timing metric).
type table struct {
	counts   map[string]uint64
	sketches map[string]*Sketch
}

func newTable(metric string) *table {
	if metric == viewsMetric {
		return &table{counts: map[string]uint64{}}
	}
	return &table{sketches: map[string]*Sketch{}}
}

func (t *table) isCounts() bool { return t.counts != nil }

func (t *table) len() int {
	if t.isCounts() {
		return len(t.counts)
	}
	return len(t.sketches)
}

// merge adds o to t. With own, t may keep o's sketches (o is not used afterwards).
func (t *table) merge(o *table, own bool) {
	for k, n := range o.counts {
		t.counts[k] += n
	}
	for k, s := range o.sketches {
		switch mine := t.sketches[k]; {
		case mine != nil:
			mine.Merge(s)
		case own:
			t.sketches[k] = s
		default:
			c := &Sketch{}
			c.Merge(s)
			t.sketches[k] = c
		}
	}
}

// sub removes o, an earlier running total of the same cell, from t. Keys whose difference is
// inconsistent (which only a corrupted store could cause) are dropped.
func (t *table) sub(o *table) {
	for k, n := range o.counts {
		if t.counts[k] < n {
			delete(t.counts, k)
			continue
		}
		t.counts[k] -= n
	}
	for k, s := range o.sketches {
		if mine := t.sketches[k]; mine == nil || !mine.Sub(s) {
			delete(t.sketches, k)
		}
	}
}

// Encoding: a kind byte (0 counts, 1 sketches), the number of keys, then per key in sorted
// order its length, its bytes and its count or sketch.
func (t *table) encode() []byte {
	keys := make([]string, 0, t.len())
	for k := range t.counts {
		keys = append(keys, k)
	}
	for k := range t.sketches {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64+len(keys)*48)
	if t.isCounts() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
	}
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		if t.isCounts() {
			b = binary.AppendUvarint(b, t.counts[k])
		} else {
			b = t.sketches[k].AppendBinary(b)
		}
	}
	return b
}

func decodeTable(b []byte) (*table, error) {
	if len(b) == 0 || b[0] > 1 {
		return nil, errCorrupt
	}
	counts := b[0] == 0
	n, b, ok := uvarint(b[1:])
	if !ok || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	t := &table{}
	if counts {
		t.counts = make(map[string]uint64, n)
	} else {
		t.sketches = make(map[string]*Sketch, n)
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
			t.counts[k] = c
			continue
		}
		s, rest, err := decodeSketch(b)
		if err != nil {
			return nil, err
		}
		t.sketches[k], b = s, rest
	}
	if len(b) != 0 {
		return nil, errCorrupt
	}
	return t, nil
}

// decodeDistinct reads a stored HyperLogLog of page keys; no data is an empty one.
func decodeDistinct(b []byte) (*hyperloglog.Sketch, error) {
	hll := hyperloglog.New14() // 16 KB at most, about 0.8 % standard error
	if len(b) == 0 {
		return hll, nil
	}
	if err := hll.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return hll, nil
}
