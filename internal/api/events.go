package api

import (
	"net/http"
	"strings"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// listEvents answers a website's events newest first: the activity feed, filtered by type (a
// comma-separated list) and date (yyyyMMdd-yyyyMMdd), with cursor pagination.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, c caller) error {
	win, err := listWindow(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var f model.EventFilter
	if raw := q.Get("type"); raw != "" {
		for _, t := range strings.Split(raw, ",") {
			if !event.Known(t) {
				return badRequest("type must be event types separated by commas: "+strings.Join(event.Types, ", "),
					model.FieldError{Field: "type", Message: "unknown event type " + quoteShort(t)})
			}
			f.Types = append(f.Types, t)
		}
	}
	if f.From, f.To, err = s.dayFilter(r); err != nil {
		return err
	}
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	evs, more, err := s.store.Events(r.Context(), site, f, win.after, win.limit)
	if err != nil {
		return err
	}
	out := make([]event.Document, len(evs))
	for i, ev := range evs {
		out[i] = event.NewDocument(site, ev, baseURL(r))
	}
	next := ""
	if more {
		next = cursorAfter(store.EventKey(evs[len(evs)-1]))
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

// dayFilter reads the optional date query parameter of a list as the first and last days
// (yyyymmdd) it keeps; "" for both when it is absent.
func (s *Server) dayFilter(r *http.Request) (string, string, error) {
	if !r.URL.Query().Has("date") {
		return "", "", nil
	}
	from, to, err := s.dateRange(r, 0)
	if err != nil {
		return "", "", err
	}
	return from.Format(dateRangeLayout), to.Format(dateRangeLayout), nil
}

// baseURL is the API's URL as the client reached it, for links.
func baseURL(r *http.Request) string {
	scheme := "https"
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	} else if r.TLS == nil && isLoopbackHost(r.Host) {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}

func isLoopbackHost(host string) bool {
	h := host
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "[::1]"
}

// quoteShort quotes a value from a request, cut to 40 characters.
func quoteShort(v string) string {
	if r := []rune(v); len(r) > 40 {
		v = string(r[:40]) + "..."
	}
	return `"` + v + `"`
}
