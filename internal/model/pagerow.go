package model

import "errors"

// PageRow is a page's entry in the pages lists: its settings and a summary of its recent
// results. Rows are keyed in the order pages were added, so that a list, or a window of it, is
// one query whatever the number of pages, instead of a read of every page item and a query per
// page and device. The summary is opaque here: the metrics package makes and reads it.
//
// A row is written with its page (in the same transaction), changed with it and deleted with
// it; a summary is only ever written into an existing row, so a worker that finishes after a
// deletion leaves no row behind.
type PageRow struct {
	Page Page
	// Summary is nil until the page's first summary is written.
	Summary []byte
	// Opportunities are those of the page's latest results with their savings, written with
	// the summary but apart from it, so that the website's opportunities read the rows without
	// their days; nil until the summary is written with them.
	Opportunities []byte
	// Version counts the summary's writes, for PutPageSummary's check.
	Version int
}

// ErrChanged means an item changed between its read and a write that depended on it.
var ErrChanged = errors.New("changed meanwhile")
