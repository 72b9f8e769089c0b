package rumworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
)

// RollupStore is what the aggregator needs of the table.
type RollupStore interface {
	WebsiteByID(ctx context.Context, id string) (model.Website, error)
	RUMIndexes(ctx context.Context, account, website string, months []string) (map[string]model.RUMIndex, error)
	PutRUMIndex(ctx context.Context, account, website string, ix model.RUMIndex) error
	CopyRUMDay(ctx context.Context, account, website, from, to string) error
	RUMTables(ctx context.Context, account, website string, cells []model.RUMCell, consistent bool) (map[model.RUMCell]model.RUMTable, error)
	PutRUMTable(ctx context.Context, account, website string, c model.RUMCell, t model.RUMTable) error
	RUMDistinct(ctx context.Context, account, website string, days []string, consistent bool) (map[string]model.RUMTable, error)
	PutRUMDistinct(ctx context.Context, account, website, day string, t model.RUMTable) error
	RUMSeen(ctx context.Context, account, website string, windows []int64) (map[int64]model.RUMSeen, error)
	PutRUMSeen(ctx context.Context, account, website string, r model.RUMSeen) error
	RUMBatchesFolded(ctx context.Context, account, website string, ids []string) (map[string]bool, error)
	PutRUMBatchesFolded(ctx context.Context, account, website string, ids []string) error
}

// ViewLimiter grants a website's page views of a day within its daily limit; *quota.Keeper is
// one.
type ViewLimiter interface {
	TakeViews(ctx context.Context, account, website, day string, n int) (int, error)
}

// Aggregator folds queued page views into the daily rollups. It consumes a FIFO queue whose
// message group is the website, so that one website's batches arrive in order and are never
// folded by two consumers at once. Each page view counts once however it is redelivered
// (dedupe.go); each stored table also remembers the IDs of the batches last folded into it, so
// that the retry of a fold interrupted half way adds nothing twice.
type Aggregator struct {
	store     RollupStore
	limits    ViewLimiter
	log       *slog.Logger
	countryOf func(addr string) string
	handle    queue.BatchHandler
}

// NewAggregatorWith returns an Aggregator over the table that counts at most limits grants of
// each website's views a day; countryOf places a client address (geo.Country: passed in so
// that only the aggregator links the IP table).
func NewAggregatorWith(st RollupStore, limits ViewLimiter, log *slog.Logger, countryOf func(addr string) string) *Aggregator {
	a := &Aggregator{store: st, limits: limits, log: log, countryOf: countryOf}
	a.handle = queue.Batch(log, a.foldBatch)
	return a
}

// message is a received batch with its queue identity.
type message struct {
	id    string // SQS message ID, for batch item failures
	batch rum.WireBatch
}

// HandleSQS is the aggregator function's handler. A failed website fails its remaining messages
// in the batch too (FIFO order must hold); other websites' messages are unaffected. An
// unreadable message is reported failed and ends in the dead-letter queue.
func (a *Aggregator) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return a.handle(ctx, ev)
}

// foldBatch folds the readable messages of a batch, website by website, and returns the IDs
// of the messages that failed.
func (a *Aggregator) foldBatch(ctx context.Context, ds []queue.Delivery[rum.WireBatch]) (failed []string) {
	var order []string
	groups := map[string][]message{}
	for _, d := range ds {
		b := d.Body
		for i := range b.Views {
			if b.Views[i].Country == "" {
				b.Views[i].Country = a.countryOf(b.Views[i].IP)
			}
			b.Views[i].IP = ""
			b.Views[i].Segments = b.Views[i].Segments.WithCountry(b.Views[i].Country)
		}
		g := b.Account + "#" + b.Website
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], message{id: d.ID, batch: b})
	}
	for _, g := range order {
		msgs := groups[g]
		views := 0
		for _, m := range msgs {
			views += len(m.batch.Views)
		}
		site, err := a.store.WebsiteByID(ctx, msgs[0].batch.Website)
		if errors.Is(err, model.ErrNotFound) || (err == nil && site.Account != msgs[0].batch.Account) {
			// Deleted since the beacons came in: nothing may be written into a purged partition.
			a.log.InfoContext(ctx, "drop page views of a deleted website", "website", msgs[0].batch.Website, "views", views)
			continue
		}
		if err == nil {
			err = a.Fold(ctx, msgs[0].batch.Account, msgs[0].batch.Website, msgs)
		}
		if err != nil {
			a.log.ErrorContext(ctx, "fold page views; the batch will be retried", "website", msgs[0].batch.Website, "views", views, "err", err)
			for _, m := range msgs {
				failed = append(failed, m.id)
			}
			continue
		}
		a.log.InfoContext(ctx, "folded page views", "website", msgs[0].batch.Website, "messages", len(msgs), "views", views)
	}
	return failed
}

