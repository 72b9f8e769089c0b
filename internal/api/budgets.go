package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/store"
)

// BudgetMetrics are the metrics a budget may watch: the lab metrics of a page (including the
// timeline and network fields) and the user-experience dataset's.
var BudgetMetrics = []string{
	"fcp", "lcp", "cls", "tbt", "ttfb", "tti", "speed_index",
	"performance_score", "accessibility_score", "best_practices_score", "seo_score",
	"kb_total", "cpu_total", "opportunities", "validation_errors",
	"dom_elements", "dom_max_depth", "dns_time", "connect_time", "server_time", "transfer_time",
	"dom_ready", "on_load",
	"bytes_total", "bytes_doc", "bytes_image", "bytes_js", "bytes_css", "bytes_font",
	"bytes_media", "bytes_other", "bytes_thirdparty",
	"ux_lcp", "ux_fid", "ux_cls", "ux_fcp", "ux_ttfb", "ux_inp",
}

var (
	budgetOperators = []string{"lt", "gt"}
	budgetDevices   = []string{"desktop", "mobile", "all"}
)

func (s *Server) budgetRoutes(mux *http.ServeMux) {
	s.route(mux, "GET /{websiteID}/budgets", false, s.listBudgets)
	s.route(mux, "POST /{websiteID}/budgets", true, s.createBudget)
	s.route(mux, "PUT /{websiteID}/budgets/{budgetID}", true, s.updateBudget)
	s.route(mux, "DELETE /{websiteID}/budgets/{budgetID}", true, s.deleteBudget)
}

// budgetJSON is a budget as create and edit return it: value is a number.
type budgetJSON struct {
	ID       string  `json:"id"`
	Metric   string  `json:"metric"`
	Operator string  `json:"operator"`
	Value    float64 `json:"value"`
	Device   string  `json:"device"`
}

// budgetStatusJSON is a budget as the list returns it: value is a numeric string, with the
// budget's status and the pages at risk of or over it.
type budgetStatusJSON struct {
	ID       string           `json:"id"`
	Metric   string           `json:"metric"`
	Operator string           `json:"operator"`
	Value    string           `json:"value"`
	Device   string           `json:"device"`
	Status   string           `json:"status"`
	Pages    []budgetPageJSON `json:"pages"`
}

type budgetPageJSON struct {
	ID     string `json:"id"`
	Device string `json:"device"`
	Alias  string `json:"alias"`
	Status string `json:"status"`
}

type budgetInput struct {
	Metric   *string  `json:"metric"`
	Operator *string  `json:"operator"`
	Value    *float64 `json:"value"`
	Device   *string  `json:"device"`
}

func toBudgetJSON(b store.Budget) budgetJSON {
	return budgetJSON{ID: b.ID, Metric: b.Metric, Operator: b.Operator, Value: b.Value, Device: b.Device}
}

func (s *Server) listBudgets(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	var labs []pageLab
	if len(budgets) > 0 {
		if labs, err = s.recentLabs(r.Context(), site); err != nil {
			return err
		}
	}
	if hasUXBudget(budgets) {
		if err := s.recentField(r.Context(), site, labs, false); err != nil {
			return err
		}
	}
	latest := make([]map[string]float64, len(labs))
	for i, l := range labs {
		latest[i] = l.latestValues()
	}
	out := make([]budgetStatusJSON, len(budgets))
	for i, b := range budgets {
		// A budget is as bad as its worst page and device; pages lists those not ok.
		item := budgetStatusJSON{
			ID: b.ID, Metric: b.Metric, Operator: b.Operator, Device: b.Device,
			Value:  strconv.FormatFloat(b.Value, 'f', -1, 64),
			Status: budget.OK, Pages: []budgetPageJSON{},
		}
		for j, l := range labs {
			v, ok := latest[j][b.Metric]
			if !ok || !budget.AppliesTo(b.Device, l.device) {
				continue
			}
			if st := budget.Status(b.Operator, b.Value, v); st != budget.OK {
				item.Status = budget.Worse(item.Status, st)
				item.Pages = append(item.Pages, budgetPageJSON{ID: l.page.ID, Device: l.device, Alias: l.page.Alias, Status: st})
			}
		}
		out[i] = item
	}
	return writeJSON(w, http.StatusOK, list(out))
}

// applyBudget sets the fields present in in over b and checks the result; on create every
// field must be present.
func applyBudget(in budgetInput, b *store.Budget, create bool) error {
	var errs fieldErrors
	if in.Metric != nil {
		b.Metric = *in.Metric
		if !slices.Contains(BudgetMetrics, b.Metric) {
			errs.add("metric", "must be one of the lab metric fields or ux_* fields, such as lcp, cls or dom_elements")
		}
	} else if create {
		errs.add("metric", "is required")
	}
	if in.Operator != nil {
		b.Operator = *in.Operator
		if !slices.Contains(budgetOperators, b.Operator) {
			errs.add("operator", "must be lt or gt")
		}
	} else if create {
		errs.add("operator", "is required")
	}
	if in.Value != nil {
		b.Value = *in.Value
		if !finite(b.Value) {
			errs.add("value", "must be a finite number")
		}
	} else if create {
		errs.add("value", "is required")
	}
	if in.Device != nil {
		b.Device = *in.Device
		if !slices.Contains(budgetDevices, b.Device) {
			errs.add("device", "must be desktop, mobile or all")
		}
	} else if create {
		errs.add("device", "is required")
	}
	if !create && in == (budgetInput{}) {
		errs.add("body", "send at least one of metric, operator, value and device")
	}
	return errs.err()
}

func (s *Server) createBudget(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	var in budgetInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	var b store.Budget
	if err := applyBudget(in, &b, true); err != nil {
		return err
	}
	if err := s.store.CreateBudget(r.Context(), site, &b); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, toBudgetJSON(b))
}

func (s *Server) updateBudget(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	var in budgetInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	b, err := s.store.Budget(r.Context(), site, r.PathValue("budgetID"))
	if err != nil {
		return err
	}
	if err := applyBudget(in, &b, false); err != nil {
		return err
	}
	if err := s.store.UpdateBudget(r.Context(), site, b); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toBudgetJSON(b))
}

func (s *Server) deleteBudget(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteBudget(r.Context(), site, r.PathValue("budgetID")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
