package rumworker

import (
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/rum"
)

// TestSeenRecordsRoundTrip: claims written with a day's stored entries read back with their
// entries, the record stays sorted, and claim drops what another entry folded or a second copy.
func TestSeenRecordsRoundTrip(t *testing.T) {
	at := time.Unix(1_790_000_000, 0)
	var ids []string
	for range 50 {
		ids = append(ids, rum.NewViewID(at))
	}
	const day = "20261122"
	msg := func(batch string, ids ...string) message {
		m := message{batch: rum.WireBatch{ID: batch}}
		for _, id := range ids {
			m.batch.Views = append(m.batch.Views, rum.WireView{ID: id, Day: day})
		}
		return m
	}
	// First fold: batch a claims 30 views.
	seen := newSeenSet()
	msgs := []message{msg("a", ids[:30]...)}
	changed, dropped := claim(msgs, seen)
	if len(changed) != 1 || !changed[day] || dropped != 0 || len(msgs[0].batch.Views) != 30 {
		t.Fatalf("first claim: changed %v, dropped %d, kept %d", changed, dropped, len(msgs[0].batch.Views))
	}
	record := seen.encode(day)
	if len(record) != 30*seenEntryBytes {
		t.Fatalf("record of %d bytes, want 30 entries", len(record))
	}

	// Second fold, from the stored record: batch b brings 10 of a's views and 20 new ones, one
	// of them twice; a's retry keeps its own views.
	for _, tc := range []struct {
		msgs          []message
		kept, dropped int
	}{
		{[]message{msg("b", append(append([]string{}, ids[20:50]...), ids[40])...)}, 20, 11},
		{[]message{msg("a", ids[:30]...)}, 30, 0},
		{[]message{msg("a", ids[:5]...), msg("c", ids[:5]...)}, 5, 5},
		{[]message{msg("d", "", "not an id")}, 2, 0}, // views without IDs count as they come
	} {
		seen := newSeenSet()
		if err := seen.load(day, record); err != nil {
			t.Fatal(err)
		}
		_, dropped := claim(tc.msgs, seen)
		kept := 0
		for _, m := range tc.msgs {
			kept += len(m.batch.Views)
		}
		if kept != tc.kept || dropped != tc.dropped {
			t.Errorf("batches %v: kept %d, dropped %d; want %d, %d", batchIDs(tc.msgs), kept, dropped, tc.kept, tc.dropped)
		}
		merged := seen.encode(day)
		for i := seenEntryBytes; i < len(merged); i += seenEntryBytes {
			if string(merged[i-seenEntryBytes:i-4]) >= string(merged[i:i+seenEntryBytes-4]) {
				t.Fatalf("record not in key order at entry %d", i/seenEntryBytes)
			}
		}
	}
}

func batchIDs(msgs []message) string {
	s := ""
	for _, m := range msgs {
		s += fmt.Sprint(m.batch.ID)
	}
	return s
}
