package rumstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
)

// Session is one compaction's view of a website's day objects: each day it touches is read
// whole once, changed in memory, and written back as a new generation by Commit. One
// consumer compacts a website at a time (its FIFO message group); a pointer that changed
// meanwhile fails the commit rather than lose a fold.
type Session struct {
	st               *Store
	account, website string
	mu               sync.Mutex // the fold writes tables from several goroutines
	days             map[string]*dayObject
}

// dayObject is a day's sections as a compaction holds them.
type dayObject struct {
	gen      int64  // the stored generation (0: none)
	object   string // its key
	prev     string // the key of the generation before it
	sections map[string][]byte
	applied  []string
	dirty    bool
	// legacy tells that the day was read from its items, stored before objects existed.
	legacy bool
}

// Session starts a compaction of a website's days.
func (s *Store) Session(account, website string) *Session {
	return &Session{st: s, account: account, website: website, days: map[string]*dayObject{}}
}

// day reads a day's object once: the generation its pointer names, else its tables stored as
// items before objects existed, else nothing.
func (x *Session) day(ctx context.Context, day string) (*dayObject, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if d := x.days[day]; d != nil {
		return d, nil
	}
	ptrs, err := x.st.table.RUMDays(ctx, x.account, x.website, []string{day}, true)
	if err != nil {
		return nil, err
	}
	d := &dayObject{sections: map[string][]byte{}}
	if p, ok := ptrs[day]; ok {
		body, err := x.st.bucket.Get(ctx, p.Object)
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
			// Expired with its day: the day starts again.
			x.st.log.WarnContext(ctx, "RUM day object missing; the day starts empty", "website", x.website, "day", day, "gen", p.Gen)
		case err != nil:
			return nil, err
		default:
			if d.sections, err = decodeFile(body); err != nil {
				return nil, fmt.Errorf("RUM day %s: %w", day, err)
			}
		}
		d.gen, d.object, d.prev = p.Gen, p.Object, p.Prev
		d.applied = decodeApplied(d.sections[sectionApplied])
	} else {
		cells, distinct, err := x.st.table.RUMLegacyDay(ctx, x.account, x.website, day)
		if err != nil {
			return nil, err
		}
		for c, data := range cells {
			d.sections[cellName(c)] = data
		}
		if distinct != nil {
			d.sections[sectionDistinct] = distinct
		}
		d.legacy = len(d.sections) > 0
	}
	x.days[day] = d
	return d, nil
}

// Tables reads the given tables; a table never written is absent. Each carries, as Applied,
// the log entries its day's object was last written with.
func (x *Session) Tables(ctx context.Context, cells []model.RUMCell) (map[model.RUMCell]model.RUMTable, error) {
	out := make(map[model.RUMCell]model.RUMTable, len(cells))
	for _, c := range cells {
		d, err := x.day(ctx, c.Day)
		if err != nil {
			return nil, err
		}
		if data, ok := d.sections[cellName(c)]; ok {
			out[c] = model.RUMTable{Data: data, Applied: d.applied}
		}
	}
	return out, nil
}

// PutTable replaces a table.
func (x *Session) PutTable(ctx context.Context, c model.RUMCell, data []byte) error {
	return x.put(ctx, c.Day, cellName(c), data)
}

func (x *Session) put(ctx context.Context, day, name string, data []byte) error {
	d, err := x.day(ctx, day)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	d.sections[name] = data
	d.dirty = true
	return nil
}

// newTag is a short random tag of a writer's object.
func newTag() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// HasTotals tells whether a day has running totals.
func (x *Session) HasTotals(ctx context.Context, day string) (bool, error) {
	d, err := x.day(ctx, day)
	if err != nil {
		return false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for name := range d.sections {
		if strings.HasPrefix(name, prefixTotals) {
			return true, nil
		}
	}
	return false, nil
}

// CopyDay makes the running totals of day to those of day from: a new day's totals start as
// the month's previous day's.
func (x *Session) CopyDay(ctx context.Context, from, to string) error {
	src, err := x.day(ctx, from)
	if err != nil {
		return err
	}
	dst, err := x.day(ctx, to)
	if err != nil {
		return err
	}
	for name := range dst.sections {
		if strings.HasPrefix(name, prefixTotals) {
			delete(dst.sections, name)
		}
	}
	for name, data := range src.sections {
		if strings.HasPrefix(name, prefixTotals) {
			dst.sections[name] = data
		}
	}
	dst.dirty = true
	return nil
}

// Distinct reads the distinct-page sketches of the given days; a day without one is absent.
func (x *Session) Distinct(ctx context.Context, days []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, day := range days {
		d, err := x.day(ctx, day)
		if err != nil {
			return nil, err
		}
		if data, ok := d.sections[sectionDistinct]; ok {
			out[day] = data
		}
	}
	return out, nil
}

// PutDistinct replaces a day's distinct-page sketch.
func (x *Session) PutDistinct(ctx context.Context, day string, data []byte) error {
	return x.put(ctx, day, sectionDistinct, data)
}

// Seen reads the record of the views folded into a day (nil if none).
func (x *Session) Seen(ctx context.Context, day string) ([]byte, error) {
	d, err := x.day(ctx, day)
	if err != nil {
		return nil, err
	}
	return d.sections[sectionSeen], nil
}

// PutSeen replaces the record of the views folded into a day.
func (x *Session) PutSeen(ctx context.Context, day string, data []byte) error {
	return x.put(ctx, day, sectionSeen, data)
}

// Commit writes each changed day as a new generation, recording that it was written with the
// log entries applied, points its pointer at it, and removes the generation before the
// previous one (a report that read the previous pointer may still be reading that one). A
// generation's key carries a tag of its own, so that a second writer, whose pointer update
// fails, cannot have replaced the first's object either.
func (x *Session) Commit(ctx context.Context, applied []string) error {
	days := make([]string, 0, len(x.days))
	for day, d := range x.days {
		if d.dirty {
			days = append(days, day)
		}
	}
	slices.Sort(days)
	for _, day := range days {
		d := x.days[day]
		d.sections[sectionApplied] = encodeApplied(applied)
		body, dir := encodeFile(d.sections)
		gen := d.gen + 1
		key := blobstore.RUMDayKey(x.account, x.website, day, gen, newTag())
		if err := x.st.bucket.Put(ctx, key, body, "application/octet-stream"); err != nil {
			return err
		}
		if err := x.st.table.PutRUMDay(ctx, x.account, x.website, model.RUMDay{Day: day, Gen: gen, Object: key, Prev: d.object, Dir: dir, Size: int64(len(body))},
			d.gen, x.st.dayExpires(day)); err != nil {
			return err
		}
		if d.prev != "" {
			if err := x.st.bucket.Delete(ctx, d.prev); err != nil {
				x.st.log.WarnContext(ctx, "delete an old generation of a RUM day; it expires with the bucket's rule", "website", x.website, "day", day, "err", err)
			}
		}
		if d.legacy {
			// The object holds them now; readers go by the pointer.
			if err := x.st.table.DeleteRUMLegacyDay(ctx, x.account, x.website, day); err != nil {
				x.st.log.WarnContext(ctx, "delete a RUM day's items after moving them into its object", "website", x.website, "day", day, "err", err)
			}
			d.legacy = false
		}
		d.gen, d.object, d.prev, d.applied, d.dirty = gen, key, d.object, applied, false
	}
	return nil
}
