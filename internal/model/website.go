package model

import "time"

// Website is a monitored website of an account.
type Website struct {
	ID          string
	Account     string
	Domain      string
	DisplayName string
	Created     time.Time
	// PageRows tells that each of the website's pages has its row (PageRow); a website stored
	// before rows existed gets them from EnsurePageRows.
	PageRows bool
	// RowMarks are the keys (PageOrderKey) that split the website's rows into segments of
	// about the same size, which PageRows reads in parallel; made as pages are added.
	RowMarks []string
}

// SiteRef names a website of an account.
type SiteRef struct {
	Account string
	Website string
}
