package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// Group is an endpoint group: the endpoints one Lambda function serves (functions/<Name>).
type Group struct {
	Name      string
	endpoints func(*Server) []endpoint
}

// The endpoint groups, each declared with its endpoints below. A function's main serves its
// group's variable, so that its binary links that group's handlers only.
var (
	Websites  = Group{"websites", (*Server).websitesEndpoints}
	Pages     = Group{"pages", (*Server).pagesEndpoints}
	Budgets   = Group{"budgets", (*Server).budgetsEndpoints}
	Multistep = Group{"multistep", (*Server).multistepEndpoints}
	Lab       = Group{"lab", (*Server).labEndpoints}
	Field     = Group{"field", (*Server).fieldEndpoints}
	RUM       = Group{"rum", (*Server).rumEndpoints}
	Events    = Group{"events", (*Server).eventsEndpoints}
	Web       = Group{"web", (*Server).webEndpoints}
)

// Groups lists the endpoint groups, in the order of routes.json.
func Groups() []Group {
	return []Group{Websites, Pages, Budgets, Multistep, Lab, Field, RUM, Events, Web}
}

// defaultGroup answers the requests no route matches (API Gateway's $default route), so that
// an unknown path or method gets a problem+json 404 or 405 in AWS as it does locally. (A
// function, not a variable: a variable initialized from Websites would make every function
// link the websites handlers.)
func defaultGroup() Group { return Websites }

// access is who may call a route.
type access string

const (
	public access = "public" // anyone, without an API key
	viewer access = "viewer" // any key of the account
	admin  access = "admin"  // an admin key; a viewer key gets 403
)

// endpoint is one endpoint of a group: its method and path pattern (net/http ServeMux
// syntax), who may call it, and its handler.
type endpoint struct {
	method  string
	pattern string
	access  access
	handle  handlerFunc
}

// route is an endpoint with the group that serves it.
type route struct {
	group string
	endpoint
}

// routes lists the endpoints of groups.
func (s *Server) routes(groups ...Group) []route {
	var out []route
	for _, g := range groups {
		for _, e := range g.endpoints(s) {
			out = append(out, route{g.Name, e})
		}
	}
	return out
}

// websitesEndpoints and the functions after it declare the endpoints of the interface, each
// once, per group: Serve and Handler serve them, and routes.json, which the CDK app builds API
// Gateway's routes from, is generated from them. Adding pages and running multistep tests are
// viewer operations: the original interface lets any key of the account do both. So is starting
// a test series, which any key of the account may (a CI job's key is often a viewer's).
func (s *Server) websitesEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/websites", viewer, s.listWebsites},
		{"GET", "/account", viewer, whoAmI},
		{"POST", "/account/websites", admin, s.createWebsite},
		{"DELETE", "/{websiteID}", admin, s.deleteWebsite},
		{"GET", "/{websiteID}/integrations/search-console", viewer, s.getSearchConsole},
		{"PUT", "/{websiteID}/integrations/search-console", admin, s.putSearchConsole},
		{"DELETE", "/{websiteID}/integrations/search-console", admin, s.deleteSearchConsole},
		// Data settings (daily exports, retention) and an export on demand: admins change them.
		{"GET", "/{websiteID}/data-settings", viewer, s.getDataSettings},
		{"PUT", "/{websiteID}/data-settings", admin, s.putDataSettings},
		{"POST", "/{websiteID}/exports", admin, s.createExport},
		{"GET", "/openapi.json", public, serveOpenAPI},
	}
}

func (s *Server) pagesEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/settings/pages", viewer, s.listPageSettings},
		{"POST", "/{websiteID}/settings/pages", viewer, s.createPages},
		{"PUT", "/{websiteID}/settings/{pageID}", admin, s.updatePage},
		{"DELETE", "/{websiteID}/settings/{pageID}", admin, s.deletePage},
		// Test profiles: read by any key (their secrets never shown), managed by admins.
		{"GET", "/{websiteID}/profiles", viewer, listItems(s, s.profileKind())},
		{"POST", "/{websiteID}/profiles", admin, createItem(s, s.profileKind())},
		{"GET", "/{websiteID}/profiles/{profileID}", viewer, getItem(s, s.profileKind())},
		{"PUT", "/{websiteID}/profiles/{profileID}", admin, updateItem(s, s.profileKind())},
		{"DELETE", "/{websiteID}/profiles/{profileID}", admin, deleteItem(s, s.profileKind())},
	}
}

