package rumworker

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
)

// foldGolden is the digest of everything foldAll computes, as the fold's code at 5d09cd6
// (before the fold was made faster) computed it. The fold's data structures may change; what
// it computes may not: a different digest is a different table somewhere.
const foldGolden = "fa253fc245ee19cea501fd8386a58e2b14142aa433708c7f34e3498a62fa559b"

// The fold of log entries of hard loads and single-page-app visits over two days (weighted
// views, custom metrics, monitored pages, the cache's reasons and soft navigations' starts,
// views another entry folded before and a view twice in one compaction) gives byte for byte
// the tables, running totals and seen records it gave before the fold was made faster.
func TestFoldComputesWhatItDidBefore(t *testing.T) {
	got := foldAll(t)
	if got != foldGolden {
		t.Errorf("the fold's tables' digest is %s, want %s: the fold computes something else than before", got, foldGolden)
	}
}

// foldAll folds a fixed set of entries as a compaction does and returns the digest of every
// stored table it would write: the daily segment and attribution tables, the running totals
// of each message and the days' seen records, each named by its cell.
func foldAll(t *testing.T) string {
	rng := rand.New(rand.NewPCG(11, 11))
	days := []string{"20261122", "20261123"}
	id := func() string {
		var b [12]byte
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return hex.EncodeToString(b[:])
	}
	var entries [][]byte
	var all []rum.View
	for e := range 6 {
		batch := rum.Batch{ID: fmt.Sprintf("entry-%d", e), Account: "a", Website: "w"}
		for len(batch.Views) < 150 {
			day := days[rng.IntN(2)]
			var vs []rum.View
			if e%2 == 0 {
				vs = []rum.View{benchView(rng, day, 60, 12)}
			} else {
				vs = spaVisit(rng, day, 60, 12)
			}
			for _, v := range vs {
				v.ID = id()
				if rng.IntN(7) == 0 {
					v.Weight = uint64(2 + rng.IntN(3))
				}
				if rng.IntN(5) == 0 {
					v.Metrics["cart_items"] = float64(rng.IntN(9))
				}
				batch.Views = append(batch.Views, v)
			}
		}
		// A view of an earlier entry again (the same compaction takes it once).
		if e > 0 {
			batch.Views = append(batch.Views, all[rng.IntN(len(all))])
		}
		all = append(all, batch.Views...)
		wire := rum.WireBatch{ID: batch.ID, Account: batch.Account, Website: batch.Website}
		for _, v := range batch.Views {
			wire.Views = append(wire.Views, v.Wire())
		}
		chunk, err := EncodeChunk(wire)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, chunk)
	}
	// Views another entry folded before: a seen record of the first day holding some.
	other := newSeenSet()
	other.added[days[0]] = map[rum.ViewKey]uint32{}
	for i, v := range all {
		if k, ok := rum.ParseViewID(v.ID); ok && i%11 == 0 && v.Day == days[0] {
			other.added[days[0]][k] = batchTag("earlier")
		}
		// Views an interrupted attempt claimed for their own entry (the third): taken again,
		// once.
		if k, ok := rum.ParseViewID(v.ID); ok && i%7 == 0 && v.Day == days[0] {
			if _, earlier := other.added[days[0]][k]; !earlier {
				other.added[days[0]][k] = batchTag("entry-3")
			}
		}
	}
	for range 500 {
		k, _ := rum.ParseViewID(id())
		k[0] ^= 0xff // not one of the views above
		other.added[days[0]][k] = batchTag("earlier")
	}
	seen := newSeenSet()
	if err := seen.load(days[0], other.encode(days[0])); err != nil {
		t.Fatal(err)
	}

	var msgs []message
	for i, chunk := range entries {
		b, err := DecodeChunk(chunk)
		if err != nil {
			t.Fatal(err)
		}
		b.ID = fmt.Sprintf("entry-%d", i)
		for j := range b.Views {
			b.Views[j].Segments = b.Views[j].Segments.WithCountry(b.Views[j].Country)
		}
		msgs = append(msgs, message{id: b.ID, batch: b})
	}
	changed, dropped := claim(msgs, seen)
	if dropped == 0 {
		t.Fatal("no view was dropped: the test does not exercise the dedupe")
	}

	out := map[string][]byte{}
	// The entries as read and deduped, written again: what the reader read.
	for i, m := range msgs {
		raw, err := m.batch.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("entry %d", i)] = raw
	}
	for _, day := range slices.Sorted(func(yield func(string) bool) {
		for d := range changed {
			if !yield(d) {
				return
			}
		}
	}) {
		out["seen "+day] = seen.encode(day)
	}
	for i, m := range msgs {
		f := newFold()
		for j := range m.batch.Views {
			v := &m.batch.Views[j]
			f.add(rollup.LaterDays(days, v.Day), *v)
		}
		for _, c := range f.cells() {
			if tab := f.table(c); tab != nil {
				out[fmt.Sprintf("fold %d %v", i, c)] = tab.Encode()
			}
		}
		// As the aggregator does: the next message's fold reuses this one's bins and totals,
		// which must leave its tables as a new fold's.
		f.release()
	}
	d := daily{}
	cells := dailyCells(msgs)
	if err := d.load(cells, map[model.RUMCell]model.RUMTable{}, msgs); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		d.addMessage(i, m.batch.Views)
	}
	for _, c := range cells {
		tab, err := d.table(c)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("daily %v", c)] = tab.Encode()
	}
	if len(out) < 100 {
		t.Fatalf("only %d tables: the test folds too little", len(out))
	}
	names := slices.SortedFunc(func(yield func(string) bool) {
		for n := range out {
			if !yield(n) {
				return
			}
		}
	}, cmp.Compare)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(out[n]))
		h.Write(out[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Log entries written before zstd, gzipped, read as they did, and as the same entry written
// now reads; the new entry is the smaller.
func TestGzipAndZstdEntriesRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var wire rum.WireBatch
	for len(wire.Views) < 200 {
		for _, v := range spaVisit(rng, "20261122", 50, 10) {
			v.ID = rum.NewViewID(time.Unix(1_790_000_000, 0))
			wire.Views = append(wire.Views, v.Wire())
		}
	}
	raw, err := wire.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if _, err := w.Write(raw); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	zs, err := EncodeChunk(wire)
	if err != nil {
		t.Fatal(err)
	}
	if len(zs) >= gz.Len() {
		t.Errorf("the zstd entry is %d bytes, the gzip one %d", len(zs), gz.Len())
	}
	for name, data := range map[string][]byte{"gzip": gz.Bytes(), "zstd": zs} {
		got, err := DecodeChunk(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, _ := got.MarshalJSON()
		if !bytes.Equal(again, raw) {
			t.Errorf("%s: the entry read is not the batch written", name)
		}
	}
	if _, err := DecodeChunk(zs[:len(zs)-3]); err == nil {
		t.Error("a truncated zstd entry read without an error")
	}
}
