package metrics

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/store"
)

// Reader reads pages' results over the last WindowDays days, today included.
type Reader struct {
	store *store.Store
	now   func() time.Time
}

// NewReader returns a Reader over st; now is the clock the window ends at.
func NewReader(st *store.Store, now func() time.Time) *Reader {
	return &Reader{store: st, now: now}
}

// Include chooses what a read adds to the lab results.
type Include struct {
	UX     bool // the user-experience records
	Search bool // the search analytics
}

// readers bounds the queries one read has in flight.
const readers = 8

// Website reads every page of a website on each device, in the store's page order, with the
// results of the window that inc asks for.
//
// Results are kept per page and device, so this costs a query per page and device (and per
// page for search analytics), 8 at a time.
func (r *Reader) Website(ctx context.Context, w model.Website, inc Include) ([]Series, error) {
	pages, err := r.store.Pages(ctx, w)
	if err != nil {
		return nil, err
	}
	return r.Pages(ctx, w, pages, inc)
}

// Pages reads the given pages of a website on each device, in their order, with the results of
// the window that inc asks for: a query per page and device (and per page for search
// analytics), 8 at a time.
func (r *Reader) Pages(ctx context.Context, w model.Website, pages []model.Page, inc Include) ([]Series, error) {
	from, to := r.window()
	return r.pages(ctx, w, pages, from, to, inc)
}

// pages reads the given pages of a website on each device with their results from day from to
// day to.
func (r *Reader) pages(ctx context.Context, w model.Website, pages []model.Page, from, to string, inc Include) ([]Series, error) {
	out := make([]Series, 0, len(pages)*len(Devices))
	for _, p := range pages {
		for _, d := range Devices {
			out = append(out, Series{Page: p, Device: d})
		}
	}
	// Search analytics are per page, not per device: the page's first series reads them and
	// the others share them.
	first := map[string]int{}
	for i := len(out) - 1; i >= 0; i-- {
		first[out[i].Page.ID] = i
	}
	errs := parallel.Do(readers, len(out), func(i int) error {
		return r.read(ctx, w, &out[i], from, to, Include{UX: inc.UX, Search: inc.Search && first[out[i].Page.ID] == i})
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].Search = out[first[out[i].Page.ID]].Search
	}
	return out, nil
}

// Detail is what a page's detail shows of one device.
type Detail struct {
	// Series holds the lab results and user-experience records of the window.
	Series
	// LastError is the failure recorded since the page's last successful audit, if any.
	LastError *model.LabError
}

// Detail reads a page on one device: its lab results and user-experience records of the
// window, and its last audit failure.
func (r *Reader) Detail(ctx context.Context, w model.Website, p model.Page, device string) (Detail, error) {
	from, to := r.window()
	d := Detail{Series: Series{Page: p, Device: device}}
	if err := r.read(ctx, w, &d.Series, from, to, Include{UX: true}); err != nil {
		return d, err
	}
	lastErr, err := r.store.LastLabError(ctx, w, p.ID, device)
	switch {
	case err == nil:
		d.LastError = &lastErr
	case !model.IsNotFound(err):
		return d, err
	}
	return d, nil
}

// LatestResult is a page's most recent lab result on a device in the window; ok is false
// without one.
func (r *Reader) LatestResult(ctx context.Context, w model.Website, page, device string) (res model.LabResult, ok bool, err error) {
	from, to := r.window()
	results, err := r.store.LabResults(ctx, w, page, device, from, to)
	if err != nil || len(results) == 0 {
		return model.LabResult{}, false, err
	}
	return results[len(results)-1], true, nil
}

// window is the days of the window, yyyymmdd: from WindowDays-1 days ago to today.
func (r *Reader) window() (from, to string) {
	today := r.now()
	return model.Day(today.AddDate(0, 0, -(WindowDays - 1))), model.Day(today)
}

// read fills in s's results from day from to day to.
func (r *Reader) read(ctx context.Context, w model.Website, s *Series, from, to string, inc Include) error {
	var err error
	if s.Lab, err = r.store.LabResults(ctx, w, s.Page.ID, s.Device, from, to); err != nil {
		return err
	}
	if inc.UX {
		if s.UX, err = r.store.UXResults(ctx, w, s.Page.ID, s.Device, from, to); err != nil {
			return err
		}
	}
	if inc.Search {
		s.Search, err = r.store.SearchResults(ctx, w, s.Page.ID, from, to)
	}
	return err
}

// refreshTries bounds how often Refresh makes a summary again when another was written
// between its read and its write.
const refreshTries = 5

// Refresh makes a page's summary from its results of the window if it has none, as after a
// worker stored a result (which marks it stale), so that the lists need not, and returns the
// page's listings on both devices as the summary holds them. A page whose row is gone
// (deleted, or its website's rows not made yet: the lists make them) needs none, and has none.
func (r *Reader) Refresh(ctx context.Context, w model.Website, p model.Page) ([]Listing, error) {
	for range refreshTries {
		row, err := r.store.PageRow(ctx, w, p)
		if model.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if ls, err := DecodeSummary(p, row.Summary, windowStart(r.now())); err == nil && len(row.Opportunities) > 0 {
			return ls, nil
		}
		ls, err := r.summarize(ctx, w, row)
		if model.IsNotFound(err) {
			return nil, nil
		}
		if !errors.Is(err, model.ErrChanged) {
			return ls, err
		}
	}
	return nil, fmt.Errorf("summary of page %s: changed %d times while being made", p.ID, refreshTries)
}

