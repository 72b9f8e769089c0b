package metrics

import "slices"

// Name is how a person reads a metric field: its short and full name, its unit and, for the
// metrics with published thresholds, where good ends and poor begins. Names is the one
// declaration of them: the dashboard's metric-names.js and the table in docs/api.md are
// generated from it (and tests keep both so).
type Name struct {
	// Field is the metric's interface name (lcp, ux_lcp, performance_score...).
	Field string `json:"field"`
	// Label is the short name a table header or legend shows ("LCP").
	Label string `json:"label"`
	// Title spells the metric out ("Largest Contentful Paint").
	Title string `json:"title"`
	// Unit is ms, KiB, B, score (0 to 100) or "" for a unitless number. Sizes are binary
	// (1 KiB = 1,024 B), as Lighthouse's: people read one unit system everywhere.
	Unit string `json:"unit"`
	// Source says where the value comes from: the lab, the Chrome UX Report or real users.
	Source string `json:"source"`
	// Good and Poor are the thresholds (inclusive good, poor beyond Poor); both 0 without any.
	Good float64 `json:"good,omitempty"`
	Poor float64 `json:"poor,omitempty"`
	// Higher is true when a higher value is better (scores).
	Higher bool `json:"higher,omitempty"`
}

const (
	sourceLab  = "lab"
	sourceCrUX = "Chrome UX Report p75"
	sourceNav  = "the document's request in the lab load (observed)"
)

// Names are the metric fields people read, in the order the dashboard and docs list them.
var Names = []Name{
	{Field: "performance_score", Label: "Performance", Title: "Lighthouse performance score", Unit: "score", Source: sourceLab, Good: 90, Poor: 50, Higher: true},
	{Field: "accessibility_score", Label: "Accessibility", Title: "Lighthouse accessibility score", Unit: "score", Source: sourceLab, Good: 90, Poor: 50, Higher: true},
	{Field: "best_practices_score", Label: "Best practices", Title: "Lighthouse best-practices score", Unit: "score", Source: sourceLab, Good: 90, Poor: 50, Higher: true},
	{Field: "seo_score", Label: "SEO", Title: "Lighthouse SEO score", Unit: "score", Source: sourceLab, Good: 90, Poor: 50, Higher: true},
	{Field: "lcp", Label: "LCP", Title: "Largest Contentful Paint", Unit: "ms", Source: sourceLab, Good: 2500, Poor: 4000},
	{Field: "fcp", Label: "FCP", Title: "First Contentful Paint", Unit: "ms", Source: sourceLab, Good: 1800, Poor: 3000},
	{Field: "cls", Label: "CLS", Title: "Cumulative Layout Shift", Unit: "", Source: sourceLab, Good: 0.1, Poor: 0.25},
	{Field: "tbt", Label: "TBT", Title: "Total Blocking Time", Unit: "ms", Source: sourceLab, Good: 200, Poor: 600},
	{Field: "ttfb", Label: "TTFB", Title: "Time To First Byte", Unit: "ms", Source: sourceLab, Good: 800, Poor: 1800},
	{Field: "speed_index", Label: "Speed Index", Title: "Speed Index", Unit: "ms", Source: sourceLab, Good: 3400, Poor: 5800},
	{Field: "tti", Label: "TTI", Title: "Time To Interactive", Unit: "ms", Source: sourceLab},
	{Field: "inp", Label: "INP", Title: "Interaction to Next Paint", Unit: "ms", Source: "real users", Good: 200, Poor: 500},
	{Field: "fid", Label: "FID", Title: "First Input Delay", Unit: "ms", Source: "real users", Good: 100, Poor: 300},
	{Field: "kb_total", Label: "Transfer", Title: "Total transfer size", Unit: "KiB", Source: sourceLab},
	{Field: "requests", Label: "Requests", Title: "Number of requests", Unit: "", Source: sourceLab},
	{Field: "cpu_total", Label: "CPU", Title: "Main-thread CPU time", Unit: "ms", Source: sourceLab},
	{Field: "opportunities", Label: "Opportunities", Title: "Failed Lighthouse audits", Unit: "", Source: sourceLab},
	{Field: "validation_errors", Label: "HTML errors", Title: "HTML validation errors", Unit: "", Source: sourceLab},
	{Field: "ux_lcp", Label: "Field LCP", Title: "Largest Contentful Paint of Chrome users", Unit: "ms", Source: sourceCrUX, Good: 2500, Poor: 4000},
	{Field: "ux_inp", Label: "Field INP", Title: "Interaction to Next Paint of Chrome users", Unit: "ms", Source: sourceCrUX, Good: 200, Poor: 500},
	{Field: "ux_cls", Label: "Field CLS", Title: "Cumulative Layout Shift of Chrome users", Unit: "", Source: sourceCrUX, Good: 0.1, Poor: 0.25},
	{Field: "ux_fcp", Label: "Field FCP", Title: "First Contentful Paint of Chrome users", Unit: "ms", Source: sourceCrUX, Good: 1800, Poor: 3000},
	{Field: "ux_ttfb", Label: "Field TTFB", Title: "Time To First Byte of Chrome users", Unit: "ms", Source: sourceCrUX, Good: 800, Poor: 1800},
	{Field: "dns_time", Label: "DNS", Title: "DNS lookup", Unit: "ms", Source: sourceNav},
	{Field: "connect_time", Label: "Connect", Title: "Connection establishment", Unit: "ms", Source: sourceNav},
	{Field: "server_time", Label: "Server", Title: "Waiting for the server (after the request is sent)", Unit: "ms", Source: sourceNav},
	{Field: "transfer_time", Label: "Download", Title: "Transfer of the response", Unit: "ms", Source: sourceNav},
	{Field: "dom_ready", Label: "DOM ready", Title: "Until DOMContentLoaded", Unit: "ms", Source: sourceLab},
	{Field: "on_load", Label: "Load", Title: "Until the load event", Unit: "ms", Source: sourceLab},
	{Field: "dom_elements", Label: "DOM elements", Title: "Number of DOM elements", Unit: "", Source: sourceLab},
	{Field: "dom_max_depth", Label: "DOM depth", Title: "Maximum DOM depth", Unit: "", Source: sourceLab},
	{Field: "bytes_total", Label: "Bytes", Title: "Bytes transferred", Unit: "B", Source: sourceLab},
	{Field: "bytes_doc", Label: "Document bytes", Title: "Bytes of documents", Unit: "B", Source: sourceLab},
	{Field: "bytes_js", Label: "JavaScript bytes", Title: "Bytes of JavaScript", Unit: "B", Source: sourceLab},
	{Field: "bytes_css", Label: "CSS bytes", Title: "Bytes of style sheets", Unit: "B", Source: sourceLab},
	{Field: "bytes_image", Label: "Image bytes", Title: "Bytes of images", Unit: "B", Source: sourceLab},
	{Field: "bytes_font", Label: "Font bytes", Title: "Bytes of fonts", Unit: "B", Source: sourceLab},
	{Field: "bytes_media", Label: "Media bytes", Title: "Bytes of audio and video", Unit: "B", Source: sourceLab},
	{Field: "bytes_other", Label: "Other bytes", Title: "Bytes of other requests", Unit: "B", Source: sourceLab},
	{Field: "bytes_thirdparty", Label: "Third-party bytes", Title: "Bytes of third-party requests", Unit: "B", Source: sourceLab},
	{Field: "duration", Label: "Duration", Title: "Duration of a multistep run", Unit: "ms", Source: "multistep runs"},
}

