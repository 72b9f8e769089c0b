package model

import "time"

// Budget is a threshold on one metric of a website's pages.
type Budget struct {
	ID       string
	Metric   string
	Operator string // "lt" or "gt"
	Value    float64
	Device   string // "desktop", "mobile" or "all"
	Created  time.Time
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
