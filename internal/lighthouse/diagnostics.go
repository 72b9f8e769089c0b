package lighthouse

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// ShiftsPath is where an audit writes the trace's layout shifts (their times, which the report
// lacks), beside the report at reportPath.
func ShiftsPath(reportPath string) string { return reportPath + ".shifts.json" }

// DiagnosisInput is what Diagnose reads beside the run's report: its files, as the runner
// wrote them.
type DiagnosisInput struct {
	// Phases is what Runner.Network wrote to its phases file; nil leaves the requests
	// without phases.
	Phases []byte
	// Shifts is the file at ShiftsPath; nil leaves the layout shifts without times.
	Shifts []byte
	// Frames is the file at FramesPath; nil makes the filmstrip of Lighthouse's thumbnails
	// (a run of a runner that did not write it).
	Frames []byte
}

// Diagnosis is a run's diagnostics and the images they name.
type Diagnosis struct {
	Diagnostics model.Diagnostics
	// Images are the filmstrip frames and the final screenshot, each once (identical frames
	// share one image), by the names the diagnostics give them.
	Images []model.Image
}

// longTaskThreshold is where a task starts to block (the 50 ms of Total Blocking Time).
const longTaskThreshold = 50

// Diagnose explains one Lighthouse run from its own load: the report's filmstrip, requests,
// LCP breakdown, layout shifts, long tasks, main-thread work and third parties, with the
// request phases and shift times the runner read from the same load's DevTools log and trace.
// Times are the observed (unthrottled) ones, as the filmstrip shows them, in ms from
// navigation start; Lighthouse's simulated metrics stay in the lab result. Long tasks are as
// Lighthouse reports them (its throttling model applied).
func (r *Result) Diagnose(in DiagnosisInput) (*Diagnosis, error) {
	l, rep := r.lhr, r.report
	if l.RuntimeError != nil {
		return nil, fmt.Errorf("lighthouse: diagnose: %w", l.RuntimeError)
	}
	var obs observed
	firstItem(l.Audits["metrics"].Details, &obs)
	out := &Diagnosis{Diagnostics: model.Diagnostics{
		URL: rep.RequestedURL, FinalURL: firstNonEmpty(l.MainDocumentURL, rep.FinalURL),
		FetchTime: rep.FetchTime, LighthouseVersion: rep.LighthouseVersion,
		Marks: model.Marks{FCP: obs.FCP, LCP: obs.LCP, Load: obs.Load},
	}}
	d := &out.Diagnostics
	d.LCP = lcpOf(l, d.FinalURL, obs.LCP)
	phases, err := decodePhases(in.Phases)
	if err != nil {
		return nil, err
	}
	d.Requests = requestsOf(l, d.FinalURL, d.LCP, phases)
	for _, r := range d.Requests {
		if r.Document {
			d.Document = documentTiming(r)
			break
		}
	}
	times, err := shiftTimes(in.Shifts, obs.NavigationStartTs)
	if err != nil {
		return nil, err
	}
	d.Shifts, d.Marks.LargestShift = shiftsOf(l, d.FinalURL, times)
	// After the marks: the frames that show them stay in a filmstrip over its budget.
	if in.Frames != nil {
		if err := out.traceFilmstrip(in.Frames); err != nil {
			return nil, err
		}
		out.finalScreenshot(l, d.Filmstrip)
	} else {
		out.filmstrip(l)
	}
	d.LongTasks = longTasksOf(l)
	d.MainThread = mainThreadOf(l)
	d.Scripts = scriptsOf(l)
	d.ThirdParties = thirdPartiesOf(l, d.Requests, d.LongTasks)
	d.EmptyListsNotNull()
	return out, nil
}

// observed is the part of audits.metrics the diagnostics take: the unthrottled load's times.
type observed struct {
	FCP               *float64 `json:"observedFirstContentfulPaint"`
	LCP               *float64 `json:"observedLargestContentfulPaint"`
	Load              *float64 `json:"observedLoad"`
	NavigationStartTs *float64 `json:"observedNavigationStartTs"` // µs, the trace's clock
}

