package rumworker

import (
	"testing"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
)

// A stored table's overflow row (its rows with fewest views, moved together when it reached
// an item's size) stays through a fold, and a message the table already holds is not added to
// it again.
func TestDailyTablesKeepOverflowAndSkipHeldMessages(t *testing.T) {
	mask := rum.SiteMasks[0]
	c := model.RUMCell{Day: "20261201", Dim: rum.SegmentDim(mask), Metric: "lcp", Daily: true}
	stored := rollup.NewStatTable()
	stored.Row(rollup.RowKey{Seg: uint64(5 & mask)}).Add(rollup.Prepare(1000), 0, 3)
	stored.Row(rollup.OverflowKey).Add(rollup.Prepare(3000), 1, 7)
	msgs := []message{{batch: rum.WireBatch{ID: "held"}}, {batch: rum.WireBatch{ID: "new"}}}
	timings := make([]float64, rum.NumTimings)
	for i := range timings {
		timings[i] = -1
	}
	lcp, _ := rum.TimingIndex("lcp")
	timings[lcp] = 2000
	view := rum.WireView{Day: c.Day, Timings: timings, Segments: 5}
	msgs[0].batch.Views = []rum.WireView{view}
	msgs[1].batch.Views = []rum.WireView{view, view}

	d := daily{}
	if err := d.load([]model.RUMCell{c}, map[model.RUMCell]model.RUMTable{c: {Data: stored.Encode(), Applied: []string{"held"}, Version: 1}}, msgs); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		d.addMessage(i, m.batch.Views)
	}
	tab, err := d.table(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Rows[rollup.RowKey{Seg: uint64(5 & mask)}].Views(); got != 5 {
		t.Errorf("row 5 has %d views, want the stored 3 and the new message's 2 (the held one's not again)", got)
	}
	if o := tab.Rows[rollup.OverflowKey]; o == nil || o.Views() != 7 {
		t.Errorf("overflow row %+v, want its 7 views kept", o)
	}
}
