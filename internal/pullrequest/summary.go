// Package pullrequest writes a test series' outcome on the pull request (or merge request) whose
// CI job ran it: one Markdown summary with, per page and device, the metrics against the base,
// their change beside the runs' spread, the budgets, and for each change beyond noise its
// causes from the comparison. The summary lives in one comment found again by a hidden marker
// and edited in place on every push, in a GitHub check run, or in a GitLab merge-request note.
// It uses the CI job's own token; nothing is stored on the server.
package pullrequest

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/openvitals/openvitals/internal/regression"
)

// Series is what a summary is made of: the series as the API answered it and, per test, its
// comparison with its base.
type Series struct {
	ID, Status, Description string
	Website                 string
	// Link is the series in the API; Dashboard the dashboard's URL (…/app), for the links to
	// the comparison view.
	Link, Dashboard string
	Tests           []Test
	// Failures are the thresholds the job set that the series did not meet.
	Failures []string
}

// Test is one test of the series.
type Test struct {
	ID, PageID, Page, URL, Device, Status, Error string
	// Method is how the test's audit was measured ("applied" or "simulated" throttling; ""
	// before it completed).
	Method                         string
	BudgetsExceeded, BudgetsAtRisk int
	// Comparison is the test against its base (nil: no base to compare with).
	Comparison *Comparison
}

// Comparison is the API's comparison of two audits (GET /{w}/pages/{p}/compare), as far as the
// summary reads it.
type Comparison struct {
	Base struct {
		Date   string `json:"date"`
		Test   string `json:"test"`
		Method string `json:"method"`
	} `json:"base"`
	Target struct {
		Test string `json:"test"`
	} `json:"target"`
	Metrics []Metric `json:"metrics"`
	Loads   *Loads   `json:"loads"`
}

// Metric is one metric of a comparison.
type Metric struct {
	Name          string   `json:"name"`
	Unit          string   `json:"unit"`
	HigherIsWorse *bool    `json:"higherIsWorse"`
	Base          *float64 `json:"base"`
	Target        *float64 `json:"target"`
	Change        *float64 `json:"change"`
	BaseSpread    *float64 `json:"baseSpread"`
	TargetSpread  *float64 `json:"targetSpread"`
	BeyondSpread  bool     `json:"beyondSpread"`
}

// Loads is what changed in the load.
type Loads struct {
	Requests []struct {
		Kind           string  `json:"kind"`
		URL            string  `json:"url"`
		ResourceType   string  `json:"resourceType"`
		ThirdParty     bool    `json:"thirdParty"`
		Entity         string  `json:"entity"`
		RenderBlocking bool    `json:"renderBlocking"`
		SizeChange     int64   `json:"sizeChange"`
		TimeChange     float64 `json:"timeChange"`
	} `json:"requests"`
	LCP struct {
		Base           *lcp `json:"base"`
		Target         *lcp `json:"target"`
		ElementChanged bool `json:"elementChanged"`
		Phases         []struct {
			Name   string  `json:"name"`
			Change float64 `json:"change"`
		} `json:"phases"`
	} `json:"lcp"`
	LayoutShifts []struct {
		Time     float64 `json:"time"`
		Score    float64 `json:"score"`
		Elements []struct {
			Selector string `json:"selector"`
		} `json:"elements"`
		Causes []struct {
			Kind string `json:"kind"`
			URL  string `json:"url"`
		} `json:"causes"`
	} `json:"layoutShifts"`
	LongTasks struct {
		Base    taskTotals `json:"base"`
		Target  taskTotals `json:"target"`
		Scripts []struct {
			URL    string     `json:"url"`
			Base   taskTotals `json:"base"`
			Target taskTotals `json:"target"`
			Change float64    `json:"change"`
		} `json:"scripts"`
	} `json:"longTasks"`
}

// taskTotals are a load's long tasks, or a script's: their count, total and longest (ms).
type taskTotals struct {
	Count   int     `json:"count"`
	Total   float64 `json:"total"`
	Longest float64 `json:"longest"`
}

// minLongTaskGrowth is the least growth of the long tasks' total a summary names (a long
// task's least duration).
const minLongTaskGrowth = 50

type lcp struct {
	Time     float64 `json:"time"`
	Selector string  `json:"selector"`
	Label    string  `json:"label"`
}

