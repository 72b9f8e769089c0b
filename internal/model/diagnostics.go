package model

import "time"

// Diagnostics explain one lab load of a page: what the browser showed when, which requests it
// made with their phases, which element was the largest contentful paint and why it came when
// it did, what shifted the layout, and what kept the main thread busy. All of it comes from
// Lighthouse's own load of the median run (its report and DevTools log), never from a second
// load. Times are milliseconds from navigation start, sizes whole bytes. Stored gzipped as JSON
// beside the run's report; the JSON names are the stored format (fields may be added, never
// removed or retyped).
type Diagnostics struct {
	URL               string    `json:"url"`       // the URL Lighthouse was asked to load
	FinalURL          string    `json:"finalUrl"`  // the main document's URL after redirects
	FetchTime         time.Time `json:"fetchTime"` // when Lighthouse loaded the page
	LighthouseVersion string    `json:"lighthouseVersion"`
	// Filmstrip holds the frames of the load, in time order: every distinct frame the trace
	// recorded, the first a blank one at navigation start, each with its visual completeness
	// (runs before that: Lighthouse's ten thumbnails at fixed times, without completeness).
	Filmstrip []Frame `json:"filmstrip"`
	// SpeedIndex is the Speed Index of the filmstrip's frames (Lighthouse's own computation,
	// speedline, over this load's screenshots); absent for runs without the trace's frames.
	SpeedIndex *float64 `json:"speedIndex,omitempty"`
	// FinalScreenshot is the page at the end of the load (absent when Lighthouse took none).
	FinalScreenshot *Frame `json:"finalScreenshot,omitempty"`
	Marks           Marks  `json:"marks"`
	// Requests are every network request of the load, in start order.
	Requests []Request `json:"requests"`
	// LCP is the largest contentful paint's element and phases (absent when there was none).
	LCP *LCP `json:"lcp,omitempty"`
	// Shifts are the layout shifts, largest score first.
	Shifts []LayoutShift `json:"shifts"`
	// LongTasks are the main thread's tasks of 50 ms or more, in start order.
	LongTasks []LongTask `json:"longTasks"`
	// MainThread is the main thread's time by kind of work, longest first.
	MainThread []WorkCategory `json:"mainThread"`
	// ThirdParties are the third-party entities the page used, by main-thread time.
	ThirdParties []ThirdParty `json:"thirdParties"`
	// Scripts are the scripts' main-thread time, longest first: what a regression's cause
	// compares. Absent from diagnostics stored before it was kept, and from the API's answer
	// (the interface's diagnostics do not list it).
	Scripts []ScriptTime `json:"scripts,omitempty"`
	// Document is the main document's connection and response times.
	Document DocumentTiming `json:"document"`
}

// Frame is one image of the load: a filmstrip frame or the final screenshot.
type Frame struct {
	Time float64 `json:"time"`
	// Complete is the frame's visual completeness, 0 to 100 (how close its colours are to the
	// last frame's, as Speed Index counts them); absent for Lighthouse's thumbnails.
	Complete *float64 `json:"complete,omitempty"`
	// Image names the stored image (unique within the diagnostics, e.g. "frame-3.jpg").
	Image string `json:"image"`
	// URL is where a client fetches the image; the API sets it, it is never stored.
	URL string `json:"url,omitempty"`
}

// Marks are the moments of the load a filmstrip marks; an absent mark did not happen.
type Marks struct {
	FCP *float64 `json:"fcp,omitempty"`
	LCP *float64 `json:"lcp,omitempty"`
	// LargestShift is when the largest layout shift happened.
	LargestShift *float64 `json:"largestShift,omitempty"`
	// Load is when the load event fired.
	Load *float64 `json:"load,omitempty"`
}

