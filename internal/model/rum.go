package model

// RUMCell names one stored running-total table of real-user data: its UTC day (yyyymmdd), its
// dimension ("p" pages, "c" countries), its metric ("_n" for page views) and its shard.
type RUMCell struct {
	Day    string
	Dim    string
	Metric string
	Shard  int
}

// RUMTable is a stored running-total table: an encoded table (internal/rum owns the format),
// Applied, the IDs of the queue batches folded into it last (so that the same batch delivered
// again is not folded twice), and Version, which every write increments (0: never written).
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

// RUMSeenWindow is the span of collection times one record of folded page views covers.
const RUMSeenWindow = 10

// RUMSeen is the record of the page views collected in one window that were folded: Data holds
// entries of a view key and the tag of the batch that folded it (the rumworker package owns the
// format).
type RUMSeen struct {
	Window int64 // Unix second / RUMSeenWindow
	Data   []byte
}
