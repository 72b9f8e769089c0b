package model

import "time"

// Budget is a threshold on one metric of a website's pages. The API shows it as it is (its
// JSON names), when it was created aside.
type Budget struct {
	ID       string    `json:"id"`
	Metric   string    `json:"metric"`
	Operator string    `json:"operator"` // "lt" or "gt"
	Value    float64   `json:"value"`
	Device   string    `json:"device"` // "desktop", "mobile" or "all"
	Created  time.Time `json:"-"`
}

// BudgetTally is what is known of a budget's pages and devices off it: how many by status
// (Counts), the budget as they were judged (Basis), the day every page was last judged (Day),
// and Version, its number of changes. Each of those pages and devices has its BudgetEntry,
// changed only with the tally.
type BudgetTally struct {
	Counts  map[string]int `dynamodbav:",omitempty"`
	Basis   string
	Day     string
	Version int
}

// BudgetEntry is a page on a device that is off a budget: Status is at risk or exceeded (a
// page within its budget has none). A budget's tally counts its entries.
type BudgetEntry struct {
	Page, Device, Status string
}

// BudgetEntryChange is a page on a device whose status against a budget goes from From to To
// ("" for within it, which has no entry).
type BudgetEntryChange struct {
	Page, Device, From, To string
}

// TallyMoved is a tally of a budget's entries by status with one entry gone from status from
// to status to ("" for none: a new entry, or one removed).
func TallyMoved(tally map[string]int, from, to string) map[string]int {
	out := make(map[string]int, len(tally)+1)
	for k, v := range tally {
		out[k] = v
	}
	if from != "" {
		out[from]--
	}
	if to != "" {
		out[to]++
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// BudgetPatch is a budget's create or update request; nil means omitted (kept, on update).
type BudgetPatch struct {
	Metric   *string  `json:"metric"`
	Operator *string  `json:"operator"`
	Value    *float64 `json:"value"`
	Device   *string  `json:"device"`
}

// BudgetRules are what a budget is checked against, which the budget package knows: the
// operators, the devices, and the metrics a budget may watch.
type BudgetRules struct {
	Operators, Devices []string
	// Metric looks a metric up: known is false when no budget may watch it; noData says why
	// it never has data ("" when it has), checkThreshold what is wrong with a threshold on it.
	Metric func(name string) (noData string, checkThreshold func(float64) string, known bool)
}

// Apply sets the fields present in the patch over b and checks the result; on create every
// field must be present.
func (in BudgetPatch) Apply(b *Budget, create bool, rules BudgetRules) error {
	var errs FieldErrors
	patchField(&errs, "metric", in.Metric, &b.Metric, create, nil)
	noData, checkThreshold, known := rules.Metric(b.Metric)
	switch {
	case b.Metric == "":
	case !known:
		errs.Add("metric", "must be one of the lab metric fields or ux_* fields, such as lcp, cls or dom_elements")
	case noData != "":
		errs.Add("metric", "%s", noData)
	}
	patchField(&errs, "operator", in.Operator, &b.Operator, create, oneOf(rules.Operators, "must be lt or gt"))
	patchField(&errs, "value", in.Value, &b.Value, create, nil)
	// Checked against the metric's range whichever of the two changed.
	if known && (in.Value != nil || in.Metric != nil) {
		if msg := checkThreshold(b.Value); msg != "" {
			errs.Add("value", "%s", msg)
		}
	}
	patchField(&errs, "device", in.Device, &b.Device, create, oneOf(rules.Devices, "must be desktop, mobile or all"))
	if !create && in == (BudgetPatch{}) {
		errs.Add("body", "send at least one of metric, operator, value and device")
	}
	return errs.Err()
}
