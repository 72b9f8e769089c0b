package api

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// A metric family of GET /{websiteID}/metrics: its name, help and labels. Every label names a
// monitored page (its ID and its alias, else its path), a device or a metric of a fixed list,
// so a scrape's series are bounded by the website's pages: a real-user page that is not
// monitored never becomes a label.
type metricFamily struct {
	Name, Help string
	Labels     []string
}

// The families, declared once: the handler fills them, and the Grafana dashboard's test
// checks every name its queries use against what the endpoint exposes.
var (
	famLab = metricFamily{"openvitals_lab_metric",
		"Latest lab value of a monitored page on a device (the pages list's latest: the mean of its last 3 audited days measured by the newest result's method, applied or simulated throttling, which the method label names). Timings in ms, cls unitless, scores 0 to 100, kb_total in kB, cpu_total in ms.",
		[]string{"page_id", "page", "device", "method", "metric"}}
	famUX = metricFamily{"openvitals_ux_p75",
		"75th percentile of the user-experience dataset for a monitored page on a device (mean of its last 3 days). ms, cls unitless.",
		[]string{"page_id", "page", "device", "metric"}}
	famRUM = metricFamily{"openvitals_rum_p75",
		"75th percentile of real users' page views of a monitored page over the last 28 days, all devices. ms, cls unitless.",
		[]string{"page_id", "page", "metric"}}
	famRUMViews = metricFamily{"openvitals_rum_page_views",
		"Real users' page views of a monitored page over the last 28 days.",
		[]string{"page_id", "page"}}
	famExceeded = metricFamily{"openvitals_budgets_exceeded",
		"Budgets a monitored page exceeds on a device, judged on its latest values.",
		[]string{"page_id", "page", "device"}}
	famAtRisk = metricFamily{"openvitals_budgets_at_risk",
		"Budgets a monitored page is at risk of exceeding on a device (within 10 % of the threshold).",
		[]string{"page_id", "page", "device"}}
	famBudget = metricFamily{"openvitals_budget_threshold",
		"A budget's threshold, in its metric's unit.",
		[]string{"budget_id", "metric", "operator", "device"}}
	famPageIncidents = metricFamily{"openvitals_incidents_open",
		"Open regression incidents of a monitored page.",
		[]string{"page_id", "page"}}
	famSiteIncidents = metricFamily{"openvitals_website_incidents_open",
		"Open regression incidents of the website, multistep tests' included.",
		nil}
	famPages = metricFamily{"openvitals_pages_monitored",
		"Monitored pages of the website the scrape covers.",
		nil}

	metricFamilies = []metricFamily{famLab, famUX, famRUM, famRUMViews, famExceeded, famAtRisk, famBudget,
		famPageIncidents, famSiteIncidents, famPages}
)

// MetricFamilies returns the families GET /{websiteID}/metrics may expose, by name, with their
// label names (website, which every series has, included).
func MetricFamilies() map[string][]string {
	out := make(map[string][]string, len(metricFamilies))
	for _, f := range metricFamilies {
		out[f.Name] = append([]string{"website"}, f.Labels...)
	}
	return out
}

// labMetricFields are the lab fields exposed: the pages list's lab fields.
var labMetricFields = pageFields

// rumMetricFields are the real-user metrics exposed, those the user-experience dataset has too.
var rumMetricFields = metrics.UXVitals

// rumWindowDays is the real users' window: the user-experience dataset's 28 days, so that both
// p75 compare.
const rumWindowDays = 28

// websiteMetrics answers the website's metrics in Prometheus' text format or OpenMetrics, as
// the scraper's Accept header asks (promhttp negotiates).
func (s *Server) websiteMetrics(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	read, err := s.readWebsiteMetrics(r, site)
	if err != nil {
		return err
	}
	// Gathered here so that an error is a problem response like any other; promhttp then only
	// negotiates the format and writes it.
	families, err := read.gauges(site).Gather()
	if err != nil {
		return err
	}
	gathered := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return families, nil })
	promhttp.HandlerFor(gathered, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
	return nil
}

// websiteReadings are what a website's metrics are made of. All of it is the website's own
// and bounded by it (its pages by pages_per_website).
type websiteReadings struct {
	budgets   []model.Budget
	listings  []metrics.Listing // its pages' rows as the whole pages list reads them
	incidents []model.Incident
	pages     map[string]model.Page // the pages listed, by ID
	views     map[string]rum.Row    // one real-user report, by page
}

// readWebsiteMetrics reads what a website's metrics are made of.
func (s *Server) readWebsiteMetrics(r *http.Request, site model.Website) (websiteReadings, error) {
	var read websiteReadings
	var err error
	if read.budgets, err = s.store.Budgets(r.Context(), site); err != nil {
		return read, err
	}
	if read.listings, _, err = s.metrics.Listings(r.Context(), site, "", 0); err != nil { // every page, as the whole pages list
		return read, err
	}
	if read.incidents, err = s.incidents(r.Context(), site); err != nil {
		return read, err
	}
	read.pages = map[string]model.Page{}
	for _, l := range read.listings {
		read.pages[l.Page.ID] = l.Page
	}
	read.views, err = s.rumByPage(r, site, read.pages)
	return read, err
}

