package api

import (
	"context"
	"net/http"

	"github.com/openvitals/openvitals/internal/model"
)

// websiteJSON is a website as the interface shows it.
type websiteJSON struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Domain      string `json:"domain"`
	// Method is how the pages no test profile gives a method are measured.
	Method string `json:"method"`
}

func toWebsiteJSON(w model.Website) websiteJSON {
	return websiteJSON{ID: w.ID, DisplayName: w.DisplayName, Domain: w.Domain, Method: model.MethodOr(w.Method, "")}
}

func (s *Server) listWebsites(w http.ResponseWriter, r *http.Request, c caller) error {
	win, err := listWindow(r)
	if err != nil {
		return err
	}
	sites, err := s.store.Websites(r.Context(), c.account)
	if err != nil {
		return err
	}
	return writeWindow(w, sites, websiteKey, win, toWebsiteJSON)
}

func (s *Server) createWebsite(w http.ResponseWriter, r *http.Request, c caller) error {
	var in model.WebsiteRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	site, err := in.Website(c.account, func(d string) (string, string) { return normalizeDomain(d, s.local) })
	if err != nil {
		return err
	}
	if err := s.store.CreateWebsite(r.Context(), &site); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, toWebsiteJSON(site))
}

func (s *Server) deleteWebsite(w http.ResponseWriter, r *http.Request, c caller) error {
	_, job, err := websiteAnd(s, r, c, s.store.DeleteWebsite)
	if err != nil {
		return err
	}
	s.enqueuePurge(r.Context(), job)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// enqueuePurge queues the purge of what a deletion left. The deletion has already happened and
// its purge marker is stored, so a failure here is logged, not answered: the periodic sweep of
// pending purges queues it again.
func (s *Server) enqueuePurge(ctx context.Context, job model.PurgeJob) {
	if err := s.purger.Enqueue(ctx, job); err != nil {
		s.log.ErrorContext(ctx, "queue purge; the sweep will retry", "job", job, "err", err)
	}
}

// whoAmI answers with the caller's account and role, so that a client (the dashboard) shows
// only the actions the key allows.
func whoAmI(w http.ResponseWriter, _ *http.Request, c caller) error {
	return writeJSON(w, http.StatusOK, struct {
		Account string     `json:"account"`
		Role    model.Role `json:"role"`
	}{c.account, c.role})
}
