package lighthouse

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Facts are what a Lighthouse report says about how a page loaded, beyond its metrics: what
// comparing two reports of a page needs to say what changed (internal/regression).
type Facts struct {
	*Report
	// LCPElement is the largest contentful paint's element (selector and HTML snippet), and
	// LCPResource the URL of the image it shows, if any.
	LCPElement  Node
	LCPResource string
	// Requests are the page's network requests in the order they started.
	Requests []Request
	// RenderBlocking are the render-blocking requests by URL (render-blocking-insight).
	RenderBlocking map[string]Blocking
	// ScriptTime is main-thread time (ms) by script URL (bootup-time's total).
	ScriptTime map[string]float64
	// LongTasks are the main thread's long tasks (long-tasks), with the script they ran.
	LongTasks []LongTask
	// Shifts are the layout shifts' elements and scores (layout-shifts).
	Shifts []Shift
}

// Node is a DOM element as Lighthouse describes it.
type Node struct {
	Selector string `json:"selector"`
	Snippet  string `json:"snippet"`
	Label    string `json:"nodeLabel"`
}

// Request is one network request.
type Request struct {
	URL          string  `json:"url"`
	ResourceType string  `json:"resourceType"`
	TransferSize float64 `json:"transferSize"`
	Entity       string  `json:"entity"`
	// ThirdParty tells whether it came from another site than the page's own (Lighthouse's
	// entities; by host when the report has none).
	ThirdParty bool `json:"-"`
}

// Blocking is a render-blocking request: its bytes and how long it held the first paint.
type Blocking struct {
	Bytes    float64 `json:"totalBytes"`
	WastedMs float64 `json:"wastedMs"`
}

// LongTask is one long task of the main thread.
type LongTask struct {
	URL       string  `json:"url"`
	StartTime float64 `json:"startTime"`
	Duration  float64 `json:"duration"`
}

// Shift is one layout shift's element and score.
type Shift struct {
	Node  Node
	Score float64
}

// ReadFacts reads a report's facts from its JSON (lhr).
func ReadFacts(raw []byte) (*Facts, error) {
	l, err := decodeLHR(raw)
	if err != nil {
		return nil, err
	}
	rep := l.report()
	f := &Facts{Report: rep, RenderBlocking: map[string]Blocking{}, ScriptTime: map[string]float64{}}

	// The LCP element: the node of lcp-breakdown-insight's list (or lcp-discovery-insight's).
	type listItem struct {
		Type string `json:"type"`
		Node
	}
	for _, id := range []string{"lcp-breakdown-insight", "lcp-discovery-insight"} {
		for _, it := range items[listItem](l, id) {
			if it.Type == "node" && f.LCPElement.Selector == "" {
				f.LCPElement = it.Node
			}
		}
	}

	firstParty := map[string]bool{}
	for _, e := range l.Entities {
		firstParty[e.Name] = e.IsFirstParty
	}
	pageHost := hostOf(rep.FinalURL)
	for _, r := range items[Request](l, "network-requests") {
		if r.Entity != "" && len(l.Entities) > 0 {
			r.ThirdParty = !firstParty[r.Entity]
		} else {
			r.ThirdParty = hostOf(r.URL) != pageHost
		}
		f.Requests = append(f.Requests, r)
	}
	if src := imageSource(f.LCPElement.Snippet); src != "" {
		if u, err := url.Parse(rep.FinalURL); err == nil {
			if ref, err := u.Parse(src); err == nil {
				f.LCPResource = ref.String()
			}
		}
	}

	type blockingItem struct {
		URL string `json:"url"`
		Blocking
	}
	for _, it := range items[blockingItem](l, "render-blocking-insight") {
		f.RenderBlocking[it.URL] = it.Blocking
	}
	type bootupItem struct {
		URL   string  `json:"url"`
		Total float64 `json:"total"`
	}
	for _, it := range items[bootupItem](l, "bootup-time") {
		f.ScriptTime[it.URL] += it.Total
	}
	f.LongTasks = items[LongTask](l, "long-tasks")
	type shiftItem struct {
		Node  Node    `json:"node"`
		Score float64 `json:"score"`
	}
	for _, it := range items[shiftItem](l, "layout-shifts") {
		f.Shifts = append(f.Shifts, Shift(it))
	}
	return f, nil
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
