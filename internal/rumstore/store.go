// Package rumstore keeps websites' real-user data where its volume costs little: each UTC
// day's tables (running totals, daily segment and attribution tables, distinct pages, the IDs
// of the views folded) in one S3 object that each compaction writes whole as a new generation,
// with a small pointer item per day in the table naming the generation and where each table
// lies in it; and the log of page views waiting to be folded, small entries in the table and
// large ones in S3. A report reads a day's pointer and then only the tables it needs, by
// range. Days stored before objects existed (one item per table) are read where a day has no
// pointer, and moved into an object when a compaction first writes the day.
package rumstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/store"
)

// Store reads and writes websites' real-user data.
type Store struct {
	table     *store.Store
	bucket    *blobstore.Bucket
	retention time.Duration
	log       *slog.Logger
}

// New returns a Store over the table and the real-user bucket, whose items and objects of a
// day expire retention after it.
func New(table *store.Store, bucket *blobstore.Bucket, retention time.Duration, log *slog.Logger) *Store {
	return &Store{table: table, bucket: bucket, retention: retention, log: log}
}

// dayExpires is when the pointer of a day (yyyymmdd) expires: a day after its object does.
func (s *Store) dayExpires(day string) time.Time {
	t, err := time.Parse(model.DayLayout, day)
	if err != nil {
		return time.Time{}
	}
	return t.Add(s.retention + 48*time.Hour)
}

// MonthExpires is when a month's index (yyyymm) expires: with its last day.
func (s *Store) MonthExpires(month string) time.Time {
	t, err := time.Parse("200601", month)
	if err != nil {
		return time.Time{}
	}
	return t.AddDate(0, 1, 0).Add(s.retention + 48*time.Hour)
}

// RUMIndexes reads the months' indexes (the days with running totals, the custom names).
func (s *Store) RUMIndexes(ctx context.Context, account, website string, months []string) (map[string]model.RUMIndex, error) {
	return s.table.RUMIndexes(ctx, account, website, months)
}

// DeleteWebsite removes every object of a website (its days and log entries) and says how
// many; its items go with the website's partition.
func (s *Store) DeleteWebsite(ctx context.Context, account, website string) (int, error) {
	return s.bucket.DeletePrefix(ctx, blobstore.WebsitePrefix(account, website))
}

// DeleteDaysBefore removes a website's day objects of the days before day (yyyymmdd): a
// retention shorter than the bucket's. Their pointers stay until they expire; a report finds
// the object gone and counts the day empty, as it does for a day the bucket expired.
func (s *Store) DeleteDaysBefore(ctx context.Context, account, website, day string) (int, error) {
	return s.bucket.DeleteBefore(ctx, blobstore.WebsitePrefix(account, website)+"rum/", day)
}

// readConcurrency bounds the ranged reads a report makes at once.
const readConcurrency = 16

// rangeGap is the most bytes between two sections that one ranged read covers rather than
// making two requests.
const rangeGap = 32 << 10

// RUMTables reads the given tables; a table never written is absent from the map. Each day's
// pointer names its object and where each table lies in it; the tables of a day are read in as
// few ranges as lie close together.
func (s *Store) RUMTables(ctx context.Context, account, website string, cells []model.RUMCell, consistent bool) (map[model.RUMCell]model.RUMTable, error) {
	byDay := map[string][]model.RUMCell{}
	for _, c := range cells {
		byDay[c.Day] = append(byDay[c.Day], c)
	}
	return readTables(ctx, s, account, website, byDay, cellName, consistent, s.table.RUMTables)
}

// RUMDistinct reads the distinct-page sketches of the given days; a day without one is absent.
func (s *Store) RUMDistinct(ctx context.Context, account, website string, days []string, consistent bool) (map[string]model.RUMTable, error) {
	byDay := map[string][]string{}
	for _, d := range days {
		byDay[d] = []string{d}
	}
	return readTables(ctx, s, account, website, byDay, func(string) string { return sectionDistinct }, consistent, s.table.RUMDistinct)
}

// readTables reads the tables of the keys by day (see readSections), and those of days stored
// before objects existed from the table, with legacy.
func readTables[K comparable](ctx context.Context, s *Store, account, website string, byDay map[string][]K, name func(K) string, consistent bool,
	legacy func(ctx context.Context, account, website string, keys []K, consistent bool) (map[K]model.RUMTable, error)) (map[K]model.RUMTable, error) {
	got, err := readSections(ctx, s, account, website, byDay, name, consistent)
	if err != nil {
		return nil, err
	}
	out := make(map[K]model.RUMTable, len(got.found))
	for k, data := range got.found {
		out[k] = model.RUMTable{Data: data}
	}
	if len(got.legacy) > 0 {
		old, err := legacy(ctx, account, website, got.legacy, consistent)
		if err != nil {
			return nil, err
		}
		for k, t := range old {
			out[k] = t
		}
	}
	return out, nil
}