// filmstrip reads screenshot-thumbnails (ten frames at fixed times, Lighthouse's) and
// final-screenshot into frames and their images: the filmstrip of runs whose runner wrote no
// frames of the trace.
func (o *Diagnosis) filmstrip(l *lhr) {
	type shot struct {
		Timing float64 `json:"timing"`
		Data   string  `json:"data"`
	}
	for _, s := range items[shot](l, "screenshot-thumbnails") {
		if name, ok := o.addImage(s.Data); ok {
			o.Diagnostics.Filmstrip = append(o.Diagnostics.Filmstrip, model.Frame{Time: round1(s.Timing), Image: name})
		}
	}
	o.finalScreenshot(l, nil)
}

// finalScreenshot reads final-screenshot: the page as the load left it. With the trace's
// frames it is the last frame's image (nothing changed on the page after its last visual
// change: the same picture, stored once), at Lighthouse's time; without them Lighthouse's
// picture, stored as a frame is (FrameWidth wide), the report keeping it at the device's size.
func (o *Diagnosis) finalScreenshot(l *lhr, frames []model.Frame) {
	var final struct {
		Timing float64 `json:"timing"`
		Data   string  `json:"data"`
	}
	if json.Unmarshal(l.Audits["final-screenshot"].Details, &final) != nil {
		return
	}
	if n := len(frames); n > 0 {
		o.Diagnostics.FinalScreenshot = &model.Frame{Time: round1(final.Timing), Image: frames[n-1].Image}
		return
	}
	meta, payload, _ := strings.Cut(strings.TrimPrefix(final.Data, "data:"), ",")
	if meta == "image/jpeg;base64" {
		if data, err := base64.StdEncoding.DecodeString(payload); err == nil {
			if picture, err := scaled(data, FrameWidth); err == nil {
				if small, err := encodeJPEG(picture, frameQualities[0]); err == nil {
					o.Diagnostics.FinalScreenshot = &model.Frame{Time: round1(final.Timing), Image: o.addImageData(small, "image/jpeg", ".jpg")}
					return
				}
			}
		}
	}
	if name, ok := o.addImage(final.Data); ok {
		o.Diagnostics.FinalScreenshot = &model.Frame{Time: round1(final.Timing), Image: name}
	}
}

// addImage stores a data: URL's image once, named by its content, and returns its name.
func (o *Diagnosis) addImage(dataURL string) (string, bool) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(dataURL, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return "", false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || len(data) == 0 {
		return "", false
	}
	contentType := strings.TrimSuffix(meta, ";base64")
	ext := ".jpg"
	switch contentType {
	case "image/png":
		ext = ".png"
	case "image/webp":
		ext = ".webp"
	case "image/jpeg":
	default:
		return "", false
	}
	return o.addImageData(data, contentType, ext), true
}

// lcpOf reads lcp-breakdown-insight: its subparts table and the element's node.
func lcpOf(l *lhr, base string, at *float64) *model.LCP {
	type item struct {
		Type  string `json:"type"`
		Items []struct {
			Subpart  string  `json:"subpart"`
			Duration float64 `json:"duration"`
		} `json:"items"`
		Node
	}
	var lcp model.LCP
	found := false
	for _, it := range items[item](l, "lcp-breakdown-insight") {
		switch it.Type {
		case "table":
			for _, p := range it.Items {
				v := round1(p.Duration)
				switch p.Subpart {
				case "timeToFirstByte":
					lcp.Phases.TTFB = v
				case "resourceLoadDelay":
					lcp.Phases.LoadDelay = &v
				case "resourceLoadDuration":
					lcp.Phases.LoadDuration = &v
				case "elementRenderDelay":
					lcp.Phases.RenderDelay = v
				}
				found = true
			}
		case "node":
			lcp.Selector, lcp.Snippet, lcp.Label = it.Selector, it.Snippet, it.Label
			lcp.ImageURL = resolve(base, imageSource(it.Snippet))
			found = true
		}
	}
	if !found {
		return nil
	}
	if at != nil {
		lcp.Time = *at
	} else { // the phases add up to it
		lcp.Time = round1(lcp.Phases.TTFB + orZero(lcp.Phases.LoadDelay) + orZero(lcp.Phases.LoadDuration) + lcp.Phases.RenderDelay)
	}
	return &lcp
}