// Fold adds one website's messages, in queue order, to its rollups, each page view once.
func (a *Aggregator) Fold(ctx context.Context, account, website string, msgs []message) error {
	msgs, err := a.dedupe(ctx, account, website, msgs)
	if err != nil || len(msgs) == 0 {
		return err
	}
	if err := a.limit(ctx, account, website, msgs); err != nil {
		return err
	}
	if err := a.fold(ctx, account, website, msgs); err != nil {
		return err
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.batch.ID
	}
	return a.store.PutRUMBatchesFolded(ctx, account, website, ids)
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

// fold adds the views of messages to the rollups.
func (a *Aggregator) fold(ctx context.Context, account, website string, msgs []message) error {
	// 1. The months and days the views fall on, and the custom names they carry.
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
		return err
	}

	// 2. New days start as a copy of the month's latest earlier day, before the index names
	// them: a copy interrupted is simply made again.
	for _, month := range months {
		ix := idx[month]
		ix.Month = month
		changed := false
		for _, day := range viewDays(msgs, month) {
			if _, found := slices.BinarySearch(ix.Days, day); found {
				continue
			}
			if base := rollup.LatestBefore(ix.Days, day); base != "" {
				if err := a.store.CopyRUMDay(ctx, account, website, base, day); err != nil {
					return err
				}
			}
			ix.Days = append(ix.Days, day)
			slices.Sort(ix.Days)
			changed = true
		}
		for _, name := range customNames(msgs, month) {
			if !slices.Contains(ix.Custom, name) && len(ix.Custom) < rollup.MaxCustomPerMonth {
				ix.Custom = append(ix.Custom, name)
				changed = true
			}
		}
		if changed {
			if err := a.store.PutRUMIndex(ctx, account, website, ix); err != nil {
				return err
			}
		}
		idx[month] = ix
	}

	// 3. One fold per message, into its views' day and every later day of the month (the
	// running totals) and into its views' day (the daily segment and attribution tables).
	folds := make([]fold, len(msgs))
	cellSet := map[model.RUMCell]bool{}
	for i, m := range msgs {
		f := fold{}
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
	dailyCells := dailyCells(msgs)
	for _, c := range dailyCells {
		cellSet[c] = true
	}
	cells := make([]model.RUMCell, 0, len(cellSet))
	for c := range cellSet {
		cells = append(cells, c)
	}
	stored, err := a.store.RUMTables(ctx, account, website, cells, true)
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

	// 4. Cap the page keys of each shard: the admitted keys are those already stored, then new
	// ones in queue order while there is room.
	admitted := map[model.RUMCell]map[string]bool{}
	decoded := map[model.RUMCell]*rollup.Table{} // the page-view tables read here, reused in step 5
	for _, f := range folds {
		for pk, p := range f {
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
						return fmt.Errorf("cell %v: %w", c, err)
					}
					decoded[c] = old
					for k := range old.Counts {
						set[k] = true
					}
				}
				admitted[c] = set
			}
			for _, k := range sortedKeys(p.views) {
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

	// 5. Each cell: the stored table plus the folds of the messages it has not seen yet; it
	// then remembers this batch's messages.
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.batch.ID
	}
	err = forEachLimited(ctx, cells, 8, func(c model.RUMCell) error {
		if c.Daily {
			return a.putDaily(ctx, account, website, c, stored[c], msgs, days, ids)
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
		return a.store.PutRUMTable(ctx, account, website, c, model.RUMTable{Data: data, Applied: ids, Version: st.Version})
	})
	if err != nil {
		return err
	}
	return a.foldDistinct(ctx, account, website, msgs)
}

// putDaily writes one daily table as the batch left it, within an item's size (its smallest
// rows overflow otherwise), remembering this batch's messages; a table that already held every
// message is left alone.
func (a *Aggregator) putDaily(ctx context.Context, account, website string, c model.RUMCell, st model.RUMTable,
	msgs []message, days daily, ids []string) error {
	if len(days[c.Day].seen[c]) == len(msgs) {
		return nil
	}
	t, err := days.table(c)
	if err != nil {
		return err
	}
	return a.store.PutRUMTable(ctx, account, website, c, model.RUMTable{Data: t.EncodeWithin(maxDailyBytes), Applied: ids, Version: st.Version})
}

// maxDailyBytes is the size a daily table keeps within: under maxItemBytes with room for the
// item's key and the batch IDs it remembers.
const maxDailyBytes = 300 << 10

// foldDistinct adds the page keys of each view's day to that day's HyperLogLog, which counts
// distinct pages beyond the cap on stored keys. A union is idempotent: a batch delivered
// twice changes nothing.
func (a *Aggregator) foldDistinct(ctx context.Context, account, website string, msgs []message) error {
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
	stored, err := a.store.RUMDistinct(ctx, account, website, days, true)
	if err != nil {
		return err
	}
	for _, day := range days {
		st := stored[day]
		hll, err := rollup.DecodeDistinct(st.Data)
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
		if err := a.store.PutRUMDistinct(ctx, account, website, day, model.RUMTable{Data: data, Version: st.Version}); err != nil {
			return err
		}
	}
	return nil
}

// maxItemBytes keeps a table well under DynamoDB's 400 KB item limit.
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

// forEachLimited runs fn for each item, at most n at a time, and returns the first error.
func forEachLimited[T any](ctx context.Context, items []T, n int, fn func(T) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, n)
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