// sections is what readSections found: the sections by what asked for them, and what asked
// for days without an object (stored before objects existed, if at all).
type sections[K comparable] struct {
	found  map[K][]byte
	legacy []K
}

// readSections reads, per day, the sections name gives the wanted keys. A generation removed
// under the reader (two compactions since its pointer was read) is read again from a fresh
// pointer, once.
func readSections[K comparable](ctx context.Context, s *Store, account, website string, byDay map[string][]K, name func(K) string, consistent bool) (sections[K], error) {
	out := sections[K]{found: map[K][]byte{}}
	days := make([]string, 0, len(byDay))
	for d := range byDay {
		days = append(days, d)
	}
	sort.Strings(days)
	ptrs, err := s.table.RUMDays(ctx, account, website, days, consistent)
	if err != nil {
		return out, err
	}
	var reads []*rangeRead[K]
	for _, day := range days {
		p, ok := ptrs[day]
		if !ok {
			out.legacy = append(out.legacy, byDay[day]...)
			continue
		}
		dayReads, err := planReads(day, p, byDay[day], name)
		if err != nil {
			return out, err
		}
		reads = append(reads, dayReads...)
	}
	stale, err := fetchReads(ctx, s, reads, out.found)
	if err != nil || len(stale) == 0 {
		return out, err
	}
	if !consistent {
		// Superseded while being read: the fresh pointers name the new generation.
		again := map[string][]K{}
		for _, d := range stale {
			again[d] = byDay[d]
		}
		more, err := readSections(ctx, s, account, website, again, name, true)
		if err != nil {
			return out, err
		}
		for k, v := range more.found {
			out.found[k] = v
		}
		out.legacy = append(out.legacy, more.legacy...)
		return out, nil
	}
	// A pointer read consistently names an object that is gone: it expired with its day.
	s.log.WarnContext(ctx, "RUM day objects missing; their days read as empty", "website", website, "days", strings.Join(stale, ","))
	return out, nil
}

// rangeRead is one ranged GET of a day's object, covering the sections of the keys it wants.
type rangeRead[K comparable] struct {
	day      string
	key      string
	off, len int64
	want     []wantedSection[K]
}

// wantedSection is where a key's section lies in its day's object.
type wantedSection[K comparable] struct {
	k        K
	off, len int64
}

// planReads plans the ranged reads of the sections of keys in the day's object that p points
// at: sections nearer each other than rangeGap share a read.
func planReads[K comparable](day string, p model.RUMDay, keys []K, name func(K) string) ([]*rangeRead[K], error) {
	secs, err := decodeDir(p.Dir)
	if err != nil {
		return nil, fmt.Errorf("RUM day %s: %w", day, err)
	}
	at := make(map[string]section, len(secs))
	for _, sec := range secs {
		at[sec.name] = sec
	}
	type want struct {
		k   K
		sec section
	}
	var wants []want
	for _, k := range keys {
		if sec, ok := at[name(k)]; ok {
			wants = append(wants, want{k, sec})
		}
	}
	slices.SortFunc(wants, func(a, b want) int { return int(a.sec.off - b.sec.off) })
	var reads []*rangeRead[K]
	var cur *rangeRead[K]
	for _, w := range wants {
		if cur == nil || w.sec.off > cur.off+cur.len+rangeGap {
			cur = &rangeRead[K]{day: day, key: p.Object, off: w.sec.off}
			reads = append(reads, cur)
		}
		cur.len = max(cur.len, w.sec.off+w.sec.len-cur.off)
		cur.want = append(cur.want, wantedSection[K]{w.k, w.sec.off, w.sec.len})
	}
	return reads, nil
}

// fetchReads runs the reads, readConcurrency at a time, and puts each wanted section into
// found. It returns the days whose object was gone.
func fetchReads[K comparable](ctx context.Context, s *Store, reads []*rangeRead[K], found map[K][]byte) (stale []string, err error) {
	var mu sync.Mutex
	err = forEach(ctx, reads, readConcurrency, func(r *rangeRead[K]) error {
		if r.len == 0 {
			mu.Lock()
			for _, w := range r.want {
				found[w.k] = []byte{}
			}
			mu.Unlock()
			return nil
		}
		body, err := s.bucket.GetRange(ctx, r.key, r.off, r.len)
		if errors.Is(err, blobstore.ErrNotFound) {
			mu.Lock()
			stale = append(stale, r.day)
			mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, w := range r.want {
			found[w.k] = body[w.off-r.off : w.off-r.off+w.len]
		}
		return nil
	})
	return stale, err
}

// forEach runs fn for each item, at most n at a time, and returns the first error.
func forEach[T any](ctx context.Context, items []T, n int, fn func(T) error) error {
	if errs := parallel.Each(ctx, items, n, fn); len(errs) > 0 {
		return errs[0]
	}
	return nil
}