// phase is one request's phases as the runner's network op writes them (-1: unknown).
type phase struct {
	URL      string  `json:"url"`
	Queue    float64 `json:"queue"`
	DNS      float64 `json:"dns"`
	Connect  float64 `json:"connect"`
	TLS      float64 `json:"tls"`
	Wait     float64 `json:"wait"`
	Download float64 `json:"download"`
}

func decodePhases(raw []byte) ([]phase, error) {
	if raw == nil {
		return nil, nil
	}
	var ps []phase
	if err := json.Unmarshal(raw, &ps); err != nil {
		return nil, fmt.Errorf("lighthouse: diagnose: request phases: %w", err)
	}
	return ps, nil
}

// requestsOf reads network-requests, marking the main document, the LCP's resource, the
// render-blocking requests and the third parties, with each request's phases.
func requestsOf(l *lhr, documentURL string, lcp *model.LCP, phases []phase) []model.Request {
	type item struct {
		URL                string  `json:"url"`
		Protocol           string  `json:"protocol"`
		RendererStartTime  float64 `json:"rendererStartTime"`
		NetworkRequestTime float64 `json:"networkRequestTime"`
		NetworkEndTime     float64 `json:"networkEndTime"`
		TransferSize       float64 `json:"transferSize"`
		ResourceSize       float64 `json:"resourceSize"`
		StatusCode         int     `json:"statusCode"`
		MimeType           string  `json:"mimeType"`
		ResourceType       string  `json:"resourceType"`
		Priority           string  `json:"priority"`
		Entity             string  `json:"entity"`
	}
	firstParty := map[string]bool{}
	for _, e := range l.Entities {
		firstParty[e.Name] = e.IsFirstParty
	}
	blocking := map[string]bool{}
	for _, it := range items[struct {
		URL string `json:"url"`
	}](l, "render-blocking-insight") {
		blocking[it.URL] = true
	}
	list := items[item](l, "network-requests")
	// The runner reads the same records in the same order; a list that differs is matched by
	// URL, each phase used once.
	aligned := len(phases) == len(list)
	for i := range list {
		if aligned && phases[i].URL != list[i].URL {
			aligned = false
		}
	}
	used := make([]bool, len(phases))
	phaseOf := func(i int, url string) *phase {
		if aligned {
			return &phases[i]
		}
		for j := range phases {
			if !used[j] && phases[j].URL == url {
				used[j] = true
				return &phases[j]
			}
		}
		return nil
	}
	out := make([]model.Request, 0, len(list))
	doc, lcpMarked := false, false
	for i, it := range list {
		r := model.Request{
			URL: it.URL, Start: round1(it.RendererStartTime), End: round1(max(it.NetworkEndTime, it.RendererStartTime)),
			TransferSize: int64(it.TransferSize), ResourceSize: int64(it.ResourceSize),
			Type: it.ResourceType, MimeType: it.MimeType, Priority: it.Priority, Status: it.StatusCode,
			Protocol: it.Protocol, RenderBlocking: blocking[it.URL], Entity: it.Entity,
		}
		if it.Entity != "" && len(l.Entities) > 0 {
			r.ThirdParty = !firstParty[it.Entity]
		} else {
			r.ThirdParty = hostOf(it.URL) != hostOf(documentURL)
		}
		if !doc && it.ResourceType == "Document" && it.URL == documentURL {
			r.Document, doc = true, true
		}
		if !lcpMarked && lcp != nil && lcp.ImageURL != "" && it.URL == lcp.ImageURL {
			r.LCP, lcpMarked = true, true
		}
		if p := phaseOf(i, it.URL); p != nil {
			r.Queue, r.DNS, r.Connect, r.TLS, r.Wait, r.Download = known(p.Queue), known(p.DNS), known(p.Connect), known(p.TLS), known(p.Wait), known(p.Download)
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b model.Request) int { return cmpFloat(a.Start, b.Start) })
	return out
}

