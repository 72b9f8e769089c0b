package model

import "time"

// MaxPagesPerCall is how many pages one CreatePages call may write: one transaction of
// DynamoDB holds at most 100 actions, and every page is one conditional put.
const MaxPagesPerCall = 100

// Devices are the devices a page is audited on and a multistep test runs on.
var Devices = []string{"desktop", "mobile"}

// Page is a monitored page of a website.
type Page struct {
	ID      string
	URL     string // path relative to the website's domain, starting with "/"
	Alias   string
	Created time.Time
}
