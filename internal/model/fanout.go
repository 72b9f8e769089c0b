package model

import "time"

// FanoutClaim is the daily fan-out's record of one part of a day's work: a page of the
// websites listing, a website's share of a daily job, or a shard of a website's pages to
// audit. An attempt claims it before it queues anything and finishes it once all is queued;
// an attempt that stopped before finishing leaves it claimed until its lease ends, when the
// next attempt takes it over.
type FanoutClaim struct {
	// Attempt counts the attempts that claimed it: 1 for the first, more after takeovers.
	Attempt int
	// Started is when the first attempt claimed it.
	Started time.Time
	// Lease is until when the attempt holding it may still be working on it.
	Lease time.Time
	// Shards is, for a website's audits, how many shards its pages are split into that day
	// (fixed by the first attempt, so that a page stays in its shard all day).
	Shards int
	// Done tells that an attempt finished it; the fields below are what it queued.
	Done bool
	FanoutDone
}

// FanoutDone is what the attempt that finished a claim queued.
type FanoutDone struct {
	// Queued is when it queued its work.
	Queued time.Time
	// Count is how many messages it queued (websites for a page of the listing).
	Count int
	// Items name what it queued: a shard's page IDs, a website's runs.
	Items []string
	// Next is, for a page of the websites listing, the cursor of the page after it ("" for the
	// last page).
	Next string
}
