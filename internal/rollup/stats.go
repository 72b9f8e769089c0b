package rollup

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"unsafe"
)

// unsafeString views b as a string without copying, for a key only looked at.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Segment and attribution tables hold a day's own page views (not running totals), one row
// per key: a segment key (the packed segments of the views, projected on the table's
// dimensions) and, for attribution tables, an attribution key. A row keeps of one metric what
// the reports need: a weighted sketch of the values, the weighted views rated good, needs
// improvement and poor, and, for attributions, the weighted sums of the values and of their
// parts (LCP and INP phases, script durations), whose means add up as the parts do.

// RowKey is a row's key: the segments and an attribution key ("" in segment tables).
type RowKey struct {
	Seg uint64
	Key string
}

// OverflowKey is the row a table's views go to once it holds as many rows as an item can:
// reports count it in totals and name it, but no filter matches it.
var OverflowKey = RowKey{Key: "(other)"}

// MaxParts is the most parts a row sums.
const MaxParts = 4

// Counts are the sketch and ratings of a row's metric: 64 bytes, a cache line, which is all
// a segment table's row keeps (the fold touches millions of them).
type Counts struct {
	Sketch Sketch
	// Rated are the weighted views rated good, needs improvement and poor.
	Rated [3]uint64
}

// Stat is one row's statistics of a metric.
type Stat struct {
	Counts
	// Sum is the weighted sum of the values, and Parts of their parts (attribution rows).
	Sum   float64
	Parts [MaxParts]float64
}

// Add counts a prepared value of rating (0 good, 1 needs improvement, 2 poor) w times.
func (s *Counts) Add(p Prepared, rating int, w uint64) {
	s.Sketch.AddPrepared(p, w)
	s.Rated[rating] += w
}

// Views is the weighted number of views counted.
func (s *Counts) Views() uint64 { return s.Rated[0] + s.Rated[1] + s.Rated[2] }

// AddSums adds w times a value and its parts to the sums.
func (s *Stat) AddSums(v float64, parts []float64, w uint64) {
	fw := float64(w)
	s.Sum += v * fw
	for i, p := range parts {
		s.Parts[i] += p * fw
	}
}

// Merge adds o to s.
func (s *Stat) Merge(o *Stat) {
	s.Sketch.Merge(&o.Sketch)
	for i := range s.Rated {
		s.Rated[i] += o.Rated[i]
	}
	s.Sum += o.Sum
	for i := range s.Parts {
		s.Parts[i] += o.Parts[i]
	}
}

// StatTable is a segment or attribution table: one metric's rows.
type StatTable struct {
	Rows map[RowKey]*Stat
}

// NewStatTable returns an empty table.
func NewStatTable() *StatTable { return &StatTable{Rows: map[RowKey]*Stat{}} }

// Row returns the row of k, made empty if missing.
func (t *StatTable) Row(k RowKey) *Stat {
	s := t.Rows[k]
	if s == nil {
		s = &Stat{}
		t.Rows[k] = s
	}
	return s
}

// Merge adds o's rows to t. With own, t may keep o's rows (o is not used afterwards).
func (t *StatTable) Merge(o *StatTable, own bool) {
	for k, s := range o.Rows {
		switch mine := t.Rows[k]; {
		case mine != nil:
			mine.Merge(s)
		case own:
			t.Rows[k] = s
		default:
			c := &Stat{}
			c.Merge(s)
			t.Rows[k] = c
		}
	}
}

const statTableKind = 2

// Encode writes the table: its kind byte (2), the number of rows, then per row in key order
// its segments, its key, its ratings, a byte telling which sums follow (bit 0 the sum, bits
// 1-3 how many parts), the sums as float64, and its sketch.
func (t *StatTable) Encode() []byte {
	keys := make([]RowKey, 0, len(t.Rows))
	for k := range t.Rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	b := make([]byte, 0, 16+len(keys)*24)
	b = append(b, statTableKind)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendRow(b, k, t.Rows[k])
	}
	return b
}

func compareKeys(a, b RowKey) int {
	if c := cmp.Compare(a.Seg, b.Seg); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

func appendRow(b []byte, k RowKey, s *Stat) []byte {
	b = binary.AppendUvarint(b, k.Seg)
	b = binary.AppendUvarint(b, uint64(len(k.Key)))
	b = append(b, k.Key...)
	for _, r := range s.Rated {
		b = binary.AppendUvarint(b, r)
	}
	parts := MaxParts
	for parts > 0 && s.Parts[parts-1] == 0 {
		parts--
	}
	flags := byte(parts << 1)
	if s.Sum != 0 || parts > 0 {
		flags |= 1
	}
	b = append(b, flags)
	if flags&1 != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.Sum))
	}
	for _, p := range s.Parts[:parts] {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p))
	}
	return s.Sketch.AppendBinary(b)
}