// Phases name the four phases of the Largest Contentful Paint (diagnostics, comparisons and
// regressions' causes give them by Field), in the order they add up to it.
var Phases = []Name{
	{Field: "ttfb", Label: "Time to first byte", Title: "Until the document's first byte", Unit: "ms"},
	{Field: "loadDelay", Label: "Load delay", Title: "From the first byte until the LCP resource starts loading", Unit: "ms"},
	{Field: "loadDuration", Label: "Load duration", Title: "Loading the LCP resource", Unit: "ms"},
	{Field: "renderDelay", Label: "Render delay", Title: "From the LCP resource loaded until the element is painted", Unit: "ms"},
}

// IsLab says whether a field is measured by the lab's audits (and so by a measurement method).
func IsLab(field string) bool {
	n, ok := nameOf(Names, field)
	return ok && (n.Source == sourceLab || n.Source == sourceNav)
}

// Label is a metric's short name ("LCP"), its field when Names has none.
func Label(field string) string { return labelOf(Names, field) }

// PhaseLabel is an LCP phase's name ("Load delay"), its field when Phases has none.
func PhaseLabel(field string) string { return labelOf(Phases, field) }

// nameOf finds field's name in names.
func nameOf(names []Name, field string) (Name, bool) {
	i := slices.IndexFunc(names, func(n Name) bool { return n.Field == field })
	if i < 0 {
		return Name{}, false
	}
	return names[i], true
}

// labelOf is field's label in names, the field itself when names has none.
func labelOf(names []Name, field string) string {
	if n, ok := nameOf(names, field); ok {
		return n.Label
	}
	return field
}