// documentTiming is the main document's phases, a phase not made 0.
func documentTiming(r model.Request) model.DocumentTiming {
	return model.DocumentTiming{DNS: orZero(r.DNS), Connect: orZero(r.Connect), TLS: orZero(r.TLS), Wait: orZero(r.Wait), Download: orZero(r.Download)}
}

// traceShift is one layout shift of the runner's shifts file.
type traceShift struct {
	Ts    float64 `json:"ts"`
	Score float64 `json:"score"`
}

// shiftTimes reads the trace's shifts with their times in ms from navigation start.
func shiftTimes(raw []byte, navStartTs *float64) ([]traceShift, error) {
	if raw == nil || navStartTs == nil {
		return nil, nil
	}
	var ts []traceShift
	if err := json.Unmarshal(raw, &ts); err != nil {
		return nil, fmt.Errorf("lighthouse: diagnose: layout shifts: %w", err)
	}
	for i := range ts {
		ts[i].Ts = round1((ts[i].Ts - *navStartTs) / 1000)
	}
	return ts, nil
}

// shiftsOf reads layout-shifts (each shift's element, score and likely causes), timing each
// with the trace shift of the nearest score, largest first; and when the largest happened.
func shiftsOf(l *lhr, base string, times []traceShift) ([]model.LayoutShift, *float64) {
	type item struct {
		Node     Node    `json:"node"`
		Score    float64 `json:"score"`
		SubItems struct {
			Items []struct {
				Extra struct {
					Type  string `json:"type"`
					Value string `json:"value"`
					Node
				} `json:"extra"`
				Cause string `json:"cause"`
			} `json:"items"`
		} `json:"subItems"`
	}
	used := make([]bool, len(times))
	var out []model.LayoutShift
	for _, it := range items[item](l, "layout-shifts") {
		s := model.LayoutShift{Score: it.Score, Time: -1}
		if it.Node.Selector != "" || it.Node.Snippet != "" {
			s.Elements = []model.Element{{Selector: it.Node.Selector, Snippet: it.Node.Snippet, Label: it.Node.Label}}
		}
		for _, sub := range it.SubItems.Items {
			c := model.ShiftCause{Kind: shiftCauseKind(sub.Cause)}
			switch sub.Extra.Type {
			case "url":
				c.URL = sub.Extra.Value
			case "node":
				c.URL = resolve(base, imageSource(sub.Extra.Snippet))
			}
			s.Causes = append(s.Causes, c)
		}
		best := -1
		for j, t := range times {
			if !used[j] && (best < 0 || math.Abs(t.Score-it.Score) < math.Abs(times[best].Score-it.Score)) {
				best = j
			}
		}
		if best >= 0 {
			used[best] = true
			s.Time = times[best].Ts
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b model.LayoutShift) int { return cmpFloat(b.Score, a.Score) })
	var largest *float64
	if len(out) > 0 && out[0].Time >= 0 {
		largest = &out[0].Time
	}
	return out, largest
}

// shiftCauseKind names a cause as Lighthouse words it (English, its default locale).
func shiftCauseKind(cause string) string {
	c := strings.ToLower(cause)
	switch {
	case strings.Contains(c, "unsized") || strings.Contains(c, "explicit size"):
		return model.ShiftUnsizedImage
	case strings.Contains(c, "font"):
		return model.ShiftWebFont
	case strings.Contains(c, "iframe") || strings.Contains(c, "injected"):
		return model.ShiftInjectedContent
	case strings.Contains(c, "animation"):
		return model.ShiftAnimation
	}
	return model.ShiftOther
}