// DecodeStatTable reads a table Encode wrote. Rows it returns share nothing with b.
func DecodeStatTable(b []byte) (*StatTable, error) {
	t := NewStatTable()
	err := ScanStatTable(b, nil, func(k RowKey, s *Stat) { t.Rows[k] = s })
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ScanStatTable calls row for each row of an encoded table that keep accepts (nil: every row),
// in key order, without building a map: the reports filter and aggregate rows as they read
// them, and a row keep refuses is skipped without being decoded. Each row is a Stat of its
// own.
func ScanStatTable(b []byte, keep func(RowKey) bool, row func(RowKey, *Stat)) error {
	return scanStats(b, keep, func(k RowKey, s *Stat) { row(k, s) }, false)
}

// ScanStatTableReusing is ScanStatTable with one Stat for every row: row must not keep it.
func ScanStatTableReusing(b []byte, keep func(RowKey) bool, row func(RowKey, *Stat)) error {
	return scanStats(b, keep, row, true)
}

func scanStats(b []byte, keep func(RowKey) bool, row func(RowKey, *Stat), reuse bool) error {
	if len(b) == 0 || b[0] != statTableKind {
		return errCorrupt
	}
	n, b, ok := uvarint(b[1:])
	if !ok || n > uint64(len(b)) {
		return errCorrupt
	}
	var shared Stat
	for range n {
		var k RowKey
		var l uint64
		if k.Seg, b, ok = uvarint(b); !ok {
			return errCorrupt
		}
		if l, b, ok = uvarint(b); !ok || l > uint64(len(b)) {
			return errCorrupt
		}
		rawKey := b[:l]
		b = b[l:]
		var rated [3]uint64
		for i := range rated {
			if rated[i], b, ok = uvarint(b); !ok {
				return errCorrupt
			}
		}
		if len(b) == 0 {
			return errCorrupt
		}
		flags := b[0]
		b = b[1:]
		parts := int(flags >> 1)
		if flags > 1+MaxParts<<1 || parts > 0 && flags&1 == 0 {
			return errCorrupt
		}
		sums := 0
		if flags&1 != 0 {
			sums = 1 + parts
		}
		if len(b) < 8*sums {
			return errCorrupt
		}
		sumBytes := b[:8*sums]
		b = b[8*sums:]
		if keep != nil {
			k.Key = unsafeString(rawKey)
			if !keep(k) {
				var err error
				if b, err = skipSketch(b); err != nil {
					return err
				}
				continue
			}
		}
		k.Key = string(rawKey)
		s := &shared
		if !reuse {
			s = &Stat{}
		}
		*s = Stat{Counts: Counts{Sketch: Sketch{bins: s.Sketch.bins[:0]}, Rated: rated}}
		if sums > 0 {
			s.Sum = math.Float64frombits(binary.LittleEndian.Uint64(sumBytes))
			for i := range parts {
				s.Parts[i] = math.Float64frombits(binary.LittleEndian.Uint64(sumBytes[8*(1+i):]))
			}
		}
		rest, err := decodeSketchInto(&s.Sketch, b)
		if err != nil {
			return err
		}
		b = rest
		row(k, s)
	}
	if len(b) != 0 {
		return errCorrupt
	}
	return nil
}

// EncodeWithin encodes the table in at most maxBytes: if it does not fit, the rows with the
// fewest views move into OverflowKey (where reports count them in totals only) until it does.
// The rows moved are the same whatever order the table was filled in.
func (t *StatTable) EncodeWithin(maxBytes int) []byte {
	b := t.Encode()
	if len(b) <= maxBytes {
		return b
	}
	keys := make([]RowKey, 0, len(t.Rows))
	for k := range t.Rows {
		if k != OverflowKey {
			keys = append(keys, k)
		}
	}
	// Fewest views first; ties by key, so that the choice is deterministic.
	slices.SortFunc(keys, func(a, b RowKey) int {
		if c := cmp.Compare(t.Rows[a].Views(), t.Rows[b].Views()); c != 0 {
			return c
		}
		return compareKeys(a, b)
	})
	if len(keys) == 0 {
		return b // the overflow row alone: nothing more to move
	}
	excess := len(b) - maxBytes
	var scratch []byte
	for _, k := range keys {
		if excess <= 0 {
			break
		}
		scratch = appendRow(scratch[:0], k, t.Rows[k])
		excess -= len(scratch)
		t.Row(OverflowKey).Merge(t.Rows[k])
		delete(t.Rows, k)
	}
	// The overflow row's sketch grew: encode again, and again if it still does not fit.
	return t.EncodeWithin(maxBytes)
}
