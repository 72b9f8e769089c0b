package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/openvitals/openvitals/internal/model"
)

// pageJSON is a page's settings as the interface shows them.
type pageJSON struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	Alias string `json:"alias"`
}

func toPageJSON(p model.Page) pageJSON { return pageJSON{ID: p.ID, URL: p.URL, Alias: p.Alias} }

// pageInput is one page of a create or update request; nil means omitted.
type pageInput struct {
	URL   *string `json:"url"`
	Alias *string `json:"alias"`
}

func (s *Server) listPageSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	pages, err := s.store.Pages(r.Context(), site)
	if err != nil {
		return err
	}
	pages, next := cut(pages, pageKey, win)
	out := make([]pageJSON, len(pages))
	for i, p := range pages {
		out[i] = toPageJSON(p)
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

func (s *Server) createPages(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	var in []pageInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	var errs model.FieldErrors
	switch {
	case len(in) == 0:
		errs.Add("body", "send an array of 1 to %d pages", model.MaxPagesPerCall)
	case len(in) > model.MaxPagesPerCall:
		errs.Add("body", "at most %d pages a call, not %d", model.MaxPagesPerCall, len(in))
	}
	if err := errs.Err(); err != nil {
		return err
	}
	pages := make([]model.Page, len(in))
	seen := make(map[string]int, len(in))
	for i, p := range in {
		field := fmt.Sprintf("[%d]", i)
		pages[i] = checkPage(p, model.Page{}, field, &errs)
		if first, dup := seen[pages[i].URL]; dup && pages[i].URL != "" {
			errs.Add(field+".url", "repeats the url of [%d]", first)
		}
		seen[pages[i].URL] = i
	}
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.quota.TakePages(r.Context(), site, len(pages)); err != nil {
		return err
	}
	if err := s.store.CreatePages(r.Context(), site, pages); err != nil {
		if rerr := s.quota.ReturnPages(context.WithoutCancel(r.Context()), site, len(pages)); rerr != nil {
			s.log.ErrorContext(r.Context(), "give back the room of pages not created", "err", rerr)
		}
		return err
	}
	if s.fieldHistory != nil {
		// Failing to queue it costs a day: the next daily collection fetches a missing history.
		if err := s.fieldHistory.NewPages(context.WithoutCancel(r.Context()), site, pages, s.now()); err != nil {
			s.log.WarnContext(r.Context(), "the history of new pages was not queued", "website", site.ID, "err", err)
		}
	}
	out := make([]pageJSON, len(pages))
	for i, p := range pages {
		out[i] = toPageJSON(p)
	}
	return writeJSON(w, http.StatusOK, out)
}

// checkPage applies a page input over base (the stored page, or empty for a new one) and
// records what is wrong under field. A new page's alias defaults to its url.
func checkPage(in pageInput, base model.Page, field string, errs *model.FieldErrors) model.Page {
	p := base
	if field != "" {
		field += "."
	}
	if in.URL != nil {
		p.URL = *in.URL
	}
	if in.URL != nil || base.URL == "" {
		if msg := checkPageURL(p.URL); msg != "" {
			errs.Add(field+"url", "%s", msg)
		}
	}
	if in.Alias != nil && *in.Alias != "" {
		p.Alias = *in.Alias
		if msg := model.CheckName(p.Alias); msg != "" {
			errs.Add(field+"alias", "%s", msg)
		}
	} else if p.Alias == "" {
		p.Alias = p.URL
	}
	return p
}

func (s *Server) updatePage(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	var in pageInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.URL == nil && in.Alias == nil {
		return invalid(model.FieldError{Field: "body", Message: "send url, alias or both"})
	}
	old, err := s.store.Page(r.Context(), site, r.PathValue("pageID"))
	if err != nil {
		return err
	}
	var errs model.FieldErrors
	updated := checkPage(in, old, "", &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.store.UpdatePage(r.Context(), site, old, updated); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePage(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	p, err := s.store.Page(r.Context(), site, r.PathValue("pageID"))
	if err != nil {
		return err
	}
	job, err := s.store.DeletePage(r.Context(), site, p)
	if err != nil {
		return err
	}
	if err := s.quota.ReturnPages(context.WithoutCancel(r.Context()), site, 1); err != nil {
		s.log.ErrorContext(r.Context(), "free the room of a deleted page", "err", err)
	}
	s.enqueuePurge(r, job)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
