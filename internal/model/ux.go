package model

import "time"

// Vital is one vital of a user-experience dataset record: its 75th percentile (ms, unitless
// for cls) and the shares of experiences that were good, needing improvement and poor, in
// percent.
type Vital struct {
	P75              float64
	Good             float64
	NeedsImprovement float64
	Poor             float64
}

// UXResult is one day's user-experience dataset record of a page on one device (the dataset's
// rolling 28-day window as published that day).
type UXResult struct {
	Page   string
	Device string
	Day    string // UTC day of collection, yyyymmdd
	// Vitals holds each vital the dataset has data for by its interface name (lcp, inp, cls,
	// fcp, ttfb). A vital without data is absent, never zero.
	Vitals    map[string]Vital
	Collected time.Time
}

// SearchResult is a page's search analytics over the 14 days before a day of collection, from
// every search row that maps to the page.
type SearchResult struct {
	Page        string
	Day         string // UTC day of collection, yyyymmdd
	From, To    string // the days queried, yyyy-mm-dd, inclusive
	Impressions float64
	Clicks      float64
	// Position is the average position in search results, weighted by impressions; it means
	// nothing when there were no impressions.
	Position  float64
	Collected time.Time
}

// UXRun is how a website's user-experience data collection of one UTC day went.
type UXRun struct {
	Day      string
	Attempt  int
	Started  time.Time
	Finished time.Time // zero until an attempt finished; retried attempts leave it zero
	// UXRecords counts the page-device records stored, UXNoData those the dataset has no
	// data for; SearchPages counts the pages with search analytics stored.
	UXRecords   int
	UXNoData    int
	SearchPages int
	// Error is what went wrong: why the last attempt failed, or what a finished collection
	// had to leave out (an invalid API key, Search Console refusing the credentials).
	Error string
}

// UXPeriod is one collection period of the user-experience dataset's history (its weekly
// series): the 28 days from First to Last (yyyymmdd, both included) and each vital's p75 and
// shares over them, as the daily record of Last would have said. A vital without data in the
// period is absent.
type UXPeriod struct {
	First, Last string
	Vitals      map[string]Vital
}

// UXHistory is the dataset's history of a page (or, with Page empty, of the website's origin)
// on one device: up to UXHistoryPeriods collection periods, oldest first.
type UXHistory struct {
	Page    string `dynamodbav:",omitempty"`
	Device  string
	Periods []UXPeriod
	// Fetched is when the history was last asked for; NoData that the dataset had none then.
	Fetched time.Time
	NoData  bool `dynamodbav:",omitempty"`
}

// UXHistoryPeriods is how many collection periods a history is asked for: the API's most.
const UXHistoryPeriods = 40

// UXHistoryRefresh is how often a page's history is asked for again: the dataset publishes a
// new collection period each week.
const UXHistoryRefresh = 7 * 24 * time.Hour
