package model

import "time"

// ReportLink lets whoever holds its token read one stored Lighthouse HTML report until it
// expires: a browser frame cannot send the API key, so the dashboard asks for a link with the
// key and frames the link. Only the token's hash is stored.
type ReportLink struct {
	Account, Website string
	// Page is the page whose report it opens (none in links made before it was recorded).
	Page string
	// Key is the report's object key in the bucket.
	Key     string
	Expires time.Time
}
