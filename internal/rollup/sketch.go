package rollup

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

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
func (s *Sketch) Add(v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		return
	}
	if v < logMapping.MinIndexableValue() {
		s.zero++
		return
	}
	s.addBin(logMapping.Index(v), 1)
}

func (s *Sketch) addBin(i int, n uint64) {
	if len(s.bins) == 0 {
		s.offset = i
		if cap(s.bins) == 0 {
			s.bins = make([]uint64, 1, 4) // most sketches of a fold hold a few values
		}
		s.bins = s.bins[:1]
		s.bins[0] = n
		return
	}
	switch {
	case i < s.offset:
		grow := s.offset - i
		s.bins = slices.Insert(s.bins, 0, make([]uint64, grow)...)
		s.offset = i
	case i >= s.offset+len(s.bins):
		s.bins = append(s.bins, make([]uint64, i-s.offset-len(s.bins)+1)...)
	}
	s.bins[i-s.offset] += n
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
	var n uint64
	var ok bool
	if s.zero, b, ok = uvarint(b); !ok {
		return nil, nil, errCorrupt
	}
	if n, b, ok = uvarint(b); !ok || n > uint64(len(b)) {
		return nil, nil, errCorrupt
	}
	if n == 0 {
		return s, b, nil
	}
	first, k := binary.Varint(b)
	if k <= 0 || first < math.MinInt32 || first > math.MaxInt32 {
		return nil, nil, errCorrupt
	}
	b = b[k:]
	s.offset = int(first)
	s.bins = make([]uint64, 0, n+n/2)
	for j := uint64(0); j < n; j++ {
		if j > 0 {
			var gap uint64
			if gap, b, ok = uvarint(b); !ok || gap == 0 || gap > 1<<20 {
				return nil, nil, errCorrupt
			}
			for range gap - 1 {
				s.bins = append(s.bins, 0)
			}
		}
		var c uint64
		if c, b, ok = uvarint(b); !ok || c == 0 {
			return nil, nil, errCorrupt
		}
		s.bins = append(s.bins, c)
	}
	return s, b, nil
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, b, false
	}
	return v, b[k:], true
}
