package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type pageItem struct {
	PK      string
	SK      string
	Type    string
	ID      string
	URL     string
	Alias   string
	Created time.Time
}

func (it pageItem) page() model.Page {
	return model.Page{ID: it.ID, URL: it.URL, Alias: it.Alias, Created: it.Created}
}

// CreatePages stores up to MaxPagesPerCall new pages of a website with their rows, all or
// none. A URL already monitored in the website is a *ConflictError naming it. It assigns the
// pages' IDs.
func (s *Store) CreatePages(ctx context.Context, w model.Website, pages []model.Page) error {
	if len(pages) == 0 || len(pages) > model.MaxPagesPerCall {
		return fmt.Errorf("create pages: %d pages, want 1 to %d", len(pages), model.MaxPagesPerCall)
	}
	now := s.now()
	for i := range pages {
		pages[i].ID = model.NewID()
		// Distinct creation times keep the list in the order the pages were given.
		pages[i].Created = now.Add(time.Duration(i) * time.Microsecond)
	}
	// A page and its row are two actions: the pages go in transactions of
	// rowPagesPerTransaction, and a refused one takes back the ones before it.
	for start := 0; start < len(pages); start += rowPagesPerTransaction {
		chunk := pages[start:min(start+rowPagesPerTransaction, len(pages))]
		err := s.createPageChunk(ctx, w, chunk, start)
		if err == nil {
			continue
		}
		if start > 0 {
			if uerr := s.uncreatePages(context.WithoutCancel(ctx), w, pages[:start]); uerr != nil {
				return errors.Join(err, uerr)
			}
		}
		return err
	}
	s.countRows(ctx, w, pages)
	return s.putPagePointers(ctx, w, pages)
}

// createPageChunk stores pages and their rows in one transaction; offset is the index of the
// first in the request, for the conflict's field.
func (s *Store) createPageChunk(ctx context.Context, w model.Website, pages []model.Page, offset int) error {
	actions := make([]ddbtypes.TransactWriteItem, 0, 2*len(pages))
	for _, p := range pages {
		item, err := attributevalue.MarshalMap(pageItem{
			PK: websitePK(w.Account, w.ID), SK: pageSK(p.URL), Type: "page",
			ID: p.ID, URL: p.URL, Alias: p.Alias, Created: p.Created,
		})
		if err != nil {
			return err
		}
		actions = append(actions, s.putAction(item, "attribute_not_exists(PK)"), s.pageRowAction(w, p))
	}
	reasons, err := s.transact(ctx, actions...)
	for i, code := range reasons {
		if code == "ConditionalCheckFailed" {
			return &model.ConflictError{Field: fmt.Sprintf("[%d].url", offset+i/2), Value: pages[i/2].URL}
		}
	}
	if err != nil {
		return fmt.Errorf("create pages: %w", err)
	}
	return nil
}

// uncreatePages deletes pages just created and their rows, when the rest of their request
// was refused.
func (s *Store) uncreatePages(ctx context.Context, w model.Website, pages []model.Page) error {
	keys := make([]map[string]ddbtypes.AttributeValue, 0, 2*len(pages))
	for _, p := range pages {
		keys = append(keys, key(websitePK(w.Account, w.ID), pageSK(p.URL)), key(websitePK(w.Account, w.ID), pageRowSK(p)))
	}
	if _, err := s.writeAll(ctx, deleteRequests(keys)); err != nil {
		return fmt.Errorf("take back pages of a refused request: %w", err)
	}
	return nil
}

// Pages lists a website's pages in the order they were added.
func (s *Store) Pages(ctx context.Context, w model.Website) ([]model.Page, error) {
	pages, err := withPrefix(ctx, s, websitePK(w.Account, w.ID), pageSKPrefix, "pages", pageItem.page)
	if err != nil {
		return nil, err
	}
	byTime(pages, func(p model.Page) time.Time { return p.Created }, false)
	return pages, nil
}

// pagePointerItem points from a page's ID to its URL, which keys its item (so that a
// conditional put alone keeps URLs unique). It lives under the page's prefix, so the page's
// purge removes it.
type pagePointerItem struct {
	PK   string
	SK   string
	Type string
	URL  string
}

