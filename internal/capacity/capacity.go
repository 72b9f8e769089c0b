// Package capacity is openvitals' capacity model: what a deployment of a given size asks of
// AWS in a day and a month. It composes what the real code was measured to ask for one unit of
// each kind of work (the day's start, a page of the websites' listing, a website's share of
// the daily fan-out, an audit's stored result and its follow-up, a month of a website's real
// users) with the deployment's sizing, and prices it at AWS list prices. The measuring is
// BenchmarkCapacity's (the real scheduler, fan-out worker, audit worker and store over the
// stand-ins, through internal/awsmeter, with AWS's request latencies added); the composition
// here is arithmetic and a queue simulation of the fan-out's workers, so that a size of ten
// million pages is estimated from work that was done for real on a few thousand.
package capacity

import (
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/awsmeter"
)

// Size is a deployment's load: its websites, each of as many pages, audited daily on both
// devices, and the page views its real users send in a month, spread evenly over the websites.
type Size struct {
	Name            string
	Websites        int
	PagesPerWebsite int
	ViewsPerMonth   float64
}

// Pages is the deployment's pages.
func (s Size) Pages() int { return s.Websites * s.PagesPerWebsite }

// Sizes are the three sizes the model is published at.
var Sizes = []Size{
	{Name: "100 websites × 50 pages, 10M views a month", Websites: 100, PagesPerWebsite: 50, ViewsPerMonth: 10e6},
	{Name: "2,000 × 200, 300M views", Websites: 2000, PagesPerWebsite: 200, ViewsPerMonth: 300e6},
	{Name: "10,000 × 1,000, 3B views", Websites: 10000, PagesPerWebsite: 1000, ViewsPerMonth: 3e9},
}

// Deployment is the sizing of the stack that matters here; DefaultDeployment holds the
// stack's defaults (infra/, checked by the tests).
type Deployment struct {
	Devices int
	// AuditSeconds is an audit's duration in Lambda (auditSeconds), AuditMemoryMB the audit
	// worker's memory; AuditWindowHours the hours the day's audits are spread over.
	AuditSeconds     float64
	AuditMemoryMB    int
	AuditWindowHours float64
	// FanoutWorkers is the fan-out worker's maximum concurrency, FanoutMemoryMB its memory.
	FanoutWorkers  int
	FanoutMemoryMB int
	// ReportRetentionDays is how long the reports stay in S3; HistoryDays how long the lab
	// results stay in DynamoDB; RUMRetentionDays how long the real users' day objects stay.
	ReportRetentionDays, HistoryDays, RUMRetentionDays int
	// OtherConcurrency is what the other functions may take of the account's concurrent
	// executions at once (the API, the fan-out, multistep, notify, the real-user functions).
	OtherConcurrency int
}

// DefaultDeployment is the stack as deployed without settings.
func DefaultDeployment() Deployment {
	return Deployment{
		Devices: 2, AuditSeconds: 70, AuditMemoryMB: 3008, AuditWindowHours: 20,
		FanoutWorkers: 20, FanoutMemoryMB: 256,
		ReportRetentionDays: 90, HistoryDays: 731, RUMRetentionDays: 400,
		OtherConcurrency: 100,
	}
}

// Work is what some units of one kind of work asked of AWS in all, and how long they took
// one after another (with AWS's latencies).
type Work struct {
	Usage awsmeter.Usage
	Took  time.Duration
	Units int
}

// unit is one unit of a work, in floats: what it asked on average.
type unit struct {
	writes, reads       float64 // DynamoDB units
	hotWrites, hotReads float64 // units into its busiest partition
	hotItemWrites       float64 // units into its busiest item
	hotItem             string  // that item's kind: its sort key's first part
	s3Writes, s3Reads   float64
	sqs                 float64 // standard requests
	gbSeconds, requests float64 // Lambda, when the work was metered as invocations
	took                time.Duration
}

// per is the work's average unit.
func per(w Work) unit {
	n := float64(max(w.Units, 1))
	u := w.Usage
	return unit{
		writes: u.WriteUnits / n, reads: u.ReadUnits / n,
		hotWrites: hottest(u.WriteUnitsByKey) / n, hotReads: hottest(u.ReadUnitsByKey) / n,
		hotItemWrites: hottest(u.WriteUnitsByItem) / n, hotItem: itemKind(u.WriteUnitsByItem),
		s3Writes: float64(u.S3Writes) / n, s3Reads: float64(u.S3Reads) / n,
		sqs:       float64(u.SQSStandard) / n,
		gbSeconds: u.LambdaGBSeconds / n, requests: float64(u.LambdaRequests) / n,
		took: time.Duration(float64(w.Took) / n),
	}
}

// times is f units.
func (u unit) times(f float64) unit {
	return unit{
		writes: u.writes * f, reads: u.reads * f, hotWrites: u.hotWrites * f, hotReads: u.hotReads * f,
		hotItemWrites: u.hotItemWrites * f, hotItem: u.hotItem,
		s3Writes: u.s3Writes * f, s3Reads: u.s3Reads * f, sqs: u.sqs * f,
		gbSeconds: u.gbSeconds * f, requests: u.requests * f, took: time.Duration(float64(u.took) * f),
	}
}

