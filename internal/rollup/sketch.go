package rollup

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

// RelativeAccuracy is the sketches' guarantee: a quantile they return is within 1 % of the
// sample at that rank.
const RelativeAccuracy = 0.01

// logMapping maps values to DDSketch bins (sketches-go's logarithmic mapping).
var logMapping = func() *mapping.LogarithmicMapping {
	m, err := mapping.NewLogarithmicMapping(RelativeAccuracy)
	if err != nil {
		panic(err) // a constant accuracy: cannot fail
	}
	return m
}()

// Sketch is a DDSketch of non-negative values with integer bin counts. It keeps sketches-go's
// logarithmic mapping but its own store, because the rollups need what sketches-go's float
// stores do not give: subtraction (a date range is the difference of two running totals) and
// a compact encoding (a report reads thousands of sketches).
//
// Bins are kept as a dense slice from offset; values too small to index (0 among them) count
// in zero.
type Sketch struct {
	offset int
	bins   []uint64
	zero   uint64
}

// Add counts one value; negative, NaN and infinite values are ignored (the parser drops them
// before).
func (s *Sketch) Add(v float64) { s.AddWeighted(v, 1) }

// AddWeighted counts one value w times: a sampled page view that stands for w views.
func (s *Sketch) AddWeighted(v float64, w uint64) { s.AddPrepared(Prepare(v), w) }

// Prepared is a value with its bin found, to be added to many sketches (a page view goes into
// one row of each of its tables) at the cost of one logarithm.
type Prepared struct {
	index int
	zero  bool
	ok    bool
}

// Prepare finds the bin of v; a negative, NaN or infinite v adds nothing.
func Prepare(v float64) Prepared {
	if !(v >= 0) || math.IsInf(v, 0) {
		return Prepared{}
	}
	if v < logMapping.MinIndexableValue() {
		return Prepared{zero: true, ok: true}
	}
	return Prepared{index: logMapping.Index(v), ok: true}
}

// AddPrepared counts a prepared value w times.
func (s *Sketch) AddPrepared(p Prepared, w uint64) {
	switch {
	case !p.ok:
	case p.zero:
		s.zero += w
	default:
		s.addBin(p.index, w)
	}
}

// AddPreparedIn is AddPrepared for a sketch whose bins come from a: their first room, and
// the room they grow into.
func (s *Sketch) AddPreparedIn(a *Arena, p Prepared, w uint64) {
	switch {
	case !p.ok:
	case p.zero:
		s.zero += w
	case p.index-s.offset >= 0 && p.index-s.offset < len(s.bins):
		s.bins[p.index-s.offset] += w
	default:
		s.grow(p.index, a)
		s.bins[p.index-s.offset] += w
	}
}

func (s *Sketch) addBin(i int, n uint64) {
	if j := i - s.offset; j >= 0 && j < len(s.bins) {
		s.bins[j] += n
		return
	}
	s.grow(i, nil)
	s.bins[i-s.offset] += n
}

// grow widens the bins to index i. An empty sketch starts with a few bins around i (most
// sketches of a fold hold one value); the first growth widens it to 32 bins and every later
// one doubles it towards i, so that a sketch filled value by value copies its bins a few
// times only (a page's load times span some 200 bins). The bins come from a, if not nil.
func (s *Sketch) grow(i int, a *Arena) {
	if len(s.bins) == 0 {
		if cap(s.bins) < 4 {
			s.bins = a.make(4)
		}
		s.bins = s.bins[:cap(s.bins)]
		clear(s.bins)
		s.offset = i - len(s.bins)/2
		return
	}
	lo, hi := s.offset, s.offset+len(s.bins)
	more := max(len(s.bins), 32-len(s.bins))
	if i < lo {
		lo = min(i, lo-more)
	} else {
		hi = max(i+1, hi+more)
	}
	bins := a.make(hi - lo)
	copy(bins[s.offset-lo:], s.bins)
	s.bins, s.offset = bins, lo
}

// Arena gives the sketches of one fold their bins from shared chunks. A fold starts a sketch
// per timing metric of each new key, most of which hold one value, and grows those of its
// busy keys (a country's) a few times each: one allocation each, those bins were most of the
// fold's allocations. Bins a sketch outgrows stay in the arena until it is reset. Reset makes
// the chunks the next fold's, so a worker folding message after message allocates its bins
// once, not once a message (they were 46 % of the bytes a fold allocated).
type Arena struct {
	chunks [][]uint64 // every chunk the arena has made, in the order they are handed out
	next   int        // chunks[:next] have been handed out from since the last Reset
	buf    []uint64   // chunks[next-1] up to what it has handed out
}

// arenaChunk is the bins of an arena's chunk (64 KiB).
const arenaChunk = 8192

// make returns n zero bins, from the arena if a is not nil.
func (a *Arena) make(n int) []uint64 {
	if a == nil || n > arenaChunk/4 {
		return make([]uint64, n)
	}
	if cap(a.buf)-len(a.buf) < n {
		if a.next == len(a.chunks) {
			a.chunks = append(a.chunks, make([]uint64, arenaChunk))
		}
		a.buf = a.chunks[a.next][:0]
		a.next++
	}
	out := a.buf[len(a.buf) : len(a.buf)+n : len(a.buf)+n]
	a.buf = a.buf[:len(a.buf)+n]
	return out
}

