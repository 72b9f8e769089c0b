package store

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

type uxItem struct {
	PK   string
	SK   string
	Type string
	model.UXResult
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of its day, for the table's TTL
}

func (it uxItem) result() model.UXResult { return it.UXResult }

// PutUXResult stores a page's record of one device and day, replacing the same day's, and
// marks the page's summary stale.
func (s *Store) PutUXResult(ctx context.Context, w model.Website, page model.Page, r model.UXResult) error {
	r.Page = page.ID
	item := uxItem{PK: websitePK(w.Account, w.ID), SK: uxSK(r.Page, r.Device, r.Day), Type: "ux", UXResult: r,
		Expires: model.HistoryEnd(r.Day).Unix()}
	if err := s.putItem(ctx, item, putAny, "ux result"); err != nil {
		return err
	}
	return s.staleSummary(ctx, w, page)
}

// UXResults returns a page's records on one device from day from to day to (yyyymmdd,
// inclusive), oldest first.
func (s *Store) UXResults(ctx context.Context, w model.Website, page, device, from, to string) ([]model.UXResult, error) {
	return between(ctx, s, websitePK(w.Account, w.ID), uxSK(page, device, from), uxSK(page, device, to), "ux results", uxItem.result)
}

type searchItem struct {
	PK   string
	SK   string
	Type string
	model.SearchResult
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of its day, for the table's TTL
}

// PutSearchResults stores the search analytics of a website's pages for one day, replacing
// that day's, and marks the summaries of pages (those the results are of) stale.
func (s *Store) PutSearchResults(ctx context.Context, w model.Website, pages []model.Page, rs []model.SearchResult) error {
	items := make([]searchItem, len(rs))
	for i, r := range rs {
		items[i] = searchItem{PK: websitePK(w.Account, w.ID), SK: searchSK(r.Page, r.Day), Type: "search", SearchResult: r,
			Expires: model.HistoryEnd(r.Day).Unix()}
	}
	if err := putAll(ctx, s, items, "put search results"); err != nil {
		return err
	}
	byID := make(map[string]model.Page, len(pages))
	for _, p := range pages {
		byID[p.ID] = p
	}
	for _, r := range rs {
		p, ok := byID[r.Page]
		if !ok {
			return fmt.Errorf("put search results: page %s is not among the pages given", r.Page)
		}
		if err := s.staleSummary(ctx, w, p); err != nil {
			return err
		}
	}
	return nil
}

// SearchResults returns a page's search analytics collected from day from to day to
// (yyyymmdd, inclusive), oldest first.
func (s *Store) SearchResults(ctx context.Context, w model.Website, page, from, to string) ([]model.SearchResult, error) {
	return between(ctx, s, websitePK(w.Account, w.ID), searchSK(page, from), searchSK(page, to), "search results",
		func(it searchItem) model.SearchResult { return it.SearchResult })
}

type uxRunItem struct {
	PK      string
	SK      string
	Type    string
	Expires int64 `dynamodbav:"expires"`
	model.UXRun
}

// PutUXRun records how a website's collection of a day went, replacing what was recorded.
func (s *Store) PutUXRun(ctx context.Context, w model.Website, r model.UXRun) error {
	// Kept a month: it only serves to follow a collection and to explain a gap.
	return s.putItem(ctx, uxRunItem{PK: websitePK(w.Account, w.ID), SK: uxRunSK(r.Day), Type: "uxrun",
		Expires: s.now().Add(31 * 24 * time.Hour).Unix(), UXRun: r}, putAny, "ux run")
}

// UXRun returns how a website's collection of a day went; ErrNotFound before it started.
func (s *Store) UXRun(ctx context.Context, w model.Website, day string) (model.UXRun, error) {
	var it uxRunItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), uxRunSK(day), "ux run "+day, &it)
	return it.UXRun, err
}

// UXResultsOfDay returns the records of the given pages on the given devices for one UTC day
// (yyyymmdd), in one BatchGetItem per 100 page-devices; a page without a record that day on a
// device has none.
func (s *Store) UXResultsOfDay(ctx context.Context, w model.Website, pages []model.Page, devices []string, day string) ([]model.UXResult, error) {
	return ofDay(ctx, s, w, pages, devices, func(page, device string) string { return uxSK(page, device, day) }, "ux results of "+day, uxItem.result)
}
