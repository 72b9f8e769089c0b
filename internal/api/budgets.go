package api

import (
	"net/http"
	"strconv"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/model"
)

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

func (s *Server) listBudgets(w http.ResponseWriter, r *http.Request, c caller) error {
	return websiteList(s, w, r, c, s.budgets.Website, func(rep budget.Report) string { return budgetKey(rep.Budget) }, toBudgetStatusJSON)
}

func toBudgetStatusJSON(rep budget.Report) budgetStatusJSON {
	b := rep.Budget
	out := budgetStatusJSON{
		ID: b.ID, Metric: b.Metric, Operator: b.Operator, Device: b.Device,
		Value:  strconv.FormatFloat(b.Value, 'f', -1, 64),
		Status: rep.Status, Pages: make([]budgetPageJSON, len(rep.Pages)),
	}
	for j, p := range rep.Pages {
		out.Pages[j] = budgetPageJSON{ID: p.Page.ID, Device: p.Device, Alias: p.Page.Alias, Status: p.Status}
	}
	return out
}

// budgetRules are the budget package's operators, devices and metrics, as model checks a
// budget against them.
var budgetRules = model.BudgetRules{Operators: budget.Operators, Devices: budget.Devices,
	Metric: func(name string) (string, func(float64) string, bool) {
		m, known := budget.Lookup(name)
		return m.NoData, m.CheckThreshold, known
	}}

// budgetKind is how budgets are created, changed and deleted.
func (s *Server) budgetKind() itemKind[model.Budget, model.BudgetPatch] {
	return itemKind[model.Budget, model.BudgetPatch]{
		pathID:  "budgetID",
		newItem: func() model.Budget { return model.Budget{} },
		apply: applyFields(func(in model.BudgetPatch, b *model.Budget, create bool) error {
			return in.Apply(b, create, budgetRules)
		}),
		get:    s.store.Budget,
		create: s.store.CreateBudget,
		update: byValue(s.store.UpdateBudget),
		remove: s.store.DeleteBudget,
		show:   showing(itself[model.Budget]),
	}
}
