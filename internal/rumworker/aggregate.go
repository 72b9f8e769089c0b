package rumworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
)

// RollupStore is what the aggregator needs of the table: the websites and the months'
// indexes of their rollups.
type RollupStore interface {
	WebsiteByID(ctx context.Context, id string) (model.Website, error)
	RUMIndexes(ctx context.Context, account, website string, months []string) (map[string]model.RUMIndex, error)
	PutRUMIndex(ctx context.Context, account, website string, ix model.RUMIndex, expires time.Time) error
}

// ViewLimiter grants a website's page views of a day within its daily limit; *quota.Keeper is
// one.
type ViewLimiter interface {
	TakeViews(ctx context.Context, account, website, day string, n int) (int, error)
}

// Aggregator compacts websites' logs of page views into their day objects. It consumes a FIFO
// queue whose message group is the website, so that a website is never compacted by two
// consumers at once: each message asks it to fold what the website's log holds (the
// rebatcher sends one, delayed by the queue, when it appends to a log). Each page view counts
// once however it is redelivered (dedupe.go); each day object also remembers the log entries
// it was last written with, so that the retry of a compaction interrupted half way adds
// nothing twice.
type Aggregator struct {
	store     RollupStore
	rollups   *rumstore.Store
	limits    ViewLimiter
	log       *slog.Logger
	countryOf func(addr string) string
	now       func() time.Time
	handle    queue.BatchHandler
}

// NewAggregatorWith returns an Aggregator over the table and the websites' real-user data that
// counts at most limits grants of each website's views a day; countryOf places a client
// address that messages queued by an earlier version still carry (geo.Country).
func NewAggregatorWith(st RollupStore, rollups *rumstore.Store, limits ViewLimiter, log *slog.Logger, countryOf func(addr string) string) *Aggregator {
	a := &Aggregator{store: st, rollups: rollups, limits: limits, log: log, countryOf: countryOf, now: time.Now}
	a.handle = queue.Batch(log, a.foldBatch)
	return a
}

// message is a batch of page views to fold, named by the log entry it came from.
type message struct {
	id    string // the log entry's key, or the SQS message ID of a batch
	batch rum.WireBatch
}

// HandleSQS is the aggregator function's handler. A failed website fails its messages in the
// batch (FIFO order must hold); other websites' messages are unaffected. An unreadable message
// is reported failed and ends in the dead-letter queue.
func (a *Aggregator) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return a.handle(ctx, ev)
}

// foldBatch compacts the log of each website of a batch once, and returns the IDs of the
// messages of the websites that failed. A message that carries views (queued by an earlier
// version, before the log) is appended to the log first.
func (a *Aggregator) foldBatch(ctx context.Context, ds []queue.Delivery[rum.WireBatch]) (failed []string) {
	var order []string
	groups := map[string][]queue.Delivery[rum.WireBatch]{}
	for _, d := range ds {
		g := d.Body.Account + "#" + d.Body.Website
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], d)
	}
	for _, g := range order {
		msgs := groups[g]
		account, website := msgs[0].Body.Account, msgs[0].Body.Website
		if err := a.compactSite(ctx, account, website, msgs); err != nil {
			a.log.ErrorContext(ctx, "fold page views; the batch will be retried", "website", website, "err", err)
			for _, m := range msgs {
				failed = append(failed, m.ID)
			}
		}
	}
	return failed
}

// compactSite folds a website's log, after appending the views messages carry.
func (a *Aggregator) compactSite(ctx context.Context, account, website string, msgs []queue.Delivery[rum.WireBatch]) error {
	site, err := a.store.WebsiteByID(ctx, website)
	if errors.Is(err, model.ErrNotFound) || (err == nil && site.Account != account) {
		// Deleted since the beacons came in: nothing may be written into a purged partition.
		a.log.InfoContext(ctx, "drop page views of a deleted website", "website", website)
		return nil
	}
	if err != nil {
		return err
	}
	var chunks []model.RUMChunk
	for _, m := range msgs {
		if len(m.Body.Views) == 0 {
			continue
		}
		b := m.Body
		for i := range b.Views {
			if b.Views[i].Country == "" {
				b.Views[i].Country = a.countryOf(b.Views[i].IP)
			}
			b.Views[i].IP = ""
		}
		data, err := EncodeChunk(b)
		if err != nil {
			return err
		}
		chunks = append(chunks, model.RUMChunk{Account: account, Website: website, Key: rumstore.LogKey(a.now(), m.ID),
			Views: len(b.Views), Data: data})
	}
	if len(chunks) > 0 {
		if err := a.rollups.Append(ctx, chunks); err != nil {
			return err
		}
	}
	return a.Compact(ctx, account, website)
}

