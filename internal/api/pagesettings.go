package api

import (
	"context"
	"net/http"

	"github.com/openvitals/openvitals/internal/model"
)

func (s *Server) listPageSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	return websiteList(s, w, r, c, s.store.Pages, pageKey, itself[model.Page])
}

func (s *Server) createPages(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[[]model.PagePatch](s, w, r, c)
	if err != nil {
		return err
	}
	pages, err := model.NewPages(in)
	if err != nil {
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
	return writeJSON(w, http.StatusOK, pages)
}

func (s *Server) updatePage(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[model.PagePatch](s, w, r, c)
	if err != nil {
		return err
	}
	old, updated, err := in.Update(func() (model.Page, error) { return s.store.Page(r.Context(), site, r.PathValue("pageID")) })
	if err != nil {
		return err
	}
	if err := s.store.UpdatePage(r.Context(), site, old, updated); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePage(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, err := websiteAnd(s, r, c, withPathID(r, "pageID", s.store.Page))
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
	s.enqueuePurge(r.Context(), job)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