// Summary is the rendered outcome: a check run's title and conclusion, and the Markdown.
type Summary struct {
	Title      string
	Conclusion string // "success" or "failure"
	Markdown   string
	// Link is the series in the API, where a commit status points.
	Link string
}

// Marker is the hidden line that finds a website's comment again on later pushes: one comment
// per website and pull request.
func Marker(website string) string { return "<!-- openvitals-testseries website=" + website + " -->" }

// columns are the metrics of the table, in order, with their titles.
var columns = []struct{ name, title string }{
	{"performance_score", "Performance"}, {"lcp", "LCP"}, {"fcp", "FCP"}, {"tbt", "TBT"}, {"cls", "CLS"}, {"ttfb", "TTFB"},
}

// maxCauses bounds each kind of cause listed for one test.
const maxCauses = 5

// maxMarkdown is below GitHub's 65,536-character limit of a comment and a check run's summary.
const maxMarkdown = 60000

// Render writes the summary of a series.
func Render(s Series) Summary {
	var b strings.Builder
	failed := len(s.Failures) > 0 || s.Status != "completed"
	sum := Summary{Conclusion: "success", Title: fmt.Sprintf("%d tests, every threshold met", len(s.Tests)), Link: s.Link}
	if failed {
		sum.Conclusion = "failure"
		sum.Title = fmt.Sprintf("%d tests, %d thresholds not met", len(s.Tests), len(s.Failures))
		if s.Status != "completed" {
			sum.Title = fmt.Sprintf("%d tests, series %s", len(s.Tests), s.Status)
		}
	}
	b.WriteString(Marker(s.Website) + "\n")
	icon := "✅"
	if failed {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s openvitals: %s\n\n", icon, sum.Title)
	fmt.Fprintf(&b, "Test series [`%s`](%s) (%s)", s.ID, s.Link, s.Status)
	if s.Description != "" {
		fmt.Fprintf(&b, ": %s", cell(s.Description))
	}
	b.WriteString(". Each value against its base; a change is marked 🔺 (worse) or 🟢 (better) when it is beyond the runs' spread (±), or without a spread at least the change regression detection counts.\n\n")

	b.WriteString("| Page | Device |")
	for _, c := range columns {
		b.WriteString(" " + c.title + " |")
	}
	b.WriteString(" Budgets | Compare |\n|---|---|")
	for range columns {
		b.WriteString("---:|")
	}
	b.WriteString("---|---|\n")
	for _, t := range s.Tests {
		fmt.Fprintf(&b, "| %s | %s |", cell(t.Page), DeviceCell(t))
		for _, c := range columns {
			b.WriteString(" " + metricCell(t, c.name) + " |")
		}
		budgets := "✓"
		switch {
		case t.BudgetsExceeded > 0:
			budgets = fmt.Sprintf("🔺 %d exceeded", t.BudgetsExceeded)
		case t.BudgetsAtRisk > 0:
			budgets = fmt.Sprintf("⚠️ %d at risk", t.BudgetsAtRisk)
		}
		if t.Status != "completed" {
			budgets = "–"
		}
		link := "–"
		if u := compareLink(s, t); u != "" {
			link = "[compare](" + u + ")"
		}
		fmt.Fprintf(&b, " %s | %s |\n", budgets, link)
	}
	for _, t := range s.Tests {
		if t.Status == "failed" {
			fmt.Fprintf(&b, "\n❌ **%s** on %s failed: %s\n", cell(t.Page), t.Device, cell(t.Error))
		}
	}
	for _, t := range s.Tests {
		writeCauses(&b, s, t)
	}
	if len(s.Failures) > 0 {
		b.WriteString("\n**Thresholds not met**\n\n")
		for _, f := range s.Failures {
			b.WriteString("- " + cell(f) + "\n")
		}
	}
	sum.Markdown = b.String()
	if len(sum.Markdown) > maxMarkdown {
		cut := max(strings.LastIndex(sum.Markdown[:maxMarkdown], "\n"), 0)
		sum.Markdown = sum.Markdown[:cut] + "\n\n_(cut: the full comparison is in the dashboard)_\n"
	}
	return sum
}

// worse tells whether a metric's change is a regression (nil: it has no direction).
func worse(m Metric) (bool, bool) {
	if m.HigherIsWorse == nil || m.Change == nil || *m.Change == 0 {
		return false, false
	}
	return (*m.Change > 0) == *m.HigherIsWorse, true
}

func metricCell(t Test, name string) string {
	if t.Comparison == nil {
		return "–"
	}
	for _, m := range t.Comparison.Metrics {
		if m.Name != name || m.Target == nil {
			continue
		}
		out := format(name, *m.Target, true)
		if m.Change == nil {
			return out
		}
		d := signed(name, *m.Change)
		out += " (" + d
		if sp := spreadOf(m); sp > 0 && d != "=" {
			out += " ±" + format(name, sp, false)
		}
		out += ")"
		if w, ok := worse(m); ok && beyondNoise(m) {
			if w {
				out += " 🔺"
			} else {
				out += " 🟢"
			}
		}
		return out
	}
	return "–"
}

// beyondNoise tells whether a change is more than noise: beyond both audits' run spreads, or,
// when a spread is unknown (a series' test keeps its median run only), at least the least
// change regression detection counts for the metric by default.
func beyondNoise(m Metric) bool {
	if m.BeyondSpread {
		return true
	}
	if m.Change == nil || m.Base == nil || (m.BaseSpread != nil && m.TargetSpread != nil) {
		return false
	}
	w, ok := regression.Lookup(m.Name)
	if !ok {
		return false
	}
	least := math.Max(w.Default.Relative*math.Abs(*m.Base), w.Default.Absolute)
	return math.Abs(*m.Change) >= least
}

// spreadOf is the larger of both audits' run spreads.
func spreadOf(m Metric) float64 {
	sp := 0.0
	for _, v := range []*float64{m.BaseSpread, m.TargetSpread} {
		if v != nil {
			sp = math.Max(sp, *v)
		}
	}
	return sp
}

func format(name string, v float64, unit bool) string {
	switch name {
	case "cls":
		return fmt.Sprintf("%.3f", v)
	case "performance_score":
		return fmt.Sprintf("%.0f", v)
	}
	if unit {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func signed(name string, d float64) string {
	s := format(name, d, false)
	if d > 0 {
		s = "+" + s
	}
	if s == "0" || s == "0.000" || s == "-0" {
		return "="
	}
	return s
}

// regressed lists the metrics of a test that got worse beyond the runs' spread.
func regressed(t Test) []Metric {
	if t.Comparison == nil {
		return nil
	}
	var out []Metric
	for _, m := range t.Comparison.Metrics {
		if w, ok := worse(m); ok && w && beyondNoise(m) {
			out = append(out, m)
		}
	}
	return out
}

// writeCauses lists, for a test with changes beyond noise, what the comparison found: the
// requests added, grown or slowed, the LCP element and phases, the new layout shifts, the long
// tasks grown and the scripts they are attributed to.
func writeCauses(b *strings.Builder, s Series, t Test) {
	bad := regressed(t)
	if len(bad) == 0 {
		return
	}
	names := make([]string, len(bad))
	for i, m := range bad {
		names[i] = fmt.Sprintf("%s %s", m.Name, signed(m.Name, *m.Change))
	}
	fmt.Fprintf(b, "\n<details><summary><b>%s</b> on %s: %s</summary>\n\n", cell(t.Page), t.Device, strings.Join(names, ", "))
	if l := t.Comparison.Loads; l == nil {
		b.WriteString("- no diagnostics kept for one of the audits: only the metrics compare\n")
	} else {
		l.writeRequests(b)
		l.writeLCP(b)
		l.writeLayoutShifts(b)
		l.writeLongTasks(b)
	}
	if u := compareLink(s, t); u != "" {
		fmt.Fprintf(b, "\n[Open the comparison](%s)\n", u)
	}
	b.WriteString("\n</details>\n")
}

// writeRequests lists the first maxCauses requests added, grown or slowed.
func (l *Loads) writeRequests(b *strings.Builder) {
	n := 0
	for _, r := range l.Requests {
		if n == maxCauses || (r.Kind != "added" && r.Kind != "grown" && r.Kind != "slowed") {
			continue
		}
		n++
		what := []string{}
		if r.SizeChange != 0 {
			what = append(what, fmt.Sprintf("%+.0f KiB", float64(r.SizeChange)/1024)) // binary units, as the dashboard and Lighthouse
		}
		if r.TimeChange != 0 {
			what = append(what, fmt.Sprintf("%+.0f ms", r.TimeChange))
		}
		if r.RenderBlocking {
			what = append(what, "render-blocking")
		}
		if r.ThirdParty {
			tp := "third party"
			if r.Entity != "" {
				tp += " (" + r.Entity + ")"
			}
			what = append(what, tp)
		}
		fmt.Fprintf(b, "- request %s: `%s` %s, %s\n", r.Kind, code(r.URL), r.ResourceType, strings.Join(what, ", "))
	}
}

// writeLCP says whether the LCP element changed and which of its phases moved by 1 ms or more.
func (l *Loads) writeLCP(b *strings.Builder) {
	lb, lt := l.LCP.Base, l.LCP.Target
	if lt == nil {
		return
	}
	if l.LCP.ElementChanged && lb != nil {
		fmt.Fprintf(b, "- LCP element changed: `%s` → `%s`\n", code(lb.Selector), code(lt.Selector))
	}
	var phases []string
	for _, p := range l.LCP.Phases {
		if math.Abs(p.Change) >= 1 {
			phases = append(phases, fmt.Sprintf("%s %+.0f ms", p.Name, p.Change))
		}
	}
	if len(phases) > 0 {
		fmt.Fprintf(b, "- LCP phases (`%s`): %s\n", code(lt.Selector), strings.Join(phases, ", "))
	}
}

// writeLayoutShifts lists the first maxCauses new layout shifts, with their elements and
// causes.
func (l *Loads) writeLayoutShifts(b *strings.Builder) {
	for i, sh := range l.LayoutShifts {
		if i == maxCauses {
			break
		}
		var els, causes []string
		for _, e := range sh.Elements {
			els = append(els, "`"+code(e.Selector)+"`")
		}
		for _, c := range sh.Causes {
			causes = append(causes, strings.TrimSpace(c.Kind+" "+code(c.URL)))
		}
		line := fmt.Sprintf("- new layout shift %.3f at %.0f ms", sh.Score, sh.Time)
		if len(els) > 0 {
			line += " of " + strings.Join(els, ", ")
		}
		if len(causes) > 0 {
			line += " (" + strings.Join(causes, "; ") + ")"
		}
		b.WriteString(line + "\n")
	}
}

// writeLongTasks says how the long tasks grew, when by minLongTaskGrowth or more, and the
// first maxCauses scripts they are attributed to.
func (l *Loads) writeLongTasks(b *strings.Builder) {
	lt := l.LongTasks
	if lt.Target.Total-lt.Base.Total < minLongTaskGrowth {
		return
	}
	fmt.Fprintf(b, "- long tasks: %d → %d, %.0f → %.0f ms in all (%+.0f ms), the longest %.0f ms\n",
		lt.Base.Count, lt.Target.Count, lt.Base.Total, lt.Target.Total, lt.Target.Total-lt.Base.Total, lt.Target.Longest)
	for i, s := range lt.Scripts {
		if i == maxCauses {
			break
		}
		who := "`" + code(s.URL) + "`"
		if s.URL == "" {
			who = "tasks of no script"
		}
		fmt.Fprintf(b, "  - %s: %+.0f ms (%d → %d tasks)\n", who, s.Change, s.Base.Count, s.Target.Count)
	}
}

// compareLink is the dashboard's comparison of a test with its base.
func compareLink(s Series, t Test) string {
	c := t.Comparison
	if c == nil || s.Dashboard == "" {
		return ""
	}
	base := c.Base.Test
	if base == "" {
		base = c.Base.Date
	}
	q := url.Values{"page": {t.PageID}, "device": {t.Device}, "base": {base}, "target": {t.ID}}
	return s.Dashboard + "#/w/" + url.PathEscape(s.Website) + "/compare?" + q.Encode()
}

// cell makes text safe in a table cell: one line, no pipe, no HTML.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "<", "&lt;", ">", "&gt;").Replace(oneLine(s))
}

// code makes text safe inside backticks.
func code(s string) string { return strings.ReplaceAll(oneLine(s), "`", "'") }

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// DeviceCell names a test's device and how it was measured, and the base's method when it
// differs: the two are then not comparable, as a switch of method starts a new baseline.
func DeviceCell(t Test) string {
	if t.Method == "" {
		return t.Device
	}
	out := t.Device + ", " + t.Method
	if c := t.Comparison; c != nil && c.Base.Method != "" && c.Base.Method != t.Method {
		out += " (base: " + c.Base.Method + ")"
	}
	return out
}
