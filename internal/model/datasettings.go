package model

import "time"

// DataSettings are a website's choices about its data: whether its daily Parquet export is
// written, and how long each kind of its data is kept.
type DataSettings struct {
	// Exports turns on the daily Parquet export of the website's data (internal/export).
	Exports bool
	// Retention is how many days each kind of data is kept; a zero field is its default.
	Retention Retention
	// ExportsSince is the first day (yyyymmdd) an export of the website was written, and
	// ExportsPurgedTo the day before which its exports are known gone: the retention pass and
	// a purge delete the keys of the days between, which they compute, rather than list every
	// website's keys of a day.
	ExportsSince    string `dynamodbav:",omitempty"`
	ExportsPurgedTo string `dynamodbav:",omitempty"`
}

// Retention is how many days a website keeps each kind of its data; 0 means the default
// (RetentionLimits.Default).
type Retention struct {
	// Reports: the Lighthouse reports of its pages' daily audits and, beside each, its HAR,
	// filmstrip and diagnostics.
	Reports int `json:"reports"`
	// Series: the reports and artifacts of its test series' tests.
	Series int `json:"series"`
	// RUM: its real users' daily tables.
	RUM int `json:"rum"`
	// Events: its events (the activity feed).
	Events int `json:"events"`
	// Exports: its daily Parquet exports.
	Exports int `json:"exports"`
}

// RetentionLimits are the least, default and most days of one kind of data: the most is
// what its store keeps at all (the bucket's lifecycle rule, the items' expiry at write).
type RetentionLimits struct{ Min, Default, Max int }

// RetentionBounds are the limits of each kind of data of a deployment.
type RetentionBounds struct {
	Reports, Series, RUM, Events, Exports RetentionLimits
}

// MinReportRetentionDays keeps every report the API may still serve (it reads the last 30
// days'); the deployment's report retention is at least as long.
const MinReportRetentionDays = 31

// MinRetentionDays is the shortest any kind of data may be kept: a day's pass removes what
// is past it, so a shorter one would remove what was written the same day.
const MinRetentionDays = 1

// Bounds are the limits of a deployment whose bucket keeps reports reportDays, its real-user
// bucket rumDays and its export bucket exportDays: the defaults are those (events: their
// expiry at write, EventRetention), so that a website that sets nothing keeps what the
// deployment keeps.
func Bounds(reportDays, rumDays, exportDays int) RetentionBounds {
	events := int(EventRetention / (24 * time.Hour))
	return RetentionBounds{
		Reports: RetentionLimits{MinReportRetentionDays, reportDays, reportDays},
		Series:  RetentionLimits{MinRetentionDays, reportDays, reportDays},
		RUM:     RetentionLimits{MinRetentionDays, rumDays, rumDays},
		Events:  RetentionLimits{MinRetentionDays, events, events},
		Exports: RetentionLimits{MinRetentionDays, exportDays, exportDays},
	}
}

// The stack's defaults of OPENVITALS_REPORT_RETENTION_DAYS, OPENVITALS_RUM_RETENTION_DAYS and
// OPENVITALS_EXPORT_RETENTION_DAYS: how long a deployment keeps each kind unless told.
const (
	DefaultReportRetentionDays = 90
	DefaultRUMRetentionDays    = 400
	DefaultExportRetentionDays = 731
)

// DefaultBounds are the limits of a deployment that keeps the stack's defaults.
func DefaultBounds() RetentionBounds {
	return Bounds(DefaultReportRetentionDays, DefaultRUMRetentionDays, DefaultExportRetentionDays)
}

// Check returns one FieldError per field of r outside its bounds (0 is always allowed: the
// default).
func (r Retention) Check(b RetentionBounds) FieldErrors {
	var errs FieldErrors
	for _, f := range []struct {
		name string
		v    int
		l    RetentionLimits
	}{{"reports", r.Reports, b.Reports}, {"series", r.Series, b.Series}, {"rum", r.RUM, b.RUM},
		{"events", r.Events, b.Events}, {"exports", r.Exports, b.Exports}} {
		if f.v != 0 && (f.v < f.l.Min || f.v > f.l.Max) {
			errs.Add("retention."+f.name, "must be %d to %d days (0 or absent: the default, %d)", f.l.Min, f.l.Max, f.l.Default)
		}
	}
	return errs
}

// Resolved is r with each default field given its default's days.
func (r Retention) Resolved(b RetentionBounds) Retention {
	pick := func(v int, l RetentionLimits) int {
		if v == 0 {
			return l.Default
		}
		return min(v, l.Max)
	}
	return Retention{Reports: pick(r.Reports, b.Reports), Series: pick(r.Series, b.Series), RUM: pick(r.RUM, b.RUM),
		Events: pick(r.Events, b.Events), Exports: pick(r.Exports, b.Exports)}
}

// Cutoff is the first UTC day (yyyymmdd) kept on day today by a retention of days: the day
// itself and the days-1 before it.
func Cutoff(today time.Time, days int) string {
	return today.UTC().AddDate(0, 0, -(days - 1)).Format(DayLayout)
}
