package rumworker

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
)

// A page view counts once however SQS delivers it: twice from the beacon queue, appended to a
// website's log twice by the rebatcher, after later entries, or redriven from a dead-letter
// queue days later. Collect gives every view an ID; each day object keeps, for the views of
// its day, which view IDs were folded and by which log entry (seen records). A compaction
// then:
//  1. drops each view another entry folded, or that this compaction has already taken, and
//     claims the others for its entry;
//  2. folds the remaining views (each day object also skips the entries it was last written
//     with: the retry of a compaction interrupted half way);
//  3. writes each changed day with its tables and its claims together.
// A view claimed by its own entry is folded again only by that entry's retry, into the days
// that entry did not reach.

// seenEntryBytes is one seen entry: the view's key and its entry's tag.
const seenEntryBytes = len(rum.ViewKey{}) + 4

// lookup reads a key as 8 bytes and 4: a key of another size does not compile.
var _ = [1]struct{}{}[len(rum.ViewKey{})-12]

// seenSet is what the seen records say of the days a compaction touches, and the claims it
// adds. Records stay as stored, entries sorted by key, and are searched in place: decoding a
// busy day's entries into a map for every compaction would cost more than the fold.
type seenSet struct {
	stored map[string][]byte                 // day -> sorted entries
	added  map[string]map[rum.ViewKey]uint32 // day -> this compaction's claims
}

func newSeenSet() *seenSet {
	return &seenSet{stored: map[string][]byte{}, added: map[string]map[rum.ViewKey]uint32{}}
}

// batchTag is a short stand-in for a log entry's key in seen entries; never 0.
func batchTag(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	if t := h.Sum32(); t != 0 {
		return t
	}
	return 1
}

// load keeps a day's stored record.
func (s *seenSet) load(day string, data []byte) error {
	if len(data)%seenEntryBytes != 0 {
		return fmt.Errorf("a seen record of %d bytes", len(data))
	}
	s.stored[day] = data
	return nil
}

// lookup is a view's search in its day's stored record: its key as two big-endian integers
// (the order of bytes.Compare), and where the search stands.
type lookup struct {
	data   []byte // the day's stored record
	hi     uint64 // the key's first 8 bytes
	lo     uint32 // its last 4
	base   int    // the first entry the key may be at, once the search is done
	folded bool   // the record has the key
	owner  uint32 // the tag of the entry that folded it
}

// searchStored finds views' keys in their days' stored records. The searches go in lockstep,
// a probe of each per round, so that their cache misses overlap (a busy day's record is
// megabytes): searched one after the other, they were the dedupe's time.
func (s *seenSet) searchStored(ls []lookup) {
	less := func(l *lookup, i int) bool {
		e := l.data[i*seenEntryBytes:]
		eh := binary.BigEndian.Uint64(e)
		return eh < l.hi || eh == l.hi && binary.BigEndian.Uint32(e[8:]) < l.lo
	}
	size := make([]int, len(ls))
	for q := range ls {
		size[q] = len(ls[q].data) / seenEntryBytes
	}
	for more := true; more; {
		more = false
		for q := range ls {
			l := &ls[q]
			if size[q] <= 1 {
				continue
			}
			half := size[q] / 2
			if less(l, l.base+half) {
				l.base += half
			}
			size[q] -= half
			more = more || size[q] > 1
		}
	}
	for q := range ls {
		l := &ls[q]
		if size[q] == 0 {
			continue
		}
		if less(l, l.base) {
			l.base++
		}
		if l.base*seenEntryBytes < len(l.data) {
			e := l.data[l.base*seenEntryBytes:]
			if binary.BigEndian.Uint64(e) == l.hi && binary.BigEndian.Uint32(e[8:]) == l.lo {
				l.folded, l.owner = true, binary.BigEndian.Uint32(e[len(rum.ViewKey{}):])
			}
		}
	}
}

