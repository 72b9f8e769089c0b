package rollup

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactQuantile is the sample of rank floor(q*(n-1)), the rank rule the sketch follows.
func exactQuantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

func TestSketchQuantileWithinRelativeAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dist := range []struct {
		name string
		draw func() float64
	}{
		{"lognormal lcp", func() float64 { return math.Exp(7.6 + 0.6*rng.NormFloat64()) }},
		{"uniform cls", func() float64 { return rng.Float64() * 0.5 }},
		{"integers with zeros", func() float64 { return float64(rng.IntN(40)) }},
		{"wide bytes", func() float64 { return math.Exp(rng.Float64() * 16) }},
	} {
		var s Sketch
		vals := make([]float64, 20000)
		for i := range vals {
			vals[i] = dist.draw()
			s.Add(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0.5, 0.75, 0.95} {
			want := exactQuantile(vals, q)
			got, ok := s.Quantile(q)
			if !ok {
				t.Fatalf("%s: empty sketch", dist.name)
			}
			if want == 0 {
				if got != 0 {
					t.Errorf("%s p%v = %v, want 0", dist.name, q*100, got)
				}
				continue
			}
			if rel := math.Abs(got-want) / want; rel > RelativeAccuracy {
				t.Errorf("%s p%v = %v, exact %v: relative error %.4f > %v", dist.name, q*100, got, want, rel, RelativeAccuracy)
			}
		}
		if s.Count() != uint64(len(vals)) {
			t.Errorf("%s count %d, want %d", dist.name, s.Count(), len(vals))
		}
	}
}

func TestSketchEncodeMergeSub(t *testing.T) {
	var a, b Sketch
	for i := range 1000 {
		a.Add(float64(i))
		b.Add(float64(i * 7))
	}
	a.Add(0)
	b.Add(1e9)
	enc := a.AppendBinary(nil)
	got, rest, err := decodeSketch(enc)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decode: %v, %d bytes left", err, len(rest))
	}
	for _, q := range []float64{0, 0.25, 0.75, 1} {
		x, _ := a.Quantile(q)
		y, _ := got.Quantile(q)
		if x != y {
			t.Errorf("q%v: %v after a round trip, %v before", q, y, x)
		}
	}
	sum := &Sketch{}
	sum.Merge(&a)
	sum.Merge(&b)
	if sum.Count() != a.Count()+b.Count() {
		t.Fatalf("merged count %d", sum.Count())
	}
	if !sum.Sub(&a) {
		t.Fatal("sub of a merged part failed")
	}
	x, _ := sum.Quantile(0.75)
	y, _ := b.Quantile(0.75)
	if x != y || sum.Count() != b.Count() {
		t.Errorf("(a+b)-a p75 %v count %d, b p75 %v count %d", x, sum.Count(), y, b.Count())
	}
	if (&Sketch{}).Sub(&a) {
		t.Error("sub from an empty sketch succeeded")
	}
	for _, bad := range [][]byte{{}, {1}, {0, 5, 1}, {0, 1, 2, 0}} {
		if _, _, err := decodeSketch(bad); err == nil {
			t.Errorf("decodeSketch(%v) succeeded", bad)
		}
	}
}

func TestSketchIgnoresNonFinite(t *testing.T) {
	var s Sketch
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
		s.Add(v)
	}
	if s.Count() != 0 {
		t.Errorf("count %d after only invalid values", s.Count())
	}
}

func TestTableRoundTrip(t *testing.T) {
	views := NewTable(ViewsMetric)
	views.Counts["/"] = 3
	views.Counts["/a"] = 1
	lcp := NewTable("lcp")
	for i := range 50 {
		s := lcp.Sketches["/"]
		if s == nil {
			s = &Sketch{}
			lcp.Sketches["/"] = s
		}
		s.Add(float64(1000 + i*10))
	}
	for _, tb := range []*Table{views, lcp} {
		got, err := DecodeTable(tb.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != tb.Len() || got.IsCounts() != tb.IsCounts() {
			t.Fatalf("round trip: %d keys, want %d", got.Len(), tb.Len())
		}
	}
	if got, _ := DecodeTable(views.Encode()); got.Counts["/"] != 3 || got.Counts["/a"] != 1 {
		t.Errorf("counts after a round trip: %v", got.Counts)
	}
	if _, err := DecodeTable(append(views.Encode(), 7)); err == nil {
		t.Error("trailing bytes accepted")
	}
}

func TestStatTableEncodeAndOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tab := NewStatTable()
	for i := range 3000 {
		k := RowKey{Seg: uint64(rng.IntN(500)), Key: []string{"", "img#hero", "button.buy"}[i%3]}
		s := tab.Row(k)
		v := math.Exp(7 + rng.NormFloat64())
		s.Add(Prepare(v), i%3, uint64(1+i%4))
		s.AddSums(v, []float64{v / 2, v / 4, 0, v / 4}, uint64(1+i%4))
	}
	b := tab.Encode()
	back, err := DecodeStatTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != len(tab.Rows) {
		t.Fatalf("%d rows back, want %d", len(back.Rows), len(tab.Rows))
	}
	var views, viewsBack uint64
	for k, s := range tab.Rows {
		o := back.Rows[k]
		if o == nil || o.Rated != s.Rated || o.Sum != s.Sum || o.Parts != s.Parts || o.Sketch.Count() != s.Sketch.Count() {
			t.Fatalf("row %v: %+v, want %+v", k, o, s)
		}
		views += s.Views()
	}
	if _, err := DecodeStatTable(b[:len(b)-1]); err == nil {
		t.Error("a truncated table decodes")
	}
	limit := len(b) / 3
	small := tab.EncodeWithin(limit)
	if len(small) > limit {
		t.Fatalf("%d bytes, want at most %d", len(small), limit)
	}
	back, err = DecodeStatTable(small)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range back.Rows {
		viewsBack += s.Views()
	}
	if back.Rows[OverflowKey] == nil || viewsBack != views {
		t.Errorf("overflow: %d views in %d rows, want %d with an overflow row", viewsBack, len(back.Rows), views)
	}
}