// putPagePointers records where pages are found by ID. Written after the pages: a pointer
// missing or stale only costs Page a read of every page item (and is then repaired).
func (s *Store) putPagePointers(ctx context.Context, w model.Website, pages []model.Page) error {
	items := make([]pagePointerItem, len(pages))
	for i, p := range pages {
		items[i] = pagePointerItem{PK: websitePK(w.Account, w.ID), SK: pagePointerSK(p.ID), Type: "page-pointer", URL: p.URL}
	}
	if err := putAll(ctx, s, items, "record pages by id"); err != nil {
		return err
	}
	return nil
}

// Page returns one page of a website by its ID: two reads through its pointer; a page whose
// pointer is missing or stale (created before pointers existed, or the moment after a write)
// is found by reading every page item, and its pointer repaired.
func (s *Store) Page(ctx context.Context, w model.Website, id string) (model.Page, error) {
	pk := websitePK(w.Account, w.ID)
	var ptr pagePointerItem
	err := s.getItem(ctx, pk, pagePointerSK(id), "page "+id, &ptr)
	if err != nil && !model.IsNotFound(err) {
		return model.Page{}, err
	}
	if err == nil {
		var it pageItem
		err := s.getItem(ctx, pk, pageSK(ptr.URL), "page "+id, &it)
		if err != nil && !model.IsNotFound(err) {
			return model.Page{}, err
		}
		if err == nil && it.ID == id {
			return it.page(), nil
		}
	}
	pages, err := s.Pages(ctx, w)
	if err != nil {
		return model.Page{}, err
	}
	for _, p := range pages {
		if p.ID == id {
			if err := s.putPagePointers(ctx, w, []model.Page{p}); err != nil {
				return model.Page{}, err
			}
			return p, nil
		}
	}
	return model.Page{}, fmt.Errorf("page %s: %w", id, model.ErrNotFound)
}

// UpdatePage replaces a page's URL and alias. A URL used by another page is a *ConflictError.
func (s *Store) UpdatePage(ctx context.Context, w model.Website, old, updated model.Page) error {
	updated.ID, updated.Created = old.ID, old.Created
	item, err := attributevalue.MarshalMap(pageItem{
		PK: websitePK(w.Account, w.ID), SK: pageSK(updated.URL), Type: "page",
		ID: updated.ID, URL: updated.URL, Alias: updated.Alias, Created: updated.Created,
	})
	if err != nil {
		return err
	}
	if updated.URL == old.URL {
		r, err := s.transact(ctx, withAttrs(s.putAction(item, samePage), pageID(old.ID), nil), s.pageRowAction(w, updated))
		if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
			return fmt.Errorf("page %s: %w", old.ID, model.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("update page: %w", err)
		}
		return nil
	}
	r, err := s.transact(ctx, withAttrs(s.deleteAction(key(websitePK(w.Account, w.ID), pageSK(old.URL)), samePage), pageID(old.ID), nil),
		s.putAction(item, "attribute_not_exists(PK)"), s.pageRowAction(w, updated))
	if len(r) == 3 {
		switch {
		case r[0] == "ConditionalCheckFailed":
			return fmt.Errorf("page %s: %w", old.ID, model.ErrNotFound)
		case r[1] == "ConditionalCheckFailed":
			return &model.ConflictError{Field: "url", Value: updated.URL}
		}
	}
	if err != nil {
		return fmt.Errorf("update page: %w", err)
	}
	return s.putPagePointers(ctx, w, []model.Page{updated})
}

// DeletePage removes a page's settings and records a purge marker for its results, at once.
func (s *Store) DeletePage(ctx context.Context, w model.Website, p model.Page) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Page: p.ID, Requested: s.now()}
	marker, err := s.purgeMarker(job)
	if err != nil {
		return job, err
	}
	r, err := s.transact(ctx, withAttrs(s.deleteAction(key(websitePK(w.Account, w.ID), pageSK(p.URL)), samePage), pageID(p.ID), nil),
		s.putAction(marker, ""), s.deleteAction(key(websitePK(w.Account, w.ID), pageRowSK(p)), ""))
	if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return job, fmt.Errorf("page %s: %w", p.ID, model.ErrNotFound)
	}
	if err != nil {
		return job, fmt.Errorf("delete page: %w", err)
	}
	return job, nil
}
