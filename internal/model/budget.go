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