// summarize reads a page's listings from its results and writes them as the summary of row,
// if that is still at the row's version.
func (r *Reader) summarize(ctx context.Context, w model.Website, row model.PageRow) ([]Listing, error) {
	// Every result from the window's start on: one dated after the clock's today (another
	// worker's clock, or a job's day) still counts once that day comes.
	series, err := r.pages(ctx, w, []model.Page{row.Page}, windowStart(r.now()), "99991231", Include{UX: true, Search: true})
	if err != nil {
		return nil, err
	}
	ls := make([]Listing, len(series))
	for i, s := range series {
		ls[i] = s.Listing()
	}
	summary, err := EncodeSummary(ls)
	if err != nil {
		return nil, err
	}
	opps, err := EncodeOpportunities(ls)
	if err != nil {
		return nil, err
	}
	return ls, r.store.PutPageSummary(ctx, w, row.Page, row.Version, summary, opps)
}

// Listings reads the listings of a website's pages, each on both devices, in the order the
// pages were added: all of them with limit 0, else up to limit pages after the one whose
// store.PageOrderKey is after. more tells whether pages remain after them.
//
// It reads one item per page (its row, whatever the number of results); a page without a
// summary yet has its results read and its summary made.
func (r *Reader) Listings(ctx context.Context, w model.Website, after string, limit int) (ls []Listing, more bool, err error) {
	if w, err = r.store.EnsurePageRows(ctx, w); err != nil {
		return nil, false, err
	}
	rows, more, err := r.store.PageRows(ctx, w, after, limit)
	if err != nil {
		return nil, false, err
	}
	from := windowStart(r.now())
	perPage := make([][]Listing, len(rows))
	missing := decodeSummaries(rows, from, perPage)
	ls, err = r.summarizeMissing(ctx, w, rows, missing, perPage)
	return ls, more, err
}

// summarizeMissing makes the summaries of the rows at indexes missing, 8 at a time, puts
// their listings in perPage, and returns all of perPage's listings in order.
func (r *Reader) summarizeMissing(ctx context.Context, w model.Website, rows []model.PageRow, missing []int, perPage [][]Listing) ([]Listing, error) {
	errs := parallel.Do(readers, len(missing), func(j int) error {
		i := missing[j]
		var err error
		perPage[i], err = r.summarize(ctx, w, rows[i])
		if errors.Is(err, model.ErrChanged) || model.IsNotFound(err) {
			return nil // what was read is still the answer; the newer summary is kept
		}
		return err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ls := make([]Listing, 0, len(rows)*len(Devices))
	for _, pl := range perPage {
		ls = append(ls, pl...)
	}
	return ls, nil
}

// opportunityListings reads the latest opportunities of a website's pages, each on both
// devices, in the order the pages were added: the rows without their summaries' days (a page
// without its opportunities yet has its results read and its summary made).
func (r *Reader) opportunityListings(ctx context.Context, w model.Website) ([]Listing, error) {
	w, err := r.store.EnsurePageRows(ctx, w)
	if err != nil {
		return nil, err
	}
	rows, err := r.store.PageRowOpportunities(ctx, w)
	if err != nil {
		return nil, err
	}
	from := windowStart(r.now())
	perPage := make([][]Listing, len(rows))
	var missing []int
	for i, row := range rows {
		if perPage[i], err = DecodeOpportunities(row.Page, row.Opportunities, from); err != nil {
			missing = append(missing, i)
		}
	}
	return r.summarizeMissing(ctx, w, rows, missing, perPage)
}

// decodeSummaries decodes each row's summary into perPage, on every core for long lists, and
// returns the indexes of the rows whose summary is missing or unreadable.
func decodeSummaries(rows []model.PageRow, from string, perPage [][]Listing) []int {
	parts := min(runtime.GOMAXPROCS(0), max(1, len(rows)/rowsPerDecoder))
	missing := make([][]int, parts)
	var wg sync.WaitGroup
	for part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := part * len(rows) / parts; i < (part+1)*len(rows)/parts; i++ {
				var err error
				if perPage[i], err = DecodeSummary(rows[i].Page, rows[i].Summary, from); err != nil {
					missing[part] = append(missing[part], i)
				}
			}
		}()
	}
	wg.Wait()
	return slices.Concat(missing...)
}

// rowsPerDecoder is the fewest rows worth a decoder of their own (see decodeSummaries).
const rowsPerDecoder = 100

// HasSearch tells whether a website has the Search Console integration, whose fields the
// pages list then shows.
func (r *Reader) HasSearch(ctx context.Context, w model.Website) (bool, error) {
	_, err := r.store.SearchConsole(ctx, w)
	if model.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
