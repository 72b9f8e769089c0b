package regression

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/lighthouse"
	metricnames "github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// MaxCauseItems bounds a regression's cause: the top of the list is what matters.
const MaxCauseItems = 10

// labCause compares a lab regression's last good and first bad days: their diagnostics when
// both kept them, else their stored reports.
func (w *Watcher) labCause(ctx context.Context, before, after model.LabResult, metric string) ([]model.CauseItem, error) {
	var diags [2]*model.Diagnostics
	for i, r := range []model.LabResult{before, after} {
		d, err := compare.ReadDiagnostics(ctx, w.reports, r.ReportKey)
		if err != nil {
			return nil, fmt.Errorf("diagnostics of %s: %w", r.Day, err)
		}
		diags[i] = d
	}
	if diags[0] != nil && diags[1] != nil {
		return ExplainLoads(diags[0], diags[1], after.Device, metric, newlyFailing(before.Opportunities, after.Opportunities)), nil
	}
	return w.reportCause(ctx, before, after, metric)
}

// reportCause compares the stored reports of a lab regression's last good and first bad days.
func (w *Watcher) reportCause(ctx context.Context, before, after model.LabResult, metric string) ([]model.CauseItem, error) {
	var facts [2]*lighthouse.Facts
	for i, r := range []model.LabResult{before, after} {
		key, err := reportKey(r)
		if err != nil {
			return nil, err
		}
		gz, err := w.reports.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("report of %s: %w", r.Day, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, fmt.Errorf("report of %s: %w", r.Day, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("report of %s: %w", r.Day, err)
		}
		if facts[i], err = lighthouse.ReadFacts(raw); err != nil {
			return nil, fmt.Errorf("report of %s: %w", r.Day, err)
		}
	}
	return Explain(facts[0], facts[1], metric), nil
}

// ErrNoReport is a lab regression's cause missing a day's report.
var ErrNoReport = errors.New("no stored report for the day")

func reportKey(r model.LabResult) (string, error) {
	if r.ReportKey == "" {
		return "", fmt.Errorf("%s: %w", r.Day, ErrNoReport)
	}
	return r.ReportKey, nil
}

// weights say how much a kind of difference moves a metric, per unit of its estimated effect
// (milliseconds of loading or main-thread time; bytes are turned into milliseconds at the
// report's throttled throughput). Differences that do not move a metric are left out of its
// cause.
var weights = map[string]map[string]float64{
	"lcp":               {"lcp_element": 1, "lcp_resource": 1, "lcp_phase": 1, "render_blocking_added": 1, "render_blocking_slowed": 1, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3, "script_main_thread": 0.3, "long_task_added": 0.3},
	"fcp":               {"render_blocking_added": 1, "render_blocking_slowed": 1, "resource_added": 0.1, "resource_grew": 0.1, "script_main_thread": 0.2},
	"speed_index":       {"render_blocking_added": 1, "render_blocking_slowed": 1, "lcp_resource": 0.5, "lcp_element": 0.5, "lcp_phase": 0.5, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3, "script_main_thread": 0.3, "long_task_added": 0.3},
	"tbt":               {"script_main_thread": 1, "long_task_added": 1, "resource_added": 0.05},
	"ttfb":              {"document_slowed": 1, "resource_grew": 0.05},
	"cls":               {"layout_shift": 1},
	"kb_total":          {"resource_added": 1, "resource_grew": 1, "lcp_resource": 1},
	"requests":          {"resource_added": 1},
	"performance_score": {"lcp_element": 1, "lcp_resource": 1, "lcp_phase": 1, "render_blocking_added": 1, "render_blocking_slowed": 1, "script_main_thread": 1, "long_task_added": 1, "layout_shift": 1, "resource_added": 0.3, "resource_grew": 0.3, "request_slowed": 0.3},
}

// Explain ranks what changed between two reports of a page (the last good day's and the first
// bad day's) by its likely effect on metric, largest first: the LCP element or its resource,
// resources added, removed or grown, render-blocking resources added, main-thread time by
// script, long tasks added, layout-shift culprits, and audits newly failing (last).
func Explain(before, after *lighthouse.Facts, metric string) []model.CauseItem {
	w := weights[metric]
	msPerKiB := 0.8 // desktop preset: 10 Mbit/s
	if after.FormFactor == lighthouse.DeviceMobile {
		msPerKiB = 5.1 // mobile slow 4G: 1.6 Mbit/s
	}
	var items []model.CauseItem
	add := func(it model.CauseItem, effect float64) { items = weigh(items, w, it, effect) }
	// The LCP element and its image.
	if after.LCPElement.Selector != "" && (after.LCPElement.Selector != before.LCPElement.Selector || after.LCPElement.Snippet != before.LCPElement.Snippet) {
		add(model.CauseItem{Kind: "lcp_element", Title: "The largest contentful paint is now " + describe(after.LCPElement) + " (was " + describe(before.LCPElement) + ")",
			Before: value(before.LCP), After: value(after.LCP), Unit: "ms"}, value(after.LCP)-value(before.LCP))
	}

	// Requests by URL: added, removed, grown.
	was := map[string]lighthouse.Request{}
	for _, r := range before.Requests {
		was[r.URL] = r
	}
	now := map[string]bool{}
	for _, r := range after.Requests {
		now[r.URL] = true
		party := "first"
		if r.ThirdParty {
			party = "third"
		}
		old, existed := was[r.URL]
		kib := (r.TransferSize - old.TransferSize) / 1024
		switch {
		case r.URL == after.LCPResource && r.URL != "" && existed && kib >= 1:
			add(model.CauseItem{Kind: "lcp_resource", Title: "The largest contentful paint's image grew by " + fmt.Sprintf("%.0f KiB", kib),
				URL: r.URL, Type: r.ResourceType, Party: party, Before: round(old.TransferSize / 1024), After: round(r.TransferSize / 1024), Unit: "KiB"},
				effect(metric, kib, msPerKiB))
		case !existed:
			add(model.CauseItem{Kind: "resource_added", Title: fmt.Sprintf("A %s-party %s was added (%.0f KiB)", party, typeName(r.ResourceType), r.TransferSize/1024),
				URL: r.URL, Type: r.ResourceType, Party: party, After: round(r.TransferSize / 1024), Unit: "KiB"},
				effect(metric, r.TransferSize/1024, msPerKiB))
		case kib >= 1 && r.TransferSize > 1.1*old.TransferSize:
			add(model.CauseItem{Kind: "resource_grew", Title: fmt.Sprintf("A %s-party %s grew by %.0f KiB", party, typeName(r.ResourceType), kib),
				URL: r.URL, Type: r.ResourceType, Party: party, Before: round(old.TransferSize / 1024), After: round(r.TransferSize / 1024), Unit: "KiB"},
				effect(metric, kib, msPerKiB))
		}
	}
	for _, r := range before.Requests {
		if !now[r.URL] {
			// A removal makes nothing slower; it is listed (with no effect) for completeness.
			items = append(items, model.CauseItem{Kind: "resource_removed", Title: "A " + typeName(r.ResourceType) + " was removed",
				URL: r.URL, Type: r.ResourceType, Before: round(r.TransferSize / 1024), Unit: "KiB"})
		}
	}

	for u, b := range after.RenderBlocking {
		if _, ok := before.RenderBlocking[u]; !ok {
			ms := b.WastedMs
			if ms == 0 {
				ms = b.Bytes / 1024 * msPerKiB
			}
			add(model.CauseItem{Kind: "render_blocking_added", Title: "A render-blocking " + typeName(typeOf(after, u)) + " was added",
				URL: u, Type: typeOf(after, u), After: round(ms), Unit: "ms"}, ms)
		}
	}
	for u, ms := range after.ScriptTime {
		if grew := ms - before.ScriptTime[u]; grew >= 20 && u != "Unattributable" {
			add(model.CauseItem{Kind: "script_main_thread", Title: fmt.Sprintf("Main-thread time of a script grew by %.0f ms", grew),
				URL: u, Before: round(before.ScriptTime[u]), After: round(ms), Unit: "ms"}, grew)
		}
	}
	// Long tasks: those of a script that had fewer or shorter ones before.
	longBefore := map[string]float64{}
	for _, t := range before.LongTasks {
		longBefore[t.URL] += max(t.Duration-50, 0)
	}
	longAfter := map[string]float64{}
	for _, t := range after.LongTasks {
		longAfter[t.URL] += max(t.Duration-50, 0)
	}
	for u, blocking := range longAfter {
		if grew := blocking - longBefore[u]; grew >= 20 {
			add(model.CauseItem{Kind: "long_task_added", Title: fmt.Sprintf("Long tasks block the main thread %.0f ms more", grew),
				URL: u, Before: round(longBefore[u]), After: round(blocking), Unit: "ms"}, grew)
		}
	}
	shiftBefore := map[string]float64{}
	for _, s := range before.Shifts {
		shiftBefore[s.Node.Selector] += s.Score
	}
	shiftAfter := map[string]float64{}
	nodes := map[string]lighthouse.Node{}
	for _, s := range after.Shifts {
		shiftAfter[s.Node.Selector] += s.Score
		nodes[s.Node.Selector] = s.Node
	}
	for sel, score := range shiftAfter {
		if grew := score - shiftBefore[sel]; grew >= 0.005 {
			add(model.CauseItem{Kind: "layout_shift", Title: "Layout shifts of " + describe(nodes[sel]) + " grew by " + fmt.Sprintf("%.3f", grew),
				URL: sel, Before: round(shiftBefore[sel]), After: round(score)}, grew)
		}
	}

	sortByImpact(items)
	// Audits failing now that passed before: named last, they have no estimate of their own.
	failing := map[string]bool{}
	for _, o := range before.Opportunities {
		failing[o.ID] = true
	}
	for _, o := range after.Opportunities {
		if !failing[o.ID] && o.Category == lighthouse.CategoryPerformance {
			items = append(items, model.CauseItem{Kind: "audit_failing", Title: o.Title + " (now failing)", URL: o.ID})
		}
	}
	if len(items) > MaxCauseItems {
		items = items[:MaxCauseItems]
	}
	return items
}

// weigh adds it to items with its impact on a metric (effect times the weight w gives its
// kind), unless its kind does not move the metric or it has no effect.
func weigh(items []model.CauseItem, w map[string]float64, it model.CauseItem, effect float64) []model.CauseItem {
	if weight := w[it.Kind]; weight > 0 && effect > 0 {
		it.Impact = round(weight * effect)
		items = append(items, it)
	}
	return items
}

// sortByImpact orders items by impact, largest first (then by kind and URL, for a stable
// order).
func sortByImpact(items []model.CauseItem) {
	slices.SortStableFunc(items, func(a, b model.CauseItem) int {
		if a.Impact != b.Impact {
			if a.Impact > b.Impact {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kind+a.URL, b.Kind+b.URL)
	})
}

// effect is a change of kib bytes' effect on metric: bytes themselves for the byte and request
// counts, else the time to download them.
func effect(metric string, kib, msPerKiB float64) float64 {
	switch metric {
	case "kb_total":
		return kib
	case "requests":
		return 1
	}
	return kib * msPerKiB
}

func typeOf(f *lighthouse.Facts, u string) string {
	for _, r := range f.Requests {
		if r.URL == u {
			return r.ResourceType
		}
	}
	return ""
}

func typeName(t string) string {
	switch t {
	case "Script":
		return "script"
	case "Stylesheet":
		return "stylesheet"
	case "Image":
		return "image"
	case "Font":
		return "font"
	case "Document":
		return "document"
	case "":
		return "resource"
	}
	return strings.ToLower(t) + " resource"
}

func describe(n lighthouse.Node) string {
	if n.Selector == "" {
		return "nothing"
	}
	return n.Selector
}

func value(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// ExplainLoads ranks what changed between two loads of a page (the last good and the first
// bad day's diagnostics, compared as compare.CompareLoads does) by its likely effect on
// metric, largest first: requests added (render-blocking ones apart), grown or slowed, the LCP
// element and its phases, new layout shifts and long tasks; requests removed follow with no
// effect, and the audits failing now that passed before (failing) last. device is the
// audits' ("mobile" or "desktop").
func ExplainLoads(before, after *model.Diagnostics, device, metric string, failing []model.Opportunity) []model.CauseItem {
	l := compare.CompareLoads(before, after, compare.DefaultThresholds)
	w := weights[metric]
	msPerKiB := 0.8 // desktop preset: 10 Mbit/s
	if device == lighthouse.DeviceMobile {
		msPerKiB = 5.1 // mobile slow 4G: 1.6 Mbit/s
	}
	var items, removed []model.CauseItem
	add := func(it model.CauseItem, effect float64) { items = weigh(items, w, it, effect) }
	for _, c := range l.Requests {
		r := c.Request()
		it := model.CauseItem{URL: r.URL, Type: r.Type, Party: partyOf(r), Unit: "KiB"}
		what := requestName(r)
		kib := float64(c.SizeDelta) / 1024
		switch c.Kind {
		case compare.RequestAdded:
			it.Kind, it.After = "resource_added", round(kib)
			it.Title = fmt.Sprintf("+%s %s", kibText(kib), what)
			ms := effect(metric, kib, msPerKiB)
			if r.RenderBlocking {
				it.Kind = "render_blocking_added"
				ms = max(ms, r.End-r.Start)
			}
			add(it, ms)
		case compare.RequestGrew:
			it.Kind, it.Before, it.After = "resource_grew", round(float64(c.Base.TransferSize)/1024), round(float64(r.TransferSize)/1024)
			if r.LCP {
				it.Kind = "lcp_resource"
			}
			it.Title = fmt.Sprintf("%s grew by %s", upper(what), kibText(kib))
			add(it, effect(metric, kib, msPerKiB))
		case compare.RequestSlowed:
			it.Kind, it.Unit = "request_slowed", "ms"
			it.Before, it.After = round(c.Base.End-c.Base.Start), round(r.End-r.Start)
			switch {
			case r.Document:
				it.Kind = "document_slowed"
			case r.RenderBlocking:
				it.Kind = "render_blocking_slowed"
			}
			it.Title = fmt.Sprintf("%s took %.0f ms longer", upper(what), c.TimeDelta)
			add(it, c.TimeDelta)
		case compare.RequestRemoved:
			it.Kind, it.Before = "resource_removed", round(float64(c.Base.TransferSize)/1024)
			it.Title = fmt.Sprintf("%s was removed (%s)", upper(what), kibText(-kib))
			removed = append(removed, it)
		}
	}
	if l.LCP.ElementChanged && l.LCP.Target != nil {
		var was, at float64
		if l.LCP.Base != nil {
			was = l.LCP.Base.Time
		}
		at = l.LCP.Target.Time
		add(model.CauseItem{Kind: "lcp_element", Title: "LCP element changed from " + lcpName(l.LCP.Base) + " to " + lcpName(l.LCP.Target),
			URL: l.LCP.Target.ImageURL, Before: round(was), After: round(at), Unit: "ms"}, at-was)
	}
	for _, p := range l.LCP.Phases {
		var b, a float64
		if p.Base != nil {
			b = *p.Base
		}
		if p.Target != nil {
			a = *p.Target
		}
		add(model.CauseItem{Kind: "lcp_phase", Title: fmt.Sprintf("LCP %s %+.0f ms", strings.ToLower(metricnames.PhaseLabel(p.Name)), p.Delta),
			URL: p.Name, Before: round(b), After: round(a), Unit: "ms"}, p.Delta)
	}
	for _, s := range l.Shifts {
		title := fmt.Sprintf("New layout shift of %s (%.3f)", cmp.Or(s.Key, "an element"), s.Score)
		if s.BaseScore > 0 {
			title = fmt.Sprintf("Layout shifts of %s grew from %.3f", cmp.Or(s.Key, "an element"), s.BaseScore)
		}
		add(model.CauseItem{Kind: "layout_shift", Title: title, URL: s.Key, Before: round(s.BaseScore), After: round(s.Score)}, s.Score)
	}
	blocking := func(d *model.Diagnostics) map[string]float64 {
		out := map[string]float64{}
		for _, t := range d.LongTasks {
			out[t.URL] += max(t.Duration-50, 0)
		}
		return out
	}
	was, now := blocking(before), blocking(after)
	for u, ms := range now {
		// Work no script is named for points at nothing to change (as in Explain).
		if grew := ms - was[u]; grew >= 20 && u != "" && u != "Unattributable" {
			add(model.CauseItem{Kind: "long_task_added", Title: fmt.Sprintf("Long tasks of %s block the main thread %.0f ms more", cmp.Or(hostOf(u), "the page"), grew),
				URL: u, Before: round(was[u]), After: round(ms), Unit: "ms"}, grew)
		}
	}
	sortByImpact(items)
	items = append(items, removed...)
	for _, o := range failing {
		items = append(items, model.CauseItem{Kind: "audit_failing", Title: o.Title + " (now failing)", URL: o.ID})
	}
	if len(items) > MaxCauseItems {
		items = items[:MaxCauseItems]
	}
	return items
}

// newlyFailing are the performance audits failing in after that passed in before.
func newlyFailing(before, after []model.Opportunity) []model.Opportunity {
	var out []model.Opportunity
	for _, o := range after {
		if o.Category == lighthouse.CategoryPerformance && !slices.ContainsFunc(before, func(b model.Opportunity) bool { return b.ID == o.ID }) {
			out = append(out, o)
		}
	}
	return out
}

func partyOf(r model.Request) string {
	if r.ThirdParty {
		return "third"
	}
	return "first"
}

// requestName names a request for people: "render-blocking script from cdn.example.com".
func requestName(r model.Request) string {
	name := typeName(r.Type) + " from " + cmp.Or(hostOf(r.URL), r.URL)
	if r.RenderBlocking {
		name = "render-blocking " + name
	}
	return name
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// kibText is a size for people: "312 KiB", "0.4 KiB".
func kibText(kib float64) string {
	if kib < 10 {
		return strconv.FormatFloat(math.Round(kib*10)/10, 'f', -1, 64) + " KiB"
	}
	return fmt.Sprintf("%.0f KiB", kib)
}

// lcpName names an LCP element: its selector (else its opening tag), "nothing" without one.
func lcpName(l *model.LCP) string {
	if l == nil {
		return "nothing"
	}
	return cmp.Or(l.Selector, l.Snippet, "an element")
}
