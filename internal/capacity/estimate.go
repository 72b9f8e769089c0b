package capacity

import (
	"fmt"
	"math"
	"time"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/fanout"
)

const (
	daySeconds  = 24 * 3600
	monthDays   = 30
	gb          = 1e9
	perSecondOf = 1.0 // a burst shorter than a second puts all its units into that second
)

// fanoutQueueRequests is what a fan-out message costs in SQS beyond its send, which the
// sender's work counts: the event source's receive and its delete.
const fanoutQueueRequests = 2

// auditQueueRequests is the same for an audit's message (the audit event source takes one
// message an invocation).
const auditQueueRequests = 2

// Line is one item of a month's bill.
type Line struct {
	Item    string
	Dollars float64
}

// Quota is an AWS account quota (per region) and what a size needs of it.
type Quota struct {
	Name            string
	Default, Needed float64
}

// Raise tells whether the default is too low.
func (q Quota) Raise() bool { return q.Needed > q.Default }

// Estimate is what a size asks of AWS.
type Estimate struct {
	Size         Size
	AuditsPerDay int
	// AuditWorkers is how many audit workers finish a day's audits within the window.
	AuditWorkers int
	// Fanout is the day's fan-out: from the scheduler's start to the last website's audits
	// queued; ListingPages the pages of the websites' listing it walked.
	Fanout       time.Duration
	ListingPages int
	// FanoutWrites and FanoutReads are the DynamoDB units a second during the fan-out;
	// Writes and Reads those during the audit window (audits and real users).
	FanoutWrites, FanoutReads float64
	Writes, Reads             float64
	// FanoutHottestWrites is the most write units a second into one partition during the
	// fan-out, and FanoutHottestBy what puts them there.
	FanoutHottestWrites float64
	FanoutHottestBy     string
	// HottestWrites and HottestReads are the units a second into the busiest partition during
	// the audit window: a website's, as its audits finish, AuditsTogether a second.
	HottestWrites, HottestReads, AuditsTogether float64
	// HottestItemWrites is the write units a second into the busiest item then, and
	// HottestItem its kind: what still holds once DynamoDB has split the busy partition by its
	// sort keys.
	HottestItemWrites                float64
	HottestItem                      string
	Month                            []Line
	Total, AuditLambda, PerPageMonth float64
	Quotas                           []Quota
}

// Estimate composes the measured units of work into what size asks of a deployment d, at
// prices p. It fails when no website share was measured at or above the size's pages.
func (m Measured) Estimate(size Size, d Deployment, p awsmeter.Prices) (Estimate, error) {
	share, ok := m.share(size.PagesPerWebsite)
	if !ok {
		return Estimate{}, fmt.Errorf("no website share of %d pages or more was measured", size.PagesPerWebsite)
	}
	if m.ListingWebsites <= 0 || m.Audit.Units <= 0 {
		return Estimate{}, fmt.Errorf("the listing or the audits were not measured")
	}
	e := Estimate{Size: size, AuditsPerDay: size.Pages() * d.Devices}
	window := d.AuditWindowHours * 3600
	e.AuditWorkers = int(math.Ceil(float64(e.AuditsPerDay) * d.AuditSeconds / window))
	listing, fan := m.fanout(&e, share, d)

	// The audits, spread over the window; the real users, over the month.
	auditOne := per(m.Audit)
	perWebsite := size.ViewsPerMonth / float64(size.Websites)
	rum := m.rumAt(perWebsite)
	monthSeconds := float64(monthDays * daySeconds)
	e.Writes = auditOne.writes*float64(e.AuditsPerDay)/window + rum.WriteUnits*float64(size.Websites)/monthSeconds
	e.Reads = auditOne.reads*float64(e.AuditsPerDay)/window + rum.ReadUnits*float64(size.Websites)/monthSeconds

	e.hottest(share, listing, auditOne, d)
	e.Month = m.month(&e, share, listing, fan, auditOne, rum, d, p)
	for _, l := range e.Month {
		e.Total += l.Dollars
	}
	e.PerPageMonth = e.Total / float64(size.Pages())

	// What the account must allow (AWS's default quotas, per region).
	s3PutsPerSecond := auditOne.s3Writes * e.AuditsTogether
	e.Quotas = []Quota{
		{"Lambda concurrent executions", 1000, float64(e.AuditWorkers + d.FanoutWorkers + d.OtherConcurrency)},
		{"DynamoDB table write units a second (on demand)", 40000, math.Max(e.Writes, e.FanoutWrites)},
		{"DynamoDB table read units a second (on demand)", 40000, math.Max(e.Reads, e.FanoutReads)},
		{"SQS messages in flight, the audit queue", 120000, float64(e.AuditWorkers)},
		{"S3 PUTs a second into one website's reports (a prefix)", 3500, s3PutsPerSecond},
	}
	return e, nil
}

// fanout estimates the daily fan-out: a page of the listing of as many websites as a page
// holds, at most the deployment's, costs what the measured one did per website. It returns a
// page of the listing's work and the whole fan-out's.
func (m Measured) fanout(e *Estimate, share unit, d Deployment) (listing, fan unit) {
	size := e.Size
	perPage := min(size.Websites, fanout.ListingPageSize)
	listing = per(m.Listing).times(float64(perPage) / float64(m.ListingWebsites))
	e.ListingPages = (size.Websites + fanout.ListingPageSize - 1) / fanout.ListingPageSize
	sched := per(m.Scheduler)
	e.Fanout = sched.took + fanoutTook(size.Websites, fanout.ListingPageSize, listing.took, share.took, d.FanoutWorkers)
	fan = sched.times(1)
	fan = add(fan, listing.times(float64(e.ListingPages)))
	fan = add(fan, share.times(float64(size.Websites)))
	if secs := e.Fanout.Seconds(); secs > 0 {
		e.FanoutWrites, e.FanoutReads = fan.writes/secs, fan.reads/secs
	}
	return listing, fan
}