// longTasksOf reads long-tasks, leaving out Lighthouse's own scripts (_lighthouse-eval.js, what
// its gatherers evaluate in the page after the load): they are not the page's.
func longTasksOf(l *lhr) []model.LongTask {
	var out []model.LongTask
	for _, t := range items[LongTask](l, "long-tasks") {
		if strings.Contains(t.URL, "_lighthouse-eval.js") {
			continue
		}
		out = append(out, model.LongTask{URL: t.URL, Start: round1(t.StartTime), Duration: round1(t.Duration)})
	}
	slices.SortStableFunc(out, func(a, b model.LongTask) int { return cmpFloat(a.Start, b.Start) })
	return out
}

func mainThreadOf(l *lhr) []model.WorkCategory {
	type item struct {
		Group      string  `json:"group"`
		GroupLabel string  `json:"groupLabel"`
		Duration   float64 `json:"duration"`
	}
	var out []model.WorkCategory
	for _, it := range items[item](l, "mainthread-work-breakdown") {
		out = append(out, model.WorkCategory{Category: it.Group, Label: it.GroupLabel, Duration: round1(it.Duration)})
	}
	slices.SortStableFunc(out, func(a, b model.WorkCategory) int { return cmpFloat(b.Duration, a.Duration) })
	return out
}

// scriptsOf reads bootup-time: each script's main-thread time, longest first (what a
// regression's cause compares; Lighthouse's own evaluation scripts left out).
func scriptsOf(l *lhr) []model.ScriptTime {
	type item struct {
		URL   string  `json:"url"`
		Total float64 `json:"total"`
	}
	byURL := map[string]float64{}
	var order []string
	for _, it := range items[item](l, "bootup-time") {
		if strings.Contains(it.URL, "_lighthouse-eval.js") {
			continue
		}
		if _, ok := byURL[it.URL]; !ok {
			order = append(order, it.URL)
		}
		byURL[it.URL] += it.Total
	}
	out := make([]model.ScriptTime, 0, len(order))
	for _, u := range order {
		out = append(out, model.ScriptTime{URL: u, MainThread: round1(byURL[u])})
	}
	slices.SortStableFunc(out, func(a, b model.ScriptTime) int { return cmpFloat(b.MainThread, a.MainThread) })
	return out
}

// thirdPartiesOf reads third-parties-insight (Lighthouse 13 has no third-party-summary): each
// entity's bytes and main-thread time, with its requests counted and its blocking time (the
// part of its long tasks past 50 ms) summed here.
func thirdPartiesOf(l *lhr, reqs []model.Request, tasks []model.LongTask) []model.ThirdParty {
	type item struct {
		Entity         string  `json:"entity"`
		TransferSize   float64 `json:"transferSize"`
		MainThreadTime float64 `json:"mainThreadTime"`
	}
	entityOf := map[string]string{}
	count := map[string]int{}
	for _, r := range reqs {
		if r.ThirdParty && r.Entity != "" {
			entityOf[r.URL] = r.Entity
			count[r.Entity]++
		}
	}
	blocking := map[string]float64{}
	for _, t := range tasks {
		if e := entityOf[t.URL]; e != "" {
			blocking[e] += max(0, t.Duration-longTaskThreshold)
		}
	}
	var out []model.ThirdParty
	for _, it := range items[item](l, "third-parties-insight") {
		out = append(out, model.ThirdParty{
			Entity: it.Entity, Requests: count[it.Entity], TransferSize: int64(it.TransferSize),
			MainThreadTime: round1(it.MainThreadTime), BlockingTime: round1(blocking[it.Entity]),
		})
	}
	slices.SortStableFunc(out, func(a, b model.ThirdParty) int { return cmpFloat(b.MainThreadTime, a.MainThreadTime) })
	return out
}

// known is a phase's value, nil when the runner marked it unknown (-1).
func known(v float64) *float64 {
	if v < 0 || !isFinite(v) {
		return nil
	}
	v = round1(v)
	return &v
}

// round1 rounds ms to 0.1 ms: finer is noise, and it keeps the stored JSON short.
func round1(v float64) float64 { return math.Round(v*10) / 10 }

func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// resolve makes ref absolute against base ("" when ref is).
func resolve(base, ref string) string {
	if ref == "" {
		return ""
	}
	u, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := u.Parse(ref)
	if err != nil {
		return ref
	}
	return r.String()
}