// itemKind names the item ("PK SK") that took the most units by its sort key's first part
// ("LAB" of "LAB#page#device#day").
func itemKind(m map[string]float64) string {
	top, kind := 0.0, ""
	for k, v := range m {
		if v > top {
			top = v
			_, sk, _ := strings.Cut(k, " ")
			kind, _, _ = strings.Cut(sk, "#")
		}
	}
	return kind
}

// hottest is the most units any one partition took.
func hottest(m map[string]float64) float64 {
	top := 0.0
	for _, v := range m {
		top = max(top, v)
	}
	return top
}

// RUMMonth is a month of one website's real users at a traffic, as BenchmarkRUMCost
// measured it (the real rebatcher and aggregator over the stand-ins, metered).
type RUMMonth struct {
	ViewsPerMonth float64 `json:"viewsPerMonth"`
	// Bill is the month's requests priced at list prices (the entry, SQS, Lambda, DynamoDB,
	// S3 requests); WriteUnits and ReadUnits the month's DynamoDB units in it.
	Bill       awsmeter.Bill `json:"bill"`
	WriteUnits float64       `json:"writeUnits"`
	ReadUnits  float64       `json:"readUnits"`
	// StoredGB is what a month of its views adds to the RUM bucket.
	StoredGB float64 `json:"storedGB"`
}

// Measured is what the real code asked for one unit of each kind of work.
type Measured struct {
	// Scheduler is the day's start: the scheduler's handler, once a day.
	Scheduler Work
	// Listing is a page of the websites' listing, of ListingWebsites websites (the page size,
	// fanout.ListingPageSize, unless fewer were measured).
	Listing         Work
	ListingWebsites int
	// Shares are a website's share of the day's audits, by its pages.
	Shares map[int]Work
	// Audit is an audit's storing and follow-up (DynamoDB, S3; not Lighthouse's time, which
	// the deployment's AuditSeconds prices), and StoredBytes what one audit leaves in
	// DynamoDB (awsmeter.ItemBytes) and in S3.
	Audit                  Work
	DynamoDBBytes, S3Bytes float64
	// RUM are months of a website's real users at two traffics or more, in order.
	RUM []RUMMonth
}

// rumAt is a month of a website at views a month, linear between (and beyond) the two
// nearest measured traffics: a compaction's cost is the same whatever the traffic, the entry
// grows with the views, so a straight line through two traffics fits both parts.
func (m Measured) rumAt(views float64) RUMMonth {
	if len(m.RUM) == 0 || views <= 0 {
		return RUMMonth{}
	}
	if len(m.RUM) == 1 {
		f := views / m.RUM[0].ViewsPerMonth
		r := m.RUM[0]
		return RUMMonth{ViewsPerMonth: views, Bill: r.Bill.Scale(f), WriteUnits: r.WriteUnits * f, ReadUnits: r.ReadUnits * f, StoredGB: r.StoredGB * f}
	}
	i := 0
	for i < len(m.RUM)-2 && views > m.RUM[i+1].ViewsPerMonth {
		i++
	}
	a, b := m.RUM[i], m.RUM[i+1]
	t := (views - a.ViewsPerMonth) / (b.ViewsPerMonth - a.ViewsPerMonth)
	lerp := func(x, y float64) float64 { return max(0, x+(y-x)*t) }
	return RUMMonth{
		ViewsPerMonth: views,
		Bill: awsmeter.Bill{
			DynamoDBWrites: lerp(a.Bill.DynamoDBWrites, b.Bill.DynamoDBWrites), DynamoDBReads: lerp(a.Bill.DynamoDBReads, b.Bill.DynamoDBReads),
			S3Requests: lerp(a.Bill.S3Requests, b.Bill.S3Requests), SQS: lerp(a.Bill.SQS, b.Bill.SQS),
			LambdaRequests: lerp(a.Bill.LambdaRequests, b.Bill.LambdaRequests), LambdaCompute: lerp(a.Bill.LambdaCompute, b.Bill.LambdaCompute),
			APIGateway: lerp(a.Bill.APIGateway, b.Bill.APIGateway),
		},
		WriteUnits: lerp(a.WriteUnits, b.WriteUnits), ReadUnits: lerp(a.ReadUnits, b.ReadUnits), StoredGB: lerp(a.StoredGB, b.StoredGB),
	}
}

// share is a website's share of pages: the one measured at that many pages, or the nearest
// larger one measured (a conservative stand-in).
func (m Measured) share(pages int) (unit, bool) {
	best := -1
	for p := range m.Shares {
		if p >= pages && (best < 0 || p < best) {
			best = p
		}
	}
	if best < 0 {
		return unit{}, false
	}
	return per(m.Shares[best]), true
}

// fanoutTook is how long the day's fan-out takes from its start to its last website's
// audits queued: the listing's pages one after another (each queues its websites' messages
// when it is done), the websites' shares taken by workers workers, first come first served.
func fanoutTook(websites, perPage int, listing, share time.Duration, workers int) time.Duration {
	if websites == 0 {
		return 0
	}
	free := make([]time.Duration, max(workers, 1)) // when each worker is free again
	end := time.Duration(0)
	for i := range websites {
		arrival := time.Duration(i/perPage+1) * listing
		// The worker free first: workers are few (tens), so a scan is as quick as a heap.
		w := 0
		for j := range free {
			if free[j] < free[w] {
				w = j
			}
		}
		start := max(arrival, free[w])
		free[w] = start + share
		end = max(end, free[w])
	}
	return end
}