func (s *Server) budgetsEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/budgets", viewer, s.listBudgets},
		{"POST", "/{websiteID}/budgets", admin, createItem(s, s.budgetKind())},
		{"PUT", "/{websiteID}/budgets/{budgetID}", admin, updateItem(s, s.budgetKind())},
		{"DELETE", "/{websiteID}/budgets/{budgetID}", admin, deleteItem(s, s.budgetKind())},
	}
}

func (s *Server) multistepEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/multistep", viewer, s.listTests},
		{"GET", "/{websiteID}/multistep/{testID}", viewer, getItem(s, s.testKind())},
		{"POST", "/{websiteID}/multistep", admin, createItem(s, s.testKind())},
		{"PUT", "/{websiteID}/multistep/{testID}", admin, updateItem(s, s.testKind())},
		{"DELETE", "/{websiteID}/multistep/{testID}", admin, deleteItem(s, s.testKind())},
		{"POST", "/{websiteID}/multistep/run-all", viewer, s.runAll},
		{"GET", "/{websiteID}/multistep/{testID}/runs", viewer, s.listRuns},
		{"POST", "/{websiteID}/multistep/{testID}/runs", viewer, s.startRun},
		{"GET", "/{websiteID}/multistep/{testID}/runs/{runID}/screenshot", viewer, s.runScreenshot},
	}
}

func (s *Server) labEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/pages", viewer, s.listPageMetrics},
		{"GET", "/{websiteID}/pages/{pageID}", viewer, s.pageDetail},
		{"GET", "/{websiteID}/pages/{pageID}/timeline", viewer, s.pageTimeline},
		{"GET", "/{websiteID}/pages/{pageID}/network", viewer, s.pageNetwork},
		{"GET", "/{websiteID}/pages/{pageID}/ux-history", viewer, s.pageUXHistory},
		{"GET", "/{websiteID}/pages/{pageID}/compare", viewer, s.comparePage},
		{"GET", "/{websiteID}/opportunities", viewer, s.websiteOpportunities},
		{"GET", "/{websiteID}/pages/{pageID}/opportunities", viewer, s.pageOpportunities},
		{"GET", "/{websiteID}/pages/{pageID}/opportunities/{opportunityID}", viewer, s.opportunityDetail},
		{"POST", "/{websiteID}/audits", admin, s.queueAudits},
		// The HTML report is for browsers, whose frames cannot send the key: a viewer asks for
		// a short-lived link, which opens it without one.
		{"POST", "/{websiteID}/pages/{pageID}/report-link", viewer, s.createReportLink},
		{"GET", "/{websiteID}/lighthouse-report", public, s.lighthouseReport},
		// Diagnostics of a day's audit: its images come with the key too (the dashboard makes
		// blob: URLs of them), never inlined into the JSON.
		{"GET", "/{websiteID}/pages/{pageID}/diagnostics", viewer, s.pageDiagnostics},
		{"GET", "/{websiteID}/pages/{pageID}/diagnostics/images/{name}", viewer, s.diagnosticsImage},
		{"GET", "/{websiteID}/pages/{pageID}/diagnostics/har", viewer, s.diagnosticsHAR},
		{"POST", "/{websiteID}/testseries", viewer, s.startTestSeries},
		{"GET", "/{websiteID}/testseries", viewer, s.listTestSeries},
		{"GET", "/{websiteID}/testseries/{seriesID}", viewer, s.getTestSeries},
		{"GET", "/{websiteID}/tests/{testID}", viewer, s.testReport},
		// The website's latest metrics for a Prometheus scraper (text format or OpenMetrics).
		{"GET", "/{websiteID}/metrics", viewer, s.websiteMetrics},
		// Experiments: a page audited with changes beside its control, admins start them.
		{"POST", "/{websiteID}/experiments", admin, s.createExperiment},
		{"GET", "/{websiteID}/experiments", viewer, listItems(s, s.experimentKind())},
		{"GET", "/{websiteID}/experiments/{experimentID}", viewer, s.getExperiment},
		{"DELETE", "/{websiteID}/experiments/{experimentID}", admin, deleteItem(s, s.experimentKind())},
	}
}

