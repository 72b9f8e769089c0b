package model

// RUMCell names one stored table of real-user data: its UTC day (yyyymmdd), its dimension
// ("p" pages, "c" countries, or a segment or attribution table), its metric ("_n" for page
// views) and its shard.
type RUMCell struct {
	Day    string
	Dim    string
	Metric string
	Shard  int
	// Daily tells that the table holds the day's own views (segment and attribution tables),
	// not a running total since the first of the month; a daily table is never copied to a
	// later day.
	Daily bool
}

// RUMTable is a stored table: an encoded table (internal/rollup owns the format), Applied, the
// log entries its day was last written with (so that an entry folded again is not folded
// twice), and Version, which items written before day objects carried.
type RUMTable struct {
	Data    []byte
	Applied []string
	Version int64
}

// RUMIndex is a month's index of a website's rollups: the days (yyyymmdd, ascending) that
// have running totals, and the custom variable names seen.
type RUMIndex struct {
	Month  string
	Days   []string
	Custom []string
}

// LabUserAgentMark ends the user agent of every page load openvitals' own browsers make
// (Lighthouse audits, multistep runs, navigation timing), so that the RUM snippet and the
// collect endpoint tell those loads from real users' and never count them.
const LabUserAgentMark = "OpenVitals-Lab/1"

// RUMSettings are a website's choices for real-user monitoring.
type RUMSettings struct {
	// Groups are the page groups, matched in order against a view's page path: the first
	// whose pattern matches is the view's group.
	Groups []PageGroup
	// SampleRate is the share of page views the snippet sends (1/SampleRate is a whole
	// number); each view sent counts 1/SampleRate times. 0 means 1.
	SampleRate float64
	// ExcludeLabAgents drops the views of other known lab agents (synthetic monitors,
	// automated browsers); openvitals' own are always dropped.
	ExcludeLabAgents bool
	// GroupNames names every group ID ever given, so that reports over days when a removed
	// group still matched can name it.
	GroupNames map[int]string
}

// PageGroup is a URL pattern a website defines: ID is stable across edits of the list (the
// rollups keep it), Pattern a path where * matches any run of characters.
type PageGroup struct {
	ID      int
	Name    string
	Pattern string
}

// Weight is how many page views one sent view stands for.
func (s RUMSettings) Weight() uint64 {
	if s.SampleRate <= 0 || s.SampleRate >= 1 {
		return 1
	}
	return uint64(1/s.SampleRate + 0.5)
}

// RUMDay points at the object holding a website's real-user tables of one UTC day (yyyymmdd):
// its generation (each compaction writes a new one) and key, the key of the generation before,
// its directory (where each table lies in it; internal/rumstore owns the format) and its size
// in bytes.
type RUMDay struct {
	Day          string
	Gen          int64
	Object, Prev string
	Dir          []byte
	Size         int64
}

// RUMChunk is one entry of a website's log of page views not yet folded into its day
// objects: Key orders it (the Unix millisecond it was written, then an ID), Views counts its
// views, and its encoded views are in Data or, when large, in the object named Object.
type RUMChunk struct {
	Account, Website string
	Key              string
	Views            int
	Data             []byte
	Object           string
}

// RUMLogMark is how far a website's log was folded: the chunks with keys from From on that are
// not in Done have not been.
type RUMLogMark struct {
	From string
	Done []string
}
