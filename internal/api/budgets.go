package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/model"
)

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

func toBudgetJSON(b model.Budget) budgetJSON {
	return budgetJSON{ID: b.ID, Metric: b.Metric, Operator: b.Operator, Value: b.Value, Device: b.Device}
}

func (s *Server) listBudgets(w http.ResponseWriter, r *http.Request, c caller) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	reports, err := s.budgets.Website(r.Context(), site)
	if err != nil {
		return err
	}
	reports, next := cut(reports, func(rep budget.Report) string { return budgetKey(rep.Budget) }, win)
	out := make([]budgetStatusJSON, len(reports))
	for i, rep := range reports {
		b := rep.Budget
		out[i] = budgetStatusJSON{
			ID: b.ID, Metric: b.Metric, Operator: b.Operator, Device: b.Device,
			Value:  strconv.FormatFloat(b.Value, 'f', -1, 64),
			Status: rep.Status, Pages: make([]budgetPageJSON, len(rep.Pages)),
		}
		for j, p := range rep.Pages {
			out[i].Pages[j] = budgetPageJSON{ID: p.Page.ID, Device: p.Device, Alias: p.Page.Alias, Status: p.Status}
		}
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

// applyBudget sets the fields present in in over b and checks the result; on create every
// field must be present.
func applyBudget(in budgetInput, b *model.Budget, create bool) error {
	var errs model.FieldErrors
	if in.Metric != nil {
		b.Metric = *in.Metric
	} else if create {
		errs.Add("metric", "is required")
	}
	metric, known := budget.Lookup(b.Metric)
	switch {
	case b.Metric == "":
	case !known:
		errs.Add("metric", "must be one of the lab metric fields or ux_* fields, such as lcp, cls or dom_elements")
	case metric.NoData != "":
		errs.Add("metric", "%s", metric.NoData)
	}
	if in.Operator != nil {
		b.Operator = *in.Operator
		if !slices.Contains(budget.Operators, b.Operator) {
			errs.Add("operator", "must be lt or gt")
		}
	} else if create {
		errs.Add("operator", "is required")
	}
	if in.Value != nil {
		b.Value = *in.Value
	} else if create {
		errs.Add("value", "is required")
	}
	// Checked against the metric's range whichever of the two changed.
	if known && (in.Value != nil || in.Metric != nil) {
		if msg := metric.CheckThreshold(b.Value); msg != "" {
			errs.Add("value", "%s", msg)
		}
	}
	if in.Device != nil {
		b.Device = *in.Device
		if !slices.Contains(budget.Devices, b.Device) {
			errs.Add("device", "must be desktop, mobile or all")
		}
	} else if create {
		errs.Add("device", "is required")
	}
	if !create && in == (budgetInput{}) {
		errs.Add("body", "send at least one of metric, operator, value and device")
	}
	return errs.Err()
}

// budgetKind is how budgets are created, changed and deleted.
func (s *Server) budgetKind() itemKind[model.Budget, budgetInput] {
	return itemKind[model.Budget, budgetInput]{
		pathID:  "budgetID",
		newItem: func() model.Budget { return model.Budget{} },
		apply:   applyFields(applyBudget),
		get:     s.store.Budget,
		create:  s.store.CreateBudget,
		update:  byValue(s.store.UpdateBudget),
		remove:  s.store.DeleteBudget,
		show:    showing(toBudgetJSON),
	}
}