func (s *Server) fieldEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/field-testing/pages", viewer, s.fieldReport(rum.DimPages)},
		{"GET", "/{websiteID}/field-testing/countries", viewer, s.fieldReport(rum.DimCountries)},
		{"GET", "/{websiteID}/field-testing/trend", viewer, s.fieldTrend},
		{"GET", "/{websiteID}/field-testing/distribution", viewer, s.fieldDistribution},
		{"GET", "/{websiteID}/field-testing/segments", viewer, s.fieldSegments},
		{"GET", "/{websiteID}/field-testing/attributions", viewer, s.fieldAttributions},
		{"GET", "/{websiteID}/field-testing/settings", viewer, s.getRUMSettings},
		{"PUT", "/{websiteID}/field-testing/settings", admin, s.putRUMSettings},
	}
}

// eventsEndpoints are the activity feed, the channels notifications go to, and what informs
// them: regressions (with their thresholds) and annotations. Channels are read by any key
// (their URLs masked) and managed by admins; a regression is acknowledged, an annotation made,
// by an admin.
func (s *Server) eventsEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/{websiteID}/events", viewer, s.listEvents},
		{"GET", "/{websiteID}/channels", viewer, listItems(s, s.channelKind())},
		{"POST", "/{websiteID}/channels", admin, createItem(s, s.channelKind())},
		{"GET", "/{websiteID}/channels/{channelID}", viewer, getItem(s, s.channelKind())},
		{"PUT", "/{websiteID}/channels/{channelID}", admin, updateItem(s, s.channelKind())},
		{"DELETE", "/{websiteID}/channels/{channelID}", admin, deleteItem(s, s.channelKind())},
		{"POST", "/{websiteID}/channels/{channelID}/test", admin, s.testChannel},
		{"GET", "/{websiteID}/channels/{channelID}/deliveries", viewer, s.listDeliveries},
		{"GET", "/{websiteID}/incidents", viewer, s.listIncidents},
		{"GET", "/{websiteID}/incidents/{incidentID}", viewer, s.getIncident},
		{"POST", "/{websiteID}/incidents/acknowledge", admin, s.acknowledgeIncidents},
		{"GET", "/{websiteID}/regressions", viewer, s.listRegressions},
		{"GET", "/{websiteID}/regressions/{regressionID}", viewer, s.getRegression},
		{"PUT", "/{websiteID}/regressions/{regressionID}", admin, s.updateRegression},
		{"GET", "/{websiteID}/regression-thresholds", viewer, s.getRegressionThresholds},
		{"PUT", "/{websiteID}/regression-thresholds", admin, s.putRegressionThresholds},
		{"GET", "/{websiteID}/annotations", viewer, s.listAnnotations},
		{"POST", "/{websiteID}/annotations", admin, s.createAnnotation},
	}
}

func (s *Server) rumEndpoints() []endpoint {
	return []endpoint{
		// The RUM snippet a website includes and the endpoint its beacons go to. Any origin may
		// call them; they take no API key, so they reveal nothing: a known website ID is all
		// they accept, and no answer repeats what was sent.
		{"GET", "/rum/{file}", public, anyOrigin(s.snippet)},
		{"POST", "/collect", public, anyOrigin(s.collect)},
		{"OPTIONS", "/collect", public, anyOrigin(s.collectPreflight)},
	}
}

// webEndpoints serve the dashboard's files (internal/web): public, as they hold no data; the
// dashboard calls the other groups' endpoints with the user's key.
func (s *Server) webEndpoints() []endpoint {
	return []endpoint{
		{"GET", "/app", public, s.serveDashboard},
		{"GET", "/app/{file...}", public, s.serveDashboard},
	}
}

// Serve serves the endpoints of one group, for the Lambda function of that group.
func (s *Server) Serve(g Group) http.Handler { return s.mux(s.routes(g)) }