// Reset zeroes every bin the arena has handed out and hands them out again. No sketch that
// took bins from it may be read or written after: their bins become others'.
func (a *Arena) Reset() {
	for _, c := range a.chunks[:a.next] {
		clear(c)
	}
	a.next, a.buf = 0, nil
}

// Count is the number of values counted.
func (s *Sketch) Count() uint64 {
	n := s.zero
	for _, c := range s.bins {
		n += c
	}
	return n
}

// Merge adds o's counts to s.
func (s *Sketch) Merge(o *Sketch) {
	s.zero += o.zero
	for j, c := range o.bins {
		if c != 0 {
			s.addBin(o.offset+j, c)
		}
	}
}

// Sub removes o's counts from s; o must have been merged into s before (an earlier running
// total of the same series). It reports false, leaving s unusable, if it was not.
func (s *Sketch) Sub(o *Sketch) bool {
	if o.zero > s.zero {
		return false
	}
	s.zero -= o.zero
	for j, c := range o.bins {
		if c == 0 {
			continue
		}
		i := o.offset + j - s.offset
		if i < 0 || i >= len(s.bins) || s.bins[i] < c {
			return false
		}
		s.bins[i] -= c
	}
	return true
}

// Quantile returns the value at quantile q (0..1) with DDSketch's rank rule (the sample of rank
// floor(q*(n-1)) in sorted order), within RelativeAccuracy of it; ok is false when s is empty.
func (s *Sketch) Quantile(q float64) (v float64, ok bool) {
	n := s.Count()
	if n == 0 {
		return 0, false
	}
	rank := uint64(q * float64(n-1))
	if rank < s.zero {
		return 0, true
	}
	seen := s.zero
	for j, c := range s.bins {
		seen += c
		if seen > rank {
			return logMapping.Value(s.offset + j), true
		}
	}
	return logMapping.Value(s.offset + len(s.bins) - 1), true
}

// AppendBinary appends s's encoding: zero count, number of non-empty bins, then for each the
// gap in index from the previous one (the first as a signed offset) and its count, all
// varints. About two bytes per non-empty bin.
func (s *Sketch) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, s.zero)
	nonEmpty := 0
	for _, c := range s.bins {
		if c != 0 {
			nonEmpty++
		}
	}
	b = binary.AppendUvarint(b, uint64(nonEmpty))
	prev, first := 0, true
	for j, c := range s.bins {
		if c == 0 {
			continue
		}
		i := s.offset + j
		if first {
			b = binary.AppendVarint(b, int64(i))
			first = false
		} else {
			b = binary.AppendUvarint(b, uint64(i-prev))
		}
		prev = i
		b = binary.AppendUvarint(b, c)
	}
	return b
}

var errCorrupt = errors.New("rollup: corrupt encoding")

// decodeSketch reads one sketch encoded by AppendBinary from b and returns the rest of b.
func decodeSketch(b []byte) (*Sketch, []byte, error) {
	s := &Sketch{}
	rest, err := decodeSketchInto(s, b)
	if err != nil {
		return nil, nil, err
	}
	return s, rest, nil
}

// decodeSketchInto reads a sketch into s (empty, its bins' room reused) and returns the rest of
// b.
func decodeSketchInto(s *Sketch, b []byte) ([]byte, error) {
	var n uint64
	var ok bool
	if s.zero, b, ok = uvarint(b); !ok {
		return nil, errCorrupt
	}
	if n, b, ok = uvarint(b); !ok || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	if n == 0 {
		return b, nil
	}
	first, k := binary.Varint(b)
	if k <= 0 || first < math.MinInt32 || first > math.MaxInt32 {
		return nil, errCorrupt
	}
	b = b[k:]
	s.offset = int(first)
	if cap(s.bins) < int(n+n/2) {
		s.bins = make([]uint64, 0, n+n/2)
	}
	s.bins = s.bins[:0]
	for j := uint64(0); j < n; j++ {
		if j > 0 {
			var gap uint64
			if gap, b, ok = uvarint(b); !ok || gap == 0 || gap > 1<<20 {
				return nil, errCorrupt
			}
			for range gap - 1 {
				s.bins = append(s.bins, 0)
			}
		}
		var c uint64
		if c, b, ok = uvarint(b); !ok || c == 0 {
			return nil, errCorrupt
		}
		s.bins = append(s.bins, c)
	}
	return b, nil
}

// skipSketch returns b after the sketch it starts with.
func skipSketch(b []byte) ([]byte, error) {
	var n uint64
	var ok bool
	if _, b, ok = uvarint(b); !ok {
		return nil, errCorrupt
	}
	if n, b, ok = uvarint(b); !ok || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	if n == 0 {
		return b, nil
	}
	if _, k := binary.Varint(b); k <= 0 {
		return nil, errCorrupt
	} else {
		b = b[k:]
	}
	for j := uint64(0); j < 2*n-1; j++ {
		if _, b, ok = uvarint(b); !ok {
			return nil, errCorrupt
		}
	}
	return b, nil
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, b, false
	}
	return v, b[k:], true
}

// Each calls fn for every non-empty bin, in ascending order of value, with the bin's value (0
// for the values too small to index) and its count.
func (s *Sketch) Each(fn func(v float64, n uint64)) {
	if s.zero > 0 {
		fn(0, s.zero)
	}
	for j, c := range s.bins {
		if c != 0 {
			fn(logMapping.Value(s.offset+j), c)
		}
	}
}