// websiteGauges are the gauges of a website's metrics, one per family.
type websiteGauges struct {
	lab, ux, rumP75, rumViews, exceeded, atRisk, thresholds, pageIncidents, siteIncidents, pages *prometheus.GaugeVec
}

// gauges registers the website's gauges and sets them from what was read.
func (read websiteReadings) gauges(site model.Website) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	gauge := func(f metricFamily) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.Name, Help: f.Help,
			ConstLabels: prometheus.Labels{"website": site.ID}}, f.Labels)
		reg.MustRegister(g) // names and labels are this file's constants: a clash is a programming error caught by the tests
		return g
	}
	g := websiteGauges{lab: gauge(famLab), ux: gauge(famUX), rumP75: gauge(famRUM), rumViews: gauge(famRUMViews),
		exceeded: gauge(famExceeded), atRisk: gauge(famAtRisk), thresholds: gauge(famBudget),
		pageIncidents: gauge(famPageIncidents), siteIncidents: gauge(famSiteIncidents), pages: gauge(famPages)}
	for _, b := range read.budgets {
		g.thresholds.WithLabelValues(b.ID, b.Metric, b.Operator, b.Device).Set(b.Value)
	}
	for i := range read.listings {
		g.setListing(&read.listings[i], read.budgets)
	}
	g.pages.WithLabelValues().Set(float64(len(read.pages)))
	for _, p := range read.pages {
		g.setField(p, read.views)
	}
	g.setIncidents(read.incidents, read.pages)
	return reg
}

// setListing sets a page's lab and user-experience values on a device and how many of the
// budgets it is over or at risk of.
func (g websiteGauges) setListing(l *metrics.Listing, budgets []model.Budget) {
	p, dev := l.Page, l.Device
	name := pageLabel(p)
	latest := func(field string) (float64, bool) { return l.LatestValue(l.Field(field)) }
	for _, f := range labMetricFields {
		if v, ok := latest(f); ok {
			g.lab.WithLabelValues(p.ID, name, dev, l.Method(), f).Set(metrics.Round(f, v))
		}
	}
	for _, m := range metrics.UXVitals {
		if v, ok := latest("ux_" + m); ok {
			g.ux.WithLabelValues(p.ID, name, dev, m).Set(v)
		}
	}
	if !l.Empty() {
		ex, risk := budget.Count(budgets, dev, latest)
		g.exceeded.WithLabelValues(p.ID, name, dev).Set(float64(ex))
		g.atRisk.WithLabelValues(p.ID, name, dev).Set(float64(risk))
	}
}

// setField sets a page's real-user views and p75s, and its open incidents to none (until
// setIncidents counts them).
func (g websiteGauges) setField(p model.Page, views map[string]rum.Row) {
	g.pageIncidents.WithLabelValues(p.ID, pageLabel(p)).Set(0)
	row, ok := views[p.ID]
	if !ok {
		return
	}
	g.rumViews.WithLabelValues(p.ID, pageLabel(p)).Set(float64(row.Views))
	for _, m := range rumMetricFields {
		if v, ok := row.P75[m]; ok {
			g.rumP75.WithLabelValues(p.ID, pageLabel(p), m).Set(rum.Round(m, v))
		}
	}
}

// setIncidents counts the open incidents, the website's and each monitored page's.
func (g websiteGauges) setIncidents(incidents []model.Incident, pages map[string]model.Page) {
	open := 0
	for _, in := range incidents {
		if in.State() != model.IncidentOpen {
			continue
		}
		open++
		if id, ok := incidentPage(in); ok {
			if p, monitored := pages[id]; monitored {
				g.pageIncidents.WithLabelValues(p.ID, pageLabel(p)).Inc()
			}
		}
	}
	g.siteIncidents.WithLabelValues().Set(float64(open))
}

// pageLabel names a page in labels: its alias, else its path.
func pageLabel(p model.Page) string {
	if p.Alias != "" {
		return p.Alias
	}
	return p.URL
}

// incidentPage is the page an incident is of, if it is a page's.
func incidentPage(in model.Incident) (string, bool) {
	if len(in.Members) == 0 || in.Members[0].Page == "" {
		return "", false
	}
	return in.Members[0].Page, true
}

// rumByPage reads the website's real-user report of the last rumWindowDays days and keeps the
// rows of monitored pages, by page ID: the report's other keys (paths nobody monitors) are
// never exposed.
func (s *Server) rumByPage(r *http.Request, site model.Website, pages map[string]model.Page) (map[string]rum.Row, error) {
	out := map[string]rum.Row{}
	if s.field == nil || len(pages) == 0 {
		return out, nil
	}
	to := s.now()
	rep, err := s.field.Report(r.Context(), rum.Query{Account: site.Account, Website: site.ID, Dim: rum.DimPages,
		Metrics: slices.Clone(rumMetricFields), From: to.AddDate(0, 0, -(rumWindowDays - 1)), To: to})
	if err != nil {
		return nil, err
	}
	byKey := make(map[string]rum.Row, len(rep.Rows))
	for _, row := range rep.Rows {
		byKey[row.Key] = row
	}
	for _, p := range pages {
		key, _, err := rum.PageKey("https://" + site.Domain + p.URL)
		if err != nil {
			continue // a path no beacon could carry has no views
		}
		if row, ok := byKey[key]; ok {
			out[p.ID] = row
		}
	}
	return out, nil
}
