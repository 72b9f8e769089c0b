package lighthouse

import (
	"encoding/json"
	"fmt"
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
	rep, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	var l struct {
		FinalDisplayedURL string `json:"finalDisplayedUrl"`
		Audits            map[string]struct {
			Details json.RawMessage `json:"details"`
		} `json:"audits"`
		Entities []struct {
			Name         string `json:"name"`
			IsFirstParty bool   `json:"isFirstParty"`
		} `json:"entities"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("lighthouse report: %w", err)
	}
	f := &Facts{Report: rep, RenderBlocking: map[string]Blocking{}, ScriptTime: map[string]float64{}}

	// The LCP element: the node of lcp-breakdown-insight's list (or lcp-discovery-insight's).
	for _, id := range []string{"lcp-breakdown-insight", "lcp-discovery-insight"} {
		var d struct {
			Items []struct {
				Type string `json:"type"`
				Node
			} `json:"items"`
		}
		if json.Unmarshal(l.Audits[id].Details, &d) == nil {
			for _, it := range d.Items {
				if it.Type == "node" && f.LCPElement.Selector == "" {
					f.LCPElement = it.Node
				}
			}
		}
	}

	var requests struct {
		Items []Request `json:"items"`
	}
	_ = json.Unmarshal(l.Audits["network-requests"].Details, &requests)
	firstParty := map[string]bool{}
	for _, e := range l.Entities {
		firstParty[e.Name] = e.IsFirstParty
	}
	pageHost := hostOf(rep.FinalURL)
	for _, r := range requests.Items {
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

	var blocking struct {
		Items []struct {
			URL string `json:"url"`
			Blocking
		} `json:"items"`
	}
	_ = json.Unmarshal(l.Audits["render-blocking-insight"].Details, &blocking)
	for _, it := range blocking.Items {
		f.RenderBlocking[it.URL] = it.Blocking
	}
	var bootup struct {
		Items []struct {
			URL   string  `json:"url"`
			Total float64 `json:"total"`
		} `json:"items"`
	}
	_ = json.Unmarshal(l.Audits["bootup-time"].Details, &bootup)
	for _, it := range bootup.Items {
		f.ScriptTime[it.URL] += it.Total
	}
	var tasks struct {
		Items []LongTask `json:"items"`
	}
	_ = json.Unmarshal(l.Audits["long-tasks"].Details, &tasks)
	f.LongTasks = tasks.Items
	var shifts struct {
		Items []struct {
			Node  Node    `json:"node"`
			Score float64 `json:"score"`
		} `json:"items"`
	}
	_ = json.Unmarshal(l.Audits["layout-shifts"].Details, &shifts)
	for _, it := range shifts.Items {
		f.Shifts = append(f.Shifts, Shift(it))
	}
	return f, nil
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
