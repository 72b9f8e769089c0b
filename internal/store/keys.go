package store

import (
	"crypto/sha256"
	"encoding/base64"
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

	skAccount = "ACCOUNT"
	skAPIKey  = "KEY"
)

// accountPK is the partition of an account's own items: the account, its websites and the
// domain locks that keep domains unique within the account.
func accountPK(account string) string { return "A#" + account }

// websitePK is the partition of everything that belongs to one website.
func websitePK(account, website string) string { return "A#" + account + "#W#" + website }

func apiKeyPK(hash string) string { return "KEY#" + hash }

func websiteSK(website string) string { return "W#" + website }

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
)

func budgetSK(id string) string { return budgetSKPrefix + id }

func testSK(id string) string { return testSKPrefix + id }

// PageItemsPrefix is the sort-key prefix of every result item that belongs to a page
// (audits, opportunities and the like, written by later stages).
func PageItemsPrefix(page string) string { return "P#" + page + "#" }

// TestItemsPrefix is the sort-key prefix of every item that belongs to a multistep test's runs.
func TestItemsPrefix(test string) string { return "T#" + test + "#" }

func purgeSK(j PurgeJob) string {
	sk := j.Account + "#" + j.Website
	switch {
	case j.Page != "":
		sk += "#P#" + j.Page
	case j.Test != "":
		sk += "#T#" + j.Test
	}
	return sk
}
