package store

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Every item of the single table is addressed by a string partition key (PK) and sort key (SK).
// All key shapes live in this file so that a purge can rely on them: everything that belongs to
// a website sits in the website's partition, and everything that belongs to a page or a test in
// that partition starts with the page's or test's prefix.

const (
	attrPK = "PK"
	attrSK = "SK"

	// purgePK holds one marker per pending purge, so that a purge whose queue message was lost
	// can be found and sent again.
	purgePK = "PURGE"

	// pendingPK holds one marker per piece of queued work whose status clients see (a test
	// series' test, a multistep run) while it has no outcome, so that work whose queue message
	// was lost is found with one query, then ended or queued again.
	pendingPK = "PENDING"

	skAccount = "ACCOUNT"
	skAPIKey  = "KEY"
	// skLimits holds the limits an operator set for an account.
	skLimits = "LIMITS"
)

// accountPK is the partition of an account's own items: the account, its websites and the
// domain locks that keep domains unique within the account.
func accountPK(account string) string { return "A#" + account }

// websitePK is the partition of everything that belongs to one website.
func websitePK(account, website string) string { return "A#" + account + "#W#" + website }

func apiKeyPK(hash string) string { return "KEY#" + hash }

func websiteSK(website string) string { return "W#" + website }

// usageSK counts an account's use of a daily limit on one UTC day.
func usageSK(counter, day string) string { return "USE#" + counter + "#" + day }

func domainSK(domain string) string { return "DOMAIN#" + domain }

// pageSK keys a page's settings item by its URL (hashed, as URLs may be longer than a sort key),
// so that a conditional put alone keeps URLs unique within a website.
func pageSK(url string) string {
	sum := sha256.Sum256([]byte(url))
	return pageSKPrefix + base64.RawURLEncoding.EncodeToString(sum[:18])
}

const (
	pageSKPrefix   = "PAGE#"
	budgetSKPrefix = "BUDGET#"
	testSKPrefix   = "TEST#"
	// profileSKPrefix starts a test profile's key (see model.Profile).
	profileSKPrefix = "PROFILE#"
)

func profileSK(id string) string { return profileSKPrefix + id }

func budgetSK(id string) string { return budgetSKPrefix + id }

// budgetTallySK keys a budget's tally of its pages and devices off it, and budgetEntrySK each
// of those, beside the budget's state (BudgetState), so that its entries are one query and its
// tally and entries one prefix (budgetTallyPrefix).
func budgetTallySK(budget string) string { return budgetTallyPrefix(budget) + "TALLY" }

func budgetEntrySK(budget, page, device string) string {
	return budgetEntryPrefix(budget) + page + "#" + device
}

func budgetTallyPrefix(budget string) string { return budgetStatePrefix + budget + "#" }

func budgetEntryPrefix(budget string) string { return budgetTallyPrefix(budget) + "E#" }

func testSK(id string) string { return testSKPrefix + id }

// pageRowPrefix starts the sort keys of the pages' rows (see PageRow): ordered as the pages
// were added, so that the pages lists, or a window of them, are one query.
const pageRowPrefix = "ROW#"

// PageOrderKey orders pages as they were added: their creation time, then their ID. It is the
// cursor of the pages lists.
func PageOrderKey(p model.Page) string {
	return p.Created.UTC().Format("20060102T150405.000000000") + "|" + p.ID
}

func pageRowSK(p model.Page) string { return pageRowPrefix + PageOrderKey(p) }

// PageItemsPrefix is the sort-key prefix of every result item that belongs to a page
// (audits, opportunities and the like, written by later stages).
func PageItemsPrefix(page string) string { return "P#" + page + "#" }

// pagePointerSK keys the item that points from a page's ID to its URL.
func pagePointerSK(page string) string { return PageItemsPrefix(page) + "URL" }

// TestItemsPrefix is the sort-key prefix of every item that belongs to a multistep test's runs.
func TestItemsPrefix(test string) string { return "T#" + test + "#" }

func purgeSK(j model.PurgeJob) string {
	sk := j.Account + "#" + j.Website
	switch {
	case j.Page != "":
		sk += "#P#" + j.Page
	case j.Test != "":
		sk += "#T#" + j.Test
	case j.Experiment != "":
		sk += "#X#" + j.Experiment
	}
	return sk
}

