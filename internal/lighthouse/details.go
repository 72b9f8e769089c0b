package lighthouse

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Node is a DOM element as Lighthouse describes it.
type Node struct {
	Selector string `json:"selector"`
	Snippet  string `json:"snippet"`
	Label    string `json:"nodeLabel"`
}

// LongTask is one long task of the main thread, as long-tasks lists it.
type LongTask struct {
	URL       string  `json:"url"`
	StartTime float64 `json:"startTime"`
	Duration  float64 `json:"duration"`
}

// items decodes the items of an audit's details (a table or a list); none when the audit is
// missing or its details have another shape.
func items[T any](l *lhr, audit string) []T {
	var d struct {
		Items []T `json:"items"`
	}
	if json.Unmarshal(l.Audits[audit].Details, &d) != nil {
		return nil
	}
	return d.Items
}

var srcAttribute = regexp.MustCompile(`\ssrc="([^"]+)"`)

// imageSource is the src of an img snippet ("" for other elements).
func imageSource(snippet string) string {
	if !strings.HasPrefix(snippet, "<img") {
		return ""
	}
	if m := srcAttribute.FindStringSubmatch(snippet); m != nil {
		return m[1]
	}
	return ""
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
