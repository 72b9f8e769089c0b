package rumworker

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// A page view counts once however SQS delivers it: twice from the beacon queue, regrouped into
// another aggregator batch by the rebatcher, after later batches, or redriven from a
// dead-letter queue days later. Collect gives every view an ID; the aggregator records, per
// 10-second window of collection, which view IDs it folded and by which batch (seen records),
// and which batches it folded completely (batch records). A fold then:
//  1. drops the batches folded completely;
//  2. drops each view another batch folded, or that this fold has already taken, and claims
//     the others for its batch, writing the claims before any table;
//  3. folds the remaining views (each table also skips the batches it has folded: the retry of
//     a fold interrupted half way);
//  4. records its batches as folded.
// A view claimed by its own batch is folded again only by that batch's retry, into the tables
// that batch did not reach.

// seenEntryBytes is one seen entry: the view's key and its batch's tag.
const seenEntryBytes = len(rum.ViewKey{}) + 4

// seenSet is what the seen records say of the windows a fold touches, and the claims it adds.
// Records stay as stored, entries sorted by key, and are searched in place: decoding a busy
// window's thousands of entries into a map for every fold would cost more than the fold.
type seenSet struct {
	stored map[int64][]byte       // window -> sorted entries
	added  map[rum.ViewKey]uint32 // this fold's claims
}

func newSeenSet() *seenSet {
	return &seenSet{stored: map[int64][]byte{}, added: map[rum.ViewKey]uint32{}}
}

// batchTag is a short stand-in for a batch ID in seen entries; never 0.
func batchTag(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	if t := h.Sum32(); t != 0 {
		return t
	}
	return 1
}

func window(k rum.ViewKey) int64 { return k.Collected() / model.RUMSeenWindow }

// load keeps a window's stored record.
func (s *seenSet) load(win int64, data []byte) error {
	if len(data)%seenEntryBytes != 0 {
		return fmt.Errorf("a seen record of %d bytes", len(data))
	}
	s.stored[win] = data
	return nil
}

// owner returns the tag of the batch that folded the view, if any did.
func (s *seenSet) owner(k rum.ViewKey) (uint32, bool) {
	if t, ok := s.added[k]; ok {
		return t, true
	}
	data := s.stored[window(k)]
	n := len(data) / seenEntryBytes
	i := sort.Search(n, func(i int) bool { return bytes.Compare(data[i*seenEntryBytes:i*seenEntryBytes+len(k)], k[:]) >= 0 })
	if i < n && bytes.Equal(data[i*seenEntryBytes:i*seenEntryBytes+len(k)], k[:]) {
		return binary.BigEndian.Uint32(data[i*seenEntryBytes+len(k):]), true
	}
	return 0, false
}

// encode writes a window's record: its stored entries and this fold's claims, in key order.
func (s *seenSet) encode(win int64) []byte {
	var keys []rum.ViewKey
	for k := range s.added {
		if window(k) == win {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b rum.ViewKey) int { return bytes.Compare(a[:], b[:]) })
	old := s.stored[win]
	out := make([]byte, 0, len(old)+len(keys)*seenEntryBytes)
	for len(old) > 0 || len(keys) > 0 {
		if len(keys) == 0 || len(old) > 0 && bytes.Compare(old[:len(keys[0])], keys[0][:]) < 0 {
			out, old = append(out, old[:seenEntryBytes]...), old[seenEntryBytes:]
			continue
		}
		out = append(out, keys[0][:]...)
		out = binary.BigEndian.AppendUint32(out, s.added[keys[0]])
		keys = keys[1:]
	}
	return out
}

// claim keeps, view by view in queue order, the views to fold: one without an ID (queued before
// views had IDs), one no batch folded, or one its own batch claimed in an interrupted attempt;
// it drops one another batch folded and a second copy within this fold. It records the claims
// in seen and returns the windows it changed and how many views it dropped.
func claim(msgs []message, seen *seenSet) (changed map[int64]bool, dropped int) {
	changed = map[int64]bool{}
	taken := map[rum.ViewKey]bool{}
	for i := range msgs {
		tag := batchTag(msgs[i].batch.ID)
		views := msgs[i].batch.Views
		kept := views[:0]
		for _, v := range views {
			k, ok := rum.ParseViewID(v.ID)
			if ok {
				owner, folded := seen.owner(k)
				if taken[k] || folded && owner != tag {
					dropped++
					continue
				}
				taken[k] = true
				if !folded {
					seen.added[k] = tag
					changed[window(k)] = true
				}
			}
			kept = append(kept, v)
		}
		msgs[i].batch.Views = kept
	}
	return changed, dropped
}

// dedupe drops the batches and views folded before and writes this fold's claims (steps 1
// and 2 above). It returns the messages left to fold.
func (a *Aggregator) dedupe(ctx context.Context, account, website string, msgs []message) ([]message, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.batch.ID
	}
	done, err := a.store.RUMBatchesFolded(ctx, account, website, ids)
	if err != nil {
		return nil, err
	}
	left := msgs[:0]
	for _, m := range msgs {
		if done[m.batch.ID] {
			a.log.InfoContext(ctx, "skip a batch folded before", "website", website, "batch", m.batch.ID, "views", len(m.batch.Views))
			continue
		}
		left = append(left, m)
	}
	wins := map[int64]bool{}
	for _, m := range left {
		for _, v := range m.batch.Views {
			if k, ok := rum.ParseViewID(v.ID); ok {
				wins[window(k)] = true
			}
		}
	}
	if len(wins) == 0 {
		return left, nil
	}
	list := make([]int64, 0, len(wins))
	for w := range wins {
		list = append(list, w)
	}
	stored, err := a.store.RUMSeen(ctx, account, website, list)
	if err != nil {
		return nil, err
	}
	seen := newSeenSet()
	for _, r := range stored {
		if err := seen.load(r.Window, r.Data); err != nil {
			return nil, fmt.Errorf("window %d: %w", r.Window, err)
		}
	}
	changed, dropped := claim(left, seen)
	if dropped > 0 {
		a.log.InfoContext(ctx, "skip page views folded before", "website", website, "views", dropped)
	}
	for w := range changed {
		data := seen.encode(w)
		if len(data) > maxItemBytes {
			return nil, fmt.Errorf("more page views collected in 10 seconds (window %d) than one record of folded views holds (%d)", w, maxItemBytes/seenEntryBytes)
		}
		if err := a.store.PutRUMSeen(ctx, account, website, model.RUMSeen{Window: w, Data: data}); err != nil {
			return nil, err
		}
	}
	return left, nil
}