// Handler serves every group, for the local service. The RUM and web groups' public paths
// overlap the website patterns (/rum/x, /app/x against /{websiteID}/x): in AWS they are routes
// of their own, here a request goes to such a group when its path has the shape of one of the
// group's patterns.
func (s *Server) Handler() http.Handler {
	own := map[string][]route{} // group -> routes, for the groups with paths of their own
	var others []route
	for _, rt := range s.routes(Groups()...) {
		if rt.group == RUM.Name || rt.group == Web.Name {
			own[rt.group] = append(own[rt.group], rt)
		} else {
			others = append(others, rt)
		}
	}
	type served struct {
		shape func(string) bool
		mux   http.Handler
	}
	var groups []served
	for _, routes := range own {
		groups = append(groups, served{pathShapes(routes), s.mux(routes)})
	}
	othersMux := s.mux(others)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, g := range groups {
			if g.shape(r.URL.Path) {
				g.mux.ServeHTTP(w, r)
				return
			}
		}
		othersMux.ServeHTTP(w, r)
	})
}

// pathShapes tells whether a path has the shape of one of the routes' patterns, whatever the
// method: it starts with the literal part of a pattern with a wildcard, or equals a pattern
// without one.
func pathShapes(routes []route) func(path string) bool {
	var prefixes, exact []string
	for _, rt := range routes {
		if literal, _, wild := strings.Cut(rt.pattern, "{"); wild {
			prefixes = append(prefixes, literal)
		} else {
			exact = append(exact, rt.pattern)
		}
	}
	return func(path string) bool {
		return slices.Contains(exact, path) || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(path, p) })
	}
}

// mux serves routes, each behind its access check, with problem answers for anything else.
func (s *Server) mux(routes []route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.pattern, s.serve(rt))
	}
	return s.finish(mux)
}

// serve runs a route's handler for a caller its access admits, with path values that can name
// something. This is where every error, the handler's or the checks', becomes a problem
// response.
func (s *Server) serve(rt route) http.HandlerFunc {
	vars := pathVariables(rt.pattern)
	return func(w http.ResponseWriter, r *http.Request) {
		var c caller
		var err error
		if rt.access != public {
			c, err = s.authenticate(r)
			if err == nil && rt.access == admin && c.role != model.RoleAdmin {
				err = errForbidden
			}
		}
		if err == nil {
			err = checkPathValues(r, vars)
		}
		if err == nil {
			err = rt.handle(w, r, c)
		}
		if err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

// maxPathValue bounds every path value: identifiers and file names are far shorter, and a
// longer value could not even be looked up (DynamoDB refuses keys over 1,024 bytes).
const maxPathValue = 256

// pathVariables names the wildcards of a route pattern: websiteID for {websiteID}, file for
// {file...}.
func pathVariables(pattern string) []string {
	var names []string
	for rest := pattern; ; {
		_, after, ok := strings.Cut(rest, "{")
		if !ok {
			return names
		}
		name, tail, _ := strings.Cut(after, "}")
		names = append(names, strings.TrimSuffix(name, "..."))
		rest = tail
	}
}

// checkPathValues answers 404 for a path value longer than any that names something.
func checkPathValues(r *http.Request, vars []string) error {
	for _, v := range vars {
		if len(r.PathValue(v)) > maxPathValue {
			return newProblem(http.StatusNotFound, fmt.Sprintf("%s not found: no %s is longer than %d bytes", v, v, maxPathValue))
		}
	}
	return nil
}

// anyOrigin lets pages of any origin read a public endpoint's answers, errors included (no
// credentials are involved).
func anyOrigin(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		return h(w, r, c)
	}
}

// routesJSON is routes.json: the route table as the CDK app reads it, without handlers.
func routesJSON() ([]byte, error) {
	type routeJSON struct {
		Group   string `json:"group"`
		Method  string `json:"method"`
		Pattern string `json:"pattern"`
		Access  access `json:"access"`
	}
	doc := struct {
		DefaultGroup string      `json:"defaultGroup"`
		Routes       []routeJSON `json:"routes"`
	}{DefaultGroup: defaultGroup().Name}
	for _, rt := range (&Server{}).routes(Groups()...) {
		doc.Routes = append(doc.Routes, routeJSON{Group: rt.group, Method: rt.method, Pattern: rt.pattern, Access: rt.access})
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}