// maxViewsPerPass bounds the views one pass of a compaction holds in memory; a log with more
// (after an outage) is folded in several passes.
const maxViewsPerPass = 100_000

// Compact folds a website's log into its day objects, in passes of at most maxViewsPerPass
// views, and records how far it got.
func (a *Aggregator) Compact(ctx context.Context, account, website string) error {
	start := a.now()
	for {
		chunks, mark, err := a.rollups.Pending(ctx, account, website)
		if err != nil || len(chunks) == 0 {
			return err
		}
		n, views := 0, 0
		for n < len(chunks) && (n == 0 || views+chunks[n].Views <= maxViewsPerPass) {
			views += chunks[n].Views
			n++
		}
		msgs := make([]message, 0, n)
		for _, c := range chunks[:n] {
			b, err := DecodeChunk(c.Data)
			if err != nil {
				// It will never read: leaving it would hold the website's log back for ever.
				a.log.ErrorContext(ctx, "unreadable RUM log entry; its views are lost", "website", website, "entry", c.Key, "err", err)
				continue
			}
			b.ID, b.Account, b.Website = c.Key, account, website
			for i := range b.Views {
				b.Views[i].Segments = b.Views[i].Segments.WithCountry(b.Views[i].Country)
			}
			msgs = append(msgs, message{id: c.Key, batch: b})
		}
		if err := a.Fold(ctx, account, website, msgs); err != nil {
			return err
		}
		if err := a.rollups.Folded(ctx, account, website, mark, chunks[:n], start); err != nil {
			return err
		}
		a.log.InfoContext(ctx, "folded page views", "website", website, "entries", n, "views", views)
		if n == len(chunks) {
			return nil
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < passReserve {
			// The message comes back after its visibility timeout and goes on from the mark.
			return fmt.Errorf("%d log entries left to fold after this compaction's time", len(chunks)-n)
		}
	}
}

// passReserve is the time a compaction keeps to start another pass: one pass of
// maxViewsPerPass views takes seconds.
const passReserve = 30 * time.Second

// Fold adds messages, in order, to a website's day objects, each page view once, and writes
// the days it changed.
func (a *Aggregator) Fold(ctx context.Context, account, website string, msgs []message) error {
	sess := a.rollups.Session(account, website)
	idx, err := a.openDays(ctx, sess, account, website, msgs)
	if err != nil {
		return err
	}
	msgs, err = a.dedupe(ctx, sess, website, msgs)
	if err != nil {
		return err
	}
	if err := a.limit(ctx, account, website, msgs); err != nil {
		return err
	}
	if err := a.fold(ctx, sess, idx, msgs); err != nil {
		return err
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.batch.ID
	}
	return sess.Commit(ctx, ids)
}

// openDays reads the indexes of the months the views fall on, adds their new days and custom
// names, and returns them. A new day starts as a copy of the month's latest earlier day: the
// copies are written (the days' objects, then the indexes naming them) before anything is
// folded, as a later day's copy must not hold what this fold adds to its base. An attempt
// interrupted in between is made again, without copying a day whose object has its totals.
func (a *Aggregator) openDays(ctx context.Context, sess *rumstore.Session, account, website string, msgs []message) (map[string]model.RUMIndex, error) {
	monthSet := map[string]bool{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			if len(v.Day) == 8 {
				monthSet[v.Day[:6]] = true
			}
		}
	}
	months := sortedKeys(monthSet)
	idx, err := a.store.RUMIndexes(ctx, account, website, months)
	if err != nil {
		return nil, err
	}
	var changed []model.RUMIndex
	copied := false
	for _, month := range months {
		ix := idx[month]
		ix.Month = month
		grew := false
		for _, day := range viewDays(msgs, month) {
			if _, found := slices.BinarySearch(ix.Days, day); found {
				continue
			}
			if base := rollup.LatestBefore(ix.Days, day); base != "" {
				has, err := sess.HasTotals(ctx, day)
				if err != nil {
					return nil, err
				}
				if !has {
					if err := sess.CopyDay(ctx, base, day); err != nil {
						return nil, err
					}
					copied = true
				}
			}
			ix.Days = append(ix.Days, day)
			slices.Sort(ix.Days)
			grew = true
		}
		for _, name := range customNames(msgs, month) {
			if !slices.Contains(ix.Custom, name) && len(ix.Custom) < rollup.MaxCustomPerMonth {
				ix.Custom = append(ix.Custom, name)
				grew = true
			}
		}
		if grew {
			changed = append(changed, ix)
		}
		idx[month] = ix
	}
	if copied {
		if err := sess.Commit(ctx, nil); err != nil {
			return nil, err
		}
	}
	for _, ix := range changed {
		if err := a.store.PutRUMIndex(ctx, account, website, ix, a.rollups.MonthExpires(ix.Month)); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// limit keeps, of each day's views in queue order, those within the website's daily limit,
// and drops the rest. The messages stay, emptied or not, so that they are marked folded.
func (a *Aggregator) limit(ctx context.Context, account, website string, msgs []message) error {
	perDay := map[string]int{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			perDay[v.Day]++
		}
	}
	granted := make(map[string]int, len(perDay))
	for _, day := range sortedKeys(perDay) {
		n, err := a.limits.TakeViews(ctx, account, website, day, perDay[day])
		if err != nil {
			return err
		}
		granted[day] = n
		if n < perDay[day] {
			a.log.WarnContext(ctx, "page views over the website's daily limit are not counted", "website", website, "day", day,
				"views", perDay[day], "counted", n)
		}
	}
	for i := range msgs {
		views := msgs[i].batch.Views
		kept := views[:0:0]
		for _, v := range views {
			if granted[v.Day] > 0 {
				granted[v.Day]--
				kept = append(kept, v)
			}
		}
		msgs[i].batch.Views = kept
	}
	return nil
}

// fold adds the views of messages to the days' tables in sess, the months' indexes being idx,
// in three steps (numbered on from foldBatch's).
func (a *Aggregator) fold(ctx context.Context, sess *rumstore.Session, idx map[string]model.RUMIndex, msgs []message) error {
	folds, cells := foldMessages(idx, msgs)
	defer func() {
		// Once every cell is written: nothing reads the folds' sketches after.
		for _, f := range folds {
			f.release()
		}
	}()
	dailyCells := dailyCells(msgs)
	cells = append(cells, dailyCells...)
	stored, err := sess.Tables(ctx, cells)
	if err != nil {
		return err
	}
	days := daily{}
	if err := days.load(dailyCells, stored, msgs); err != nil {
		return err
	}
	for i, m := range msgs {
		days.addMessage(i, m.batch.Views)
	}
	decoded, err := admitPageKeys(folds, stored)
	if err != nil {
		return err
	}
	if err := a.putCells(ctx, sess, cells, stored, decoded, folds, msgs, days); err != nil {
		return err
	}
	return a.foldDistinct(ctx, sess, msgs)
}

// foldMessages is step 3: one fold per message, into its views' day and every later day of the
// month (the running totals), and the cells they touch (the daily segment and attribution
// tables are the caller's).
func foldMessages(idx map[string]model.RUMIndex, msgs []message) ([]*fold, []model.RUMCell) {
	folds := make([]*fold, len(msgs))
	cellSet := map[model.RUMCell]bool{}
	for i, m := range msgs {
		f := newFold()
		for j := range m.batch.Views {
			v := &m.batch.Views[j]
			if len(v.Day) != 8 {
				continue
			}
			ix := idx[v.Day[:6]]
			v.Custom = keepKnown(v.Custom, ix.Custom)
			f.add(rollup.LaterDays(ix.Days, v.Day), *v)
		}
		for _, c := range f.cells() {
			cellSet[c] = true
		}
		folds[i] = f
	}
	cells := make([]model.RUMCell, 0, len(cellSet))
	for c := range cellSet {
		cells = append(cells, c)
	}
	return folds, cells
}

// admitPageKeys is step 4: it caps the page keys of each shard. The admitted keys are those
// already stored, then new ones in queue order while there is room; the others are renamed
// to rollup.OtherKey in the folds. It returns the page-view tables it read, for step 5.
func admitPageKeys(folds []*fold, stored map[model.RUMCell]model.RUMTable) (map[model.RUMCell]*rollup.Table, error) {
	admitted := map[model.RUMCell]map[string]bool{}
	decoded := map[model.RUMCell]*rollup.Table{}
	for _, f := range folds {
		for pk, p := range f.parts {
			if pk.dim != rollup.DimPages {
				continue
			}
			c := model.RUMCell{Day: pk.day, Dim: pk.dim, Metric: rollup.ViewsMetric, Shard: pk.shard}
			set := admitted[c]
			if set == nil {
				set = map[string]bool{}
				if st, ok := stored[c]; ok {
					old, err := rollup.DecodeTable(st.Data)
					if err != nil {
						return nil, fmt.Errorf("cell %v: %w", c, err)
					}
					decoded[c] = old
					for k := range old.Counts {
						set[k] = true
					}
				}
				admitted[c] = set
			}
			for _, k := range sortedKeys(p.keys) {
				if set[k] || k == rollup.OtherKey {
					continue
				}
				// The same decision on a redelivery: a key admitted then is stored now.
				if len(set) < rollup.MaxKeysPerShard {
					set[k] = true
					continue
				}
				f.renamePage(c.Day, c.Shard, k, rollup.OtherKey)
			}
		}
	}
	return decoded, nil
}

// putCells is step 5: each cell is written as the stored table (decoded already if step 4
// read it) plus the folds of the messages its day has not seen yet; a daily cell as the batch
// left it.
func (a *Aggregator) putCells(ctx context.Context, sess *rumstore.Session, cells []model.RUMCell, stored map[model.RUMCell]model.RUMTable,
	decoded map[model.RUMCell]*rollup.Table, folds []*fold, msgs []message, days daily) error {
	return forEachLimited(ctx, cells, 8, func(c model.RUMCell) error {
		if c.Daily {
			return a.putDaily(ctx, sess, c, msgs, days)
		}
		st, existed := stored[c]
		t := decoded[c]
		switch {
		case t != nil:
		case existed:
			var err error
			if t, err = rollup.DecodeTable(st.Data); err != nil {
				return fmt.Errorf("cell %v: %w", c, err)
			}
		default:
			t = rollup.NewTable(c.Metric)
		}
		folded := false
		for i, m := range msgs {
			if part := folds[i].table(c); part != nil && !slices.Contains(st.Applied, m.batch.ID) {
				t.Merge(part, false)
				folded = true
			}
		}
		if !folded {
			return nil // every message was folded into this cell before
		}
		data := t.Encode()
		if len(data) > maxItemBytes {
			return fmt.Errorf("cell %v would be %d bytes", c, len(data))
		}
		return sess.PutTable(ctx, c, data)
	})
}

// forEachLimited runs fn for each item, at most n at a time, and returns every error.
func forEachLimited[T any](ctx context.Context, items []T, n int, fn func(T) error) error {
	return errors.Join(parallel.Each(ctx, items, n, fn)...)
}

// putDaily writes one daily table as the batch left it, within maxDailyBytes (its smallest
// rows overflow otherwise); a table whose day already held every message is left alone.
func (a *Aggregator) putDaily(ctx context.Context, sess *rumstore.Session, c model.RUMCell, msgs []message, days daily) error {
	if len(days[c.Day].seen[c]) == len(msgs) {
		return nil
	}
	t, err := days.table(c)
	if err != nil {
		return err
	}
	return sess.PutTable(ctx, c, t.EncodeWithin(maxDailyBytes))
}

// maxDailyBytes is the size a daily table keeps within. Tables were DynamoDB items when it was
// set; in a day object it still bounds what a report reads of a day, and keeps reports what
// they were.
const maxDailyBytes = 300 << 10

// foldDistinct adds the page keys of each view's day to that day's HyperLogLog, which counts
// distinct pages beyond the cap on stored keys. A union is idempotent: a batch delivered
// twice changes nothing.
func (a *Aggregator) foldDistinct(ctx context.Context, sess *rumstore.Session, msgs []message) error {
	byDay := map[string]map[string]bool{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			if len(v.Day) != 8 {
				continue
			}
			if byDay[v.Day] == nil {
				byDay[v.Day] = map[string]bool{}
			}
			byDay[v.Day][v.Page] = true
		}
	}
	days := sortedKeys(byDay)
	stored, err := sess.Distinct(ctx, days)
	if err != nil {
		return err
	}
	for _, day := range days {
		hll, err := rollup.DecodeDistinct(stored[day])
		if err != nil {
			return fmt.Errorf("distinct pages of %s: %w", day, err)
		}
		for key := range byDay[day] {
			hll.Insert([]byte(key))
		}
		data, err := hll.MarshalBinary()
		if err != nil {
			return err
		}
		if err := sess.PutDistinct(ctx, day, data); err != nil {
			return err
		}
	}
	return nil
}

// maxItemBytes is the most a running-total table may take (the cap on page keys keeps them
// well under it); it was DynamoDB's item limit.
const maxItemBytes = 350 << 10

// keepKnown drops custom variables the month's index could not admit.
func keepKnown(vars map[string]float64, custom []string) map[string]float64 {
	for name := range vars {
		if !slices.Contains(custom, name) {
			delete(vars, name)
		}
	}
	return vars
}

func viewDays(msgs []message, month string) []string {
	set := map[string]bool{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			if len(v.Day) == 8 && v.Day[:6] == month {
				set[v.Day] = true
			}
		}
	}
	return sortedKeys(set)
}

func customNames(msgs []message, month string) []string {
	set := map[string]bool{}
	for _, m := range msgs {
		for _, v := range m.batch.Views {
			if len(v.Day) != 8 || v.Day[:6] != month {
				continue
			}
			for name := range v.Custom {
				if rum.IsCustomName(name) {
					set[name] = true
				}
			}
		}
	}
	return sortedKeys(set)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