// Request is one network request of the load. A phase is absent when unknown or not made (a
// reused connection has no DNS, Connect or TLS).
type Request struct {
	URL   string  `json:"url"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	// Queue is the time between the request's start and its being sent (stalled, queued).
	Queue    *float64 `json:"queue,omitempty"`
	DNS      *float64 `json:"dns,omitempty"`
	Connect  *float64 `json:"connect,omitempty"` // TCP connection, TLS included
	TLS      *float64 `json:"tls,omitempty"`
	Wait     *float64 `json:"wait,omitempty"`     // request sent to first response byte
	Download *float64 `json:"download,omitempty"` // first to last response byte
	// TransferSize is the bytes on the wire (headers included), ResourceSize the decoded body.
	TransferSize int64  `json:"transferSize"`
	ResourceSize int64  `json:"resourceSize"`
	Type         string `json:"type"` // Document, Script, Stylesheet, Image, Font, XHR, Fetch, Other...
	MimeType     string `json:"mimeType,omitempty"`
	Priority     string `json:"priority,omitempty"` // VeryHigh, High, Medium, Low, VeryLow
	Status       int    `json:"status"`             // -1 when the request got no answer: blocked or failed
	Protocol     string `json:"protocol,omitempty"`
	// RenderBlocking tells that the request delayed the first render.
	RenderBlocking bool `json:"renderBlocking,omitempty"`
	// ThirdParty tells that the request went to an entity other than the page's own.
	ThirdParty bool   `json:"thirdParty,omitempty"`
	Entity     string `json:"entity,omitempty"` // the third-party-web entity or the page's site
	// Document marks the main document's request, LCP the largest contentful paint's resource.
	Document bool `json:"document,omitempty"`
	LCP      bool `json:"lcp,omitempty"`
}

// Element is a DOM element of the page as Lighthouse describes it.
type Element struct {
	Selector string `json:"selector,omitempty"`
	Snippet  string `json:"snippet,omitempty"` // its opening tag
	Label    string `json:"label,omitempty"`   // its text or alt
}

// LCP is the largest contentful paint: when, which element, and its phases.
type LCP struct {
	Time     float64 `json:"time"`
	Selector string  `json:"selector,omitempty"`
	Snippet  string  `json:"snippet,omitempty"`
	Label    string  `json:"label,omitempty"`
	// ImageURL is the image the element painted (empty for text).
	ImageURL string    `json:"imageUrl,omitempty"`
	Phases   LCPPhases `json:"phases"`
}

// LCPPhases split the LCP time: they add up to it. The load phases are absent for text.
type LCPPhases struct {
	TTFB         float64  `json:"ttfb"`
	LoadDelay    *float64 `json:"loadDelay,omitempty"`
	LoadDuration *float64 `json:"loadDuration,omitempty"`
	RenderDelay  float64  `json:"renderDelay"`
}

// LayoutShift is one layout shift (or cluster of them) with the elements it moved and its
// likely causes.
type LayoutShift struct {
	Time     float64      `json:"time"`
	Score    float64      `json:"score"`
	Elements []Element    `json:"elements,omitempty"`
	Causes   []ShiftCause `json:"causes,omitempty"`
}

// Kinds of a layout shift's cause.
const (
	ShiftUnsizedImage    = "unsized-image"
	ShiftWebFont         = "web-font"
	ShiftInjectedContent = "injected-content" // an iframe or other content added late
	ShiftAnimation       = "animation"        // a non-composited animation
	ShiftOther           = "other"
)

// ShiftCause is a likely cause of a layout shift: its kind and the resource or element at
// fault (an image's or font's URL, an iframe's source).
type ShiftCause struct {
	Kind string `json:"kind"`
	URL  string `json:"url,omitempty"`
}

// LongTask is a main-thread task of 50 ms or more, with the script it is attributed to.
type LongTask struct {
	URL      string  `json:"url,omitempty"`
	Start    float64 `json:"start"`
	Duration float64 `json:"duration"`
}

// TaskTotals sum up long tasks: how many, their total and the longest duration (ms).
type TaskTotals struct {
	Count   int     `json:"count"`
	Total   float64 `json:"total"`
	Longest float64 `json:"longest"`
}

// Add counts lt in t.
func (t *TaskTotals) Add(lt LongTask) {
	t.Count++
	t.Total += lt.Duration
	t.Longest = max(t.Longest, lt.Duration)
}

// WorkCategory is main-thread time of one kind (scriptEvaluation, styleLayout, paintCompositeRender...).
type WorkCategory struct {
	Category string  `json:"category"`
	Label    string  `json:"label"`
	Duration float64 `json:"duration"`
}

// ScriptTime is the main-thread time (ms) of one script: evaluating, compiling and running it.
type ScriptTime struct {
	URL        string  `json:"url"`
	MainThread float64 `json:"mainThread"`
}

// Image is one stored image of a load's diagnostics (a filmstrip frame, the final screenshot),
// named as its frames name it.
type Image struct {
	Name        string
	ContentType string
	Data        []byte
}

// ThirdParty is what one third-party entity cost the load.
type ThirdParty struct {
	Entity         string  `json:"entity"`
	Requests       int     `json:"requests"`
	TransferSize   int64   `json:"transferSize"`
	MainThreadTime float64 `json:"mainThreadTime"`
	BlockingTime   float64 `json:"blockingTime"`
}

// DocumentTiming is the main document's request split in phases; a phase not made (DNS of a
// cached name, TLS over HTTP) is 0.
type DocumentTiming struct {
	DNS      float64 `json:"dns"`
	Connect  float64 `json:"connect"` // TCP connection, TLS included
	TLS      float64 `json:"tls"`
	Wait     float64 `json:"wait"` // request sent to first byte (server time)
	Download float64 `json:"download"`
}

// EmptyListsNotNull makes d's absent lists empty, so that its JSON has [] where there is
// nothing, never null.
func (d *Diagnostics) EmptyListsNotNull() {
	if d.Filmstrip == nil {
		d.Filmstrip = []Frame{}
	}
	if d.Requests == nil {
		d.Requests = []Request{}
	}
	if d.Shifts == nil {
		d.Shifts = []LayoutShift{}
	}
	if d.LongTasks == nil {
		d.LongTasks = []LongTask{}
	}
	if d.MainThread == nil {
		d.MainThread = []WorkCategory{}
	}
	if d.ThirdParties == nil {
		d.ThirdParties = []ThirdParty{}
	}
}
