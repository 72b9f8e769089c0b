package api

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/store"
)

// Lists that can grow take optional cursor pagination: `limit` (1 to maxPageLimit) items a
// response and the `cursor` a previous response gave; `result.cursor` is there when more
// remain. Without `limit` a list is whole, as clients of the original interface expect.
const maxPageLimit = 1000

// window is the part of a list a request asks for.
type window struct {
	limit int    // 0: the whole list
	after string // the sort key of the last item already returned ("" from the start)
}

// listWindow reads limit and cursor from a request.
func listWindow(r *http.Request) (window, error) {
	q := r.URL.Query()
	var win window
	if raw := q.Get("limit"); raw != "" || q.Has("limit") {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxPageLimit {
			return win, badRequest("the query parameter limit must be a whole number from 1 to 1000",
				model.FieldError{Field: "limit", Message: "must be from 1 to 1000"})
		}
		win.limit = n
	}
	if raw := q.Get("cursor"); raw != "" || q.Has("cursor") {
		if win.limit == 0 {
			return win, badRequest("the query parameter cursor goes with limit", model.FieldError{Field: "cursor", Message: "needs limit"})
		}
		key, err := base64.RawURLEncoding.DecodeString(raw)
		if err != nil || len(key) == 0 || len(key) > 200 {
			return win, badRequest("the query parameter cursor is not one this API gave", model.FieldError{Field: "cursor", Message: "is not valid"})
		}
		win.after = string(key)
	}
	return win, nil
}

// windowAndWebsite reads a list request's window, then the website it names (so a bad limit
// is refused before the website is read).
func (s *Server) windowAndWebsite(r *http.Request, c caller) (window, model.Website, error) {
	win, err := listWindow(r)
	if err != nil {
		return win, model.Website{}, err
	}
	site, err := s.website(r, c)
	return win, site, err
}

// websiteList answers the window of a website's list that read reads (sorted by key) that the
// request asks for, each item shown by show.
func websiteList[T, Out any](s *Server, w http.ResponseWriter, r *http.Request, c caller,
	read func(context.Context, model.Website) ([]T, error), key func(T) string, show func(T) Out) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	items, err := read(r.Context(), site)
	if err != nil {
		return err
	}
	return writeWindow(w, items, key, win, show)
}

// writeWindow answers the items of a list (sorted by key) that the window covers, each shown
// by show, with the cursor of the next window.
func writeWindow[T, Out any](w http.ResponseWriter, items []T, key func(T) string, win window, show func(T) Out) error {
	items, next := cut(items, key, win)
	out := make([]Out, len(items))
	for i, t := range items {
		out[i] = show(t)
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

// cut returns the items of a list (sorted by key, ascending) that the window covers, and the
// cursor of the next window ("" when none remain).
func cut[T any](items []T, key func(T) string, win window) ([]T, string) {
	if win.limit == 0 {
		return items, ""
	}
	if !slices.IsSortedFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) }) {
		// Equal creation times only: order them as the keys do, so that no item is skipped.
		items = slices.Clone(items)
		slices.SortStableFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	}
	start := 0
	if win.after != "" {
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > win.after })
	}
	end := min(start+win.limit, len(items))
	if end == len(items) {
		return items[start:end], ""
	}
	return items[start:end], cursorAfter(key(items[end-1]))
}

// cursorAfter is the cursor of the window after the item with sort key key.
func cursorAfter(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// timeKey orders by a creation time and breaks ties by ID.
func timeKey(t time.Time, id string) string {
	return t.UTC().Format("20060102T150405.000000000") + "|" + id
}

// listPage is list with the cursor of the next window, when there is one.
func listPage[T any](items []T, cursor string) any {
	if cursor == "" {
		return list(items)
	}
	if items == nil {
		items = []T{}
	}
	return map[string]any{"result": map[string]any{"list": items, "cursor": cursor}}
}

// The sort keys of the paginated lists: the order the store lists them in.
func pageKey(p model.Page) string       { return store.PageOrderKey(p) }
func websiteKey(w model.Website) string { return timeKey(w.Created, w.ID) }
func budgetKey(b model.Budget) string   { return timeKey(b.Created, b.ID) }
func testKey(t multistep.TestStats) string {
	return timeKey(t.Test.Created, t.Test.ID)
}