// pendingSeriesTestSK and pendingRunSK key the pending markers of a series' test and of a
// multistep run; each starts with its website's pendingWebsitePrefix (its test's
// pendingTestPrefix for a run), so that a purge removes them with the website or the test.
func pendingSeriesTestSK(account, website, test string) string {
	return pendingWebsitePrefix(account, website) + "S#" + test
}

func pendingRunSK(account, website, test string, created time.Time, run string) string {
	return pendingTestPrefix(account, website, test) + created.UTC().Format(runTimeLayout) + "#" + run
}

func pendingWebsitePrefix(account, website string) string { return account + "#" + website + "#" }

func pendingTestPrefix(account, website, test string) string {
	return pendingWebsitePrefix(account, website) + "R#" + test + "#"
}

// sitesPK holds one entry per website of every account, so that the daily scheduler finds all
// websites with one query instead of a table scan.
const sitesPK = "SITES"

func siteEntrySK(account, website string) string { return account + "#" + website }

// sitePointerPK is the partition of a website's pointer item (its account and domain by ID).
func sitePointerPK(website string) string { return "SITE#" + website }

const sitePointerSK = "SITE"

// RUM rollups live in the website's partition. rumIndexSK holds a month's index (the days
// that have running totals, the custom variable names); rumCellSK one running-total table of a
// day, dimension (p: pages, c: countries), metric ("_n": page views) and shard.
func rumIndexSK(month string) string { return "RUM#IX#" + month }

func rumDayPrefix(day string) string { return "RUM#C#" + day + "#" }

// rumDistinctSK holds a day's HyperLogLog of the page keys seen that day (not a running total:
// distinct counts do not subtract).
func rumDistinctSK(day string) string { return "RUM#H#" + day }

// Before day objects (internal/rumstore), a website's partition also held the IDs of the
// page views folded per 10 seconds of collection (RUM#V#...) and a mark per aggregator batch
// folded (RUM#B#...); they expired after 15 days and nothing writes them now.

func rumCellSK(c model.RUMCell) string {
	if c.Daily {
		return fmt.Sprintf("%s%s#%s#%02d", rumDailyPrefix(c.Day), c.Dim, c.Metric, c.Shard)
	}
	return fmt.Sprintf("%s%s#%s#%02d", rumDayPrefix(c.Day), c.Dim, c.Metric, c.Shard)
}

// rumDailyPrefix starts the keys of a day's segment and attribution tables, which hold that
// day's views only: outside rumDayPrefix, so that a new day's copy of the running totals
// leaves them out.
func rumDailyPrefix(day string) string { return "RUM#D#" + day + "#" }

// rumDaySK points at the object holding a day's tables (internal/rumstore), which replaced the
// items above: those of days before it are still read where a day has no pointer.
func rumDaySK(day string) string { return "RUM#F#" + day }

// rumLogSK keys an entry of a website's log of page views waiting to be folded: its key starts
// with the Unix millisecond it was written, so the log reads in order; rumLogEnd sorts after
// every entry. rumLogMarkSK records how far the log was folded.
func rumLogSK(key string) string { return "RUM#L#" + key }

const (
	rumLogEnd    = "RUM#L$"
	rumLogMarkSK = "RUM#LM"
)

// rumSettingsSK holds a website's real-user monitoring settings (page groups, sample rate).
const rumSettingsSK = "RUM#SET"

// labSK keys a page's lab result of one device and UTC day (yyyymmdd), so that a range of days
// is one query and a re-audit the same day replaces the item.
func labSK(page, device, day string) string {
	return PageItemsPrefix(page) + "LAB#" + device + "#" + day
}

// labErrorSK keys the last error of a page's audits on one device.
func labErrorSK(page, device string) string { return PageItemsPrefix(page) + "ERR#" + device }

// FanoutKey names one claim of the daily fan-out (see model.FanoutClaim).
type FanoutKey struct{ pk, sk string }

// ListingFanoutKey names the claim of page n (from 0) of the websites listing that the
// fan-out of a day's job walks. A day's listing claims share a partition of their own
// ("FANOUT#<day>": a few writes a day); their keys name no website, so that none is left
// naming a deleted one.
func ListingFanoutKey(day, job string, n int) FanoutKey {
	return FanoutKey{"FANOUT#" + day, fmt.Sprintf("%s#%06d", job, n)}
}

