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
	// RegressionsBySubject tells that each of the website's regressions is kept under its page's
	// or test's keys too, where that page's or test's are read in one query; a website stored
	// before gets them from EnsureRegressionsBySubject.
	RegressionsBySubject bool
	// Method is how the pages no profile gives a method are measured. Websites created since
	// methods exist are MethodApplied; "" (stored before) reads as MethodSimulated, so that an
	// existing website keeps its method until an admin switches (with a default profile).
	Method string `dynamodbav:",omitempty"`
}

// SiteRef names a website of an account.
type SiteRef struct {
	Account string
	Website string
}
