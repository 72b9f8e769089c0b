package api

import (
	"net/http"
	"time"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// uxHistoryJSON is the user-experience dataset's weekly history of a page (or of its website's
// origin) on a device: one item per collection period, oldest first.
type uxHistoryJSON struct {
	Device    string           `json:"device"`
	FetchedAt *time.Time       `json:"fetchedAt"`
	Periods   []map[string]any `json:"periods"`
}

// uxVitals are the vitals a period may hold, in the order of the ux_ fields.
var uxVitals = []string{"lcp", "inp", "cls", "fcp", "ttfb"}

func toUXHistoryJSON(h model.UXHistory, device string, found bool) uxHistoryJSON {
	out := uxHistoryJSON{Device: device, Periods: []map[string]any{}}
	if !found {
		return out
	}
	at := h.Fetched.UTC()
	out.FetchedAt = &at
	for _, p := range h.Periods {
		item := map[string]any{"date": model.DayToISO(p.Last), "firstDate": model.DayToISO(p.First)}
		for _, name := range uxVitals {
			item["ux_"+name] = nil
			if v, ok := p.Vitals[name]; ok {
				item["ux_"+name] = number("ux_"+name, v.P75)
				item[name] = map[string]any{"value": number("ux_"+name, v.P75), "green": v.Good, "yellow": v.NeedsImprovement, "red": v.Poor}
			}
		}
		item["ux_passed"] = nil
		if passed, ok := metrics.Assess(func(field string) (float64, bool) {
			v, ok := p.Vitals[field[len("ux_"):]]
			return v.P75, ok
		}); ok {
			item["ux_passed"] = 0
			if passed {
				item["ux_passed"] = 1
			}
		}
		out.Periods = append(out.Periods, item)
	}
	return out
}

// pageUXHistory answers the dataset's 40 weekly collection periods of a page and of its
// website's origin on a device, fetched when the page was added and weekly since.
func (s *Server) pageUXHistory(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	result := map[string]uxHistoryJSON{}
	for key, page := range map[string]string{"page": p.ID, "origin": ""} {
		h, err := s.store.UXHistory(r.Context(), site, page, device)
		if err != nil && !model.IsNotFound(err) {
			return err
		}
		result[key] = toUXHistoryJSON(h, device, err == nil)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": result})
}