// WebsiteFanoutKey names the claim of a website's share of a day's job (part "") or of a
// part of that share (part "0003": a shard of its pages). They live in the website's
// partition, which spreads the fan-out's writes over as many partitions as there are
// websites, and its purge removes them.
func WebsiteFanoutKey(w model.SiteRef, day, job, part string) FanoutKey {
	sk := fanoutSKPrefix + day + "#" + job
	if part != "" {
		sk += "#" + part
	}
	return FanoutKey{websitePK(w.Account, w.Website), sk}
}

const fanoutSKPrefix = "FANOUT#"

// opportunitySK records the first day an opportunity was seen on a website.
func opportunitySK(auditID string) string { return "OPP#" + auditID }

// runSK keys a multistep run by its test and creation time, so that a test's runs are one
// query, newest first when read backwards.
func runSK(test string, created time.Time, id string) string {
	return TestItemsPrefix(test) + "RUN#" + created.UTC().Format(runTimeLayout) + "#" + id
}

// runTimeLayout sorts as text in time order.
const runTimeLayout = "20060102T150405.000000000Z"

// testQueuedSK marks that a test's daily run was queued for a UTC day.
func testQueuedSK(test, day string) string { return TestItemsPrefix(test) + "QUEUED#" + day }

// uxSK keys a page's user-experience dataset record of one device and UTC day, like labSK.
func uxSK(page, device, day string) string {
	return PageItemsPrefix(page) + "UX#" + device + "#" + day
}

// searchSK keys a page's search analytics of the 14 days up to a UTC day of collection.
func searchSK(page, day string) string { return PageItemsPrefix(page) + "SEARCH#" + day }

// integrationSK keys a website's integration of one kind ("search-console").
func integrationSK(kind string) string { return "INTEGRATION#" + kind }

// uxRunSK records how a website's daily user-experience data collection of a UTC day went.
func uxRunSK(day string) string { return "UX#RUN#" + day }

// regressionSK keys a change of level found in one of a website's series; its ID starts with
// the first bad day, so the website's regressions list newest first.
func regressionSK(id string) string { return regressionSKPrefix + id }

const regressionSKPrefix = "RG#"

// subjectRegressionPrefix starts the keys of the copies of a page's regressions, or a test's
// (when test is set), kept under its own items: its regressions, newest first, are one query,
// and go with its purge.
func subjectRegressionPrefix(page, test string) string {
	if test != "" {
		return TestItemsPrefix(test) + regressionSKPrefix
	}
	return PageItemsPrefix(page) + regressionSKPrefix
}

// regressionThresholdsSK keys a website's own least changes for regression detection.
const regressionThresholdsSK = "RGCONF"

// annotationSK keys an annotation by its time, then ID.
func annotationSK(at time.Time, id string) string {
	return annotationSKPrefix + at.UTC().Format("20060102T150405.000000000") + "#" + id
}

const annotationSKPrefix = "ANN#"

// seriesSK keys a test series by its ID, which starts with its creation time: a website's
// series list newest first in one query. seriesTestSK keys a series' n-th test, under a prefix
// of its own so that the series list reads series only.
func seriesSK(id string) string { return seriesSKPrefix + id }

func seriesTestSK(series string, n int) string {
	return fmt.Sprintf("%s%s#%04d", seriesTestSKPrefix, series, n)
}

const (
	seriesSKPrefix     = "TS#"
	seriesTestSKPrefix = "TT#"
)

// experimentSKPrefix starts an experiment's key (see model.Experiment).
const experimentSKPrefix = "EXPERIMENT#"

func experimentSK(id string) string { return experimentSKPrefix + id }

// uxHistorySK keys the user-experience dataset's weekly history of a page on a device, or with
// page "" of the website's origin.
func uxHistorySK(page, device string) string {
	if page == "" {
		return "UXH#ORIGIN#" + device
	}
	return PageItemsPrefix(page) + "UXH#" + device
}

// verdictSK keys the field verdict of an incident; the website's are read in one query.
func verdictSK(incident string) string { return "VERDICT#" + incident }