func TestWeightedQuantile(t *testing.T) {
	var s Sketch
	s.AddWeighted(100, 3) // three views of 100
	s.AddWeighted(1000, 1)
	if got, _ := s.Quantile(0.5); math.Abs(got-100) > 1 || s.Count() != 4 {
		t.Errorf("median %v count %d", got, s.Count())
	}
	if got, _ := s.Quantile(1); math.Abs(got-1000) > 10 {
		t.Errorf("max %v", got)
	}
}

// A website sampling one view in ten counts each sent view ten times (DDSketch bins hold
// weighted counts): its percentiles and counts stay within 2 % of the whole stream's.
func TestSampledStreamWithinTwoPercent(t *testing.T) {
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var sampled Sketch
		var all []float64
		for range 200_000 {
			v := math.Exp(7.6 + 0.6*rng.NormFloat64())
			all = append(all, v)
			if rng.IntN(10) == 0 {
				sampled.AddWeighted(v, 10)
			}
		}
		slices.Sort(all)
		for _, q := range []float64{0.5, 0.75, 0.9} {
			exact := exactQuantile(all, q)
			got, _ := sampled.Quantile(q)
			if rel := math.Abs(got-exact) / exact; rel > 0.02 {
				t.Errorf("seed %d p%v: sampled %v, whole stream %v (%.2f %%)", seed, q*100, got, exact, rel*100)
			}
		}
		if rel := math.Abs(float64(sampled.Count())-float64(len(all))) / float64(len(all)); rel > 0.02 {
			t.Errorf("seed %d: sampled count %d, whole stream %d", seed, sampled.Count(), len(all))
		}
	}
}

// Sketches given their bins by an arena count as sketches that made their own: each its own
// bins, however far apart their values and however many share the arena.
// wideSketches fills 40 sketches from a, each with n values spanning steps bins apart by
// factor (e^(step×k), scaled by i+from), and checks each encodes as one that made its own bins.
func wideSketches(t *testing.T, a *Arena, name string, n, steps int, step float64, from int) {
	t.Helper()
	for i := range 40 {
		var s, own Sketch
		for j := range n {
			v := math.Exp(float64(j%steps)*step) * float64(from+i)
			s.AddPreparedIn(a, Prepare(v), 1)
			own.Add(v)
		}
		if got, want := s.AppendBinary(nil), own.AppendBinary(nil); !bytes.Equal(got, want) {
			t.Errorf("%s sketch %d: %x, want %x", name, i, got, want)
		}
	}
}

func TestArena(t *testing.T) {
	var a Arena
	var reserved, plain [3]Sketch
	for i, vs := range [][]float64{{1}, {5, 5000, 0.5}, {120, 121, 119, 3e6, 0, 7e-12}} {
		for _, v := range vs {
			reserved[i].AddPreparedIn(&a, Prepare(v), 2)
			plain[i].AddWeighted(v, 2)
		}
	}
	// Past a chunk: sketches of wide spans, their growth from new chunks.
	wideSketches(t, &a, "wide", 300, 150, 0.05, 1)
	for i := range reserved {
		if got, want := reserved[i].AppendBinary(nil), plain[i].AppendBinary(nil); !bytes.Equal(got, want) {
			t.Errorf("sketch %d: %x, want %x", i, got, want)
		}
	}
	// Reset: the next sketches get the same chunks, zeroed, and count as their own again.
	chunks := len(a.chunks)
	a.Reset()
	wideSketches(t, &a, "after Reset, wide", 200, 100, 0.07, 3)
	if len(a.chunks) > chunks {
		t.Errorf("after Reset the arena made %d chunks more, want its own reused", len(a.chunks)-chunks)
	}
}