// hottest estimates the busiest partitions. During the fan-out: a website's, which its
// share's claims write within the share's second, or the listing's claims'. During the audit
// window: a website's, which its audits write into as fast as they finish (the fan-out queues
// a website's audits together, so that up to all of them run at once when the workers are
// many).
func (e *Estimate) hottest(share, listing, auditOne unit, d Deployment) {
	inSecond := func(units float64, took time.Duration) float64 { return units / max(took.Seconds(), perSecondOf) }
	e.FanoutHottestWrites, e.FanoutHottestBy = inSecond(share.hotWrites, share.took), "a website's share"
	if l := inSecond(listing.hotWrites, listing.took); l > e.FanoutHottestWrites {
		e.FanoutHottestWrites, e.FanoutHottestBy = l, "a page of the listing"
	}
	e.AuditsTogether = float64(min(e.Size.PagesPerWebsite*d.Devices, e.AuditWorkers)) / d.AuditSeconds
	e.HottestWrites, e.HottestReads = auditOne.hotWrites*e.AuditsTogether, auditOne.hotReads*e.AuditsTogether
	e.HottestItemWrites, e.HottestItem = auditOne.hotItemWrites*e.AuditsTogether, auditOne.hotItem
}

// month is a month's bill, line by line; it sets e.AuditLambda, the audit worker's line.
func (m Measured) month(e *Estimate, share, listing, fan, auditOne unit, rum RUMMonth, d Deployment, p awsmeter.Prices) []Line {
	size := e.Size
	days := float64(monthDays)
	auditsMonth := float64(e.AuditsPerDay) * days
	gbSecondsAudit := d.AuditSeconds * float64(d.AuditMemoryMB) / 1024
	fanMessages := float64(size.Websites + e.ListingPages)
	fanGBs := (listing.took.Seconds()*float64(e.ListingPages) + share.took.Seconds()*float64(size.Websites)) * float64(d.FanoutMemoryMB) / 1024
	e.AuditLambda = auditsMonth * (gbSecondsAudit*p.LambdaGBSecond + p.LambdaRequest)
	return []Line{
		{fmt.Sprintf("audits: the audit worker's Lambda time (%d MB, %.0f s an audit)", d.AuditMemoryMB, d.AuditSeconds), e.AuditLambda},
		{"audits: DynamoDB writes (result, page summary, budgets, events)", auditsMonth * auditOne.writes * p.WriteUnit},
		{"audits: DynamoDB reads (website, page, profile, shard claim, follow-up)", auditsMonth * auditOne.reads * p.ReadUnit},
		{"audits: S3 requests (report, HTML report, HAR, diagnostics, images)", auditsMonth * (auditOne.s3Writes*p.S3Write + auditOne.s3Reads*p.S3Read)},
		{"audits: SQS (the event source's receive and delete, and what an audit sends)", auditsMonth * (auditOne.sqs + auditQueueRequests) * p.SQSStandard},
		{"daily fan-out: DynamoDB (claims, listing, pages)", days * (fan.writes*p.WriteUnit + fan.reads*p.ReadUnit)},
		{"daily fan-out: SQS (audits ten to a request, its own messages)", days * (fan.sqs + fanMessages*fanoutQueueRequests) * p.SQSStandard},
		{"daily fan-out: Lambda", days * (fanGBs*p.LambdaGBSecond + (fanMessages+1)*p.LambdaRequest)},
		{fmt.Sprintf("storage: lab results in DynamoDB, kept %d days", d.HistoryDays), m.DynamoDBBytes * float64(e.AuditsPerDay) * float64(d.HistoryDays) / gb * p.DynamoDBGBMonth},
		{fmt.Sprintf("storage: reports in S3, kept %d days", d.ReportRetentionDays), m.S3Bytes * float64(e.AuditsPerDay) * float64(d.ReportRetentionDays) / gb * p.S3GBMonth},
		{"real users: entry, queues, Lambda, DynamoDB and S3 requests", rum.Bill.Total() * float64(size.Websites)},
		{fmt.Sprintf("real users: storage in S3, kept %d days", d.RUMRetentionDays), rum.StoredGB * float64(size.Websites) * float64(d.RUMRetentionDays) / monthDays * p.S3GBMonth},
	}
}

func add(a, b unit) unit {
	return unit{
		writes: a.writes + b.writes, reads: a.reads + b.reads,
		hotWrites: max(a.hotWrites, b.hotWrites), hotReads: max(a.hotReads, b.hotReads),
		hotItemWrites: max(a.hotItemWrites, b.hotItemWrites),
		s3Writes:      a.s3Writes + b.s3Writes, s3Reads: a.s3Reads + b.s3Reads, sqs: a.sqs + b.sqs,
		gbSeconds: a.gbSeconds + b.gbSeconds, requests: a.requests + b.requests, took: a.took + b.took,
	}
}
