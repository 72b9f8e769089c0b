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

// Site is the website r names; a type that embeds a SiteRef names its website by it.
func (r SiteRef) Site() SiteRef { return r }

// WebsiteRequest asks for a new website; nil means omitted.
type WebsiteRequest struct {
	Domain      *string `json:"domain"`
	DisplayName *string `json:"displayName"`
	Method      *string `json:"method"`
}

// Website checks the request and returns the website of account it asks for. domain checks
// a domain and returns it normalized, or what is wrong with it: which domains a deployment
// takes is its own (a local one takes IP addresses and ports).
func (in WebsiteRequest) Website(account string, domain func(string) (normalized, problem string)) (Website, error) {
	var errs FieldErrors
	// A new website is measured with applied throttling unless asked otherwise; one stored
	// before methods has none, which reads as simulated (MethodOr).
	site := Website{Account: account, Method: MethodApplied}
	if in.Method != nil {
		if err := CheckMethod(*in.Method); err != nil {
			errs.Add("method", "%s", err)
		}
		site.Method = *in.Method
	}
	if in.Domain == nil {
		errs.Add("domain", "is required")
	} else if d, msg := domain(*in.Domain); msg != "" {
		errs.Add("domain", "%s", msg)
	} else {
		site.Domain = d
	}
	site.DisplayName = site.Domain
	// An empty displayName counts as omitted: it defaults to the domain.
	if in.DisplayName != nil && *in.DisplayName != "" {
		if msg := CheckName(*in.DisplayName); msg != "" {
			errs.Add("displayName", "%s", msg)
		}
		site.DisplayName = *in.DisplayName
	}
	return site, errs.Err()
}