// encode writes a day's record: its stored entries and this compaction's claims, in key order.
func (s *seenSet) encode(day string) []byte {
	added := s.added[day]
	keys := make([]rum.ViewKey, 0, len(added))
	for k := range added {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	old := s.stored[day]
	out := make([]byte, 0, len(old)+len(keys)*seenEntryBytes)
	for _, k := range keys {
		// The stored entries before k, found comparing keys as integers and copied at once.
		hi, lo := binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint32(k[8:])
		n := 0
		for ; n+seenEntryBytes <= len(old); n += seenEntryBytes {
			eh := binary.BigEndian.Uint64(old[n:])
			if eh > hi || eh == hi && binary.BigEndian.Uint32(old[n+8:]) >= lo {
				break
			}
		}
		out, old = append(out, old[:n]...), old[n:]
		out = append(out, k[:]...)
		out = binary.BigEndian.AppendUint32(out, added[k])
	}
	return append(out, old...)
}

// compareKeys orders view keys as bytes.Compare does.
func compareKeys(a, b rum.ViewKey) int {
	return cmp.Or(cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])),
		cmp.Compare(binary.BigEndian.Uint32(a[8:]), binary.BigEndian.Uint32(b[8:])))
}

// claim keeps, view by view in order, the views to fold: one without an ID (queued before views
// had IDs), one no entry folded, or one its own entry claimed in an interrupted attempt; it
// drops one another entry folded and a second copy within this compaction. It records the
// claims in seen and returns the days it changed and how many views it dropped.
func claim(msgs []message, seen *seenSet) (changed map[string]bool, dropped int) {
	changed = map[string]bool{}
	// retaken are the views this compaction takes again for the entry that claimed them in
	// an interrupted attempt; the views it claims anew are in seen.added.
	retaken := map[string]map[rum.ViewKey]bool{}
	var ls []lookup
	for i := range msgs {
		tag := batchTag(msgs[i].batch.ID)
		views := msgs[i].batch.Views
		// What the stored records say of the message's views, all searched at once.
		keys := make([]rum.ViewKey, len(views))
		at := make([]int, len(views)) // each view's lookup, -1 without one
		ls = ls[:0]
		for j, v := range views {
			k, ok := rum.ParseViewID(v.ID)
			keys[j], at[j] = k, -1
			if ok && len(v.Day) == 8 {
				at[j] = len(ls)
				ls = append(ls, lookup{data: seen.stored[v.Day], hi: binary.BigEndian.Uint64(k[:8]), lo: binary.BigEndian.Uint32(k[8:])})
			}
		}
		seen.searchStored(ls)
		kept := views[:0]
		for j, v := range views {
			if at[j] >= 0 {
				k, l := keys[j], &ls[at[j]]
				switch _, claimed := seen.added[v.Day][k]; {
				case claimed, l.folded && l.owner != tag, l.folded && retaken[v.Day][k]:
					// Taken already by this compaction, or folded by another entry.
					dropped++
					continue
				case l.folded:
					if retaken[v.Day] == nil {
						retaken[v.Day] = map[rum.ViewKey]bool{}
					}
					retaken[v.Day][k] = true
				default:
					if seen.added[v.Day] == nil {
						seen.added[v.Day] = map[rum.ViewKey]uint32{}
					}
					seen.added[v.Day][k] = tag
					changed[v.Day] = true
				}
			}
			kept = append(kept, v)
		}
		msgs[i].batch.Views = kept
	}
	return changed, dropped
}

// dedupe drops the views folded before and records this compaction's claims in the days'
// seen records (step 1 above). It returns the messages with the views left to fold.
func (a *Aggregator) dedupe(ctx context.Context, sess *rumstore.Session, website string, msgs []message) ([]message, error) {
	days := map[string]bool{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			if _, ok := rum.ParseViewID(v.ID); ok && len(v.Day) == 8 {
				days[v.Day] = true
			}
		}
	}
	seen := newSeenSet()
	for _, day := range sortedKeys(days) {
		data, err := sess.Seen(ctx, day)
		if err != nil {
			return nil, err
		}
		if err := seen.load(day, data); err != nil {
			return nil, fmt.Errorf("day %s: %w", day, err)
		}
	}
	changed, dropped := claim(msgs, seen)
	if dropped > 0 {
		a.log.InfoContext(ctx, "skip page views folded before", "website", website, "views", dropped)
	}
	for _, day := range sortedKeys(changed) {
		if err := sess.PutSeen(ctx, day, seen.encode(day)); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}
