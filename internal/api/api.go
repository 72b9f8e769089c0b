package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// The endpoint groups: each is served by a Lambda function of its own (functions/<group>).
const (
	groupWebsites  = "websites"
	groupPages     = "pages"
	groupBudgets   = "budgets"
	groupMultistep = "multistep"
	groupLab       = "lab"
	groupField     = "field"
	groupRUM       = "rum"
)

// defaultGroup answers the requests no route matches (API Gateway's $default route), so that
// an unknown path or method gets a problem+json 404 or 405 in AWS as it does locally.
const defaultGroup = groupWebsites

// access is who may call a route.
type access string

const (
	public access = "public" // anyone, without an API key
	viewer access = "viewer" // any key of the account
	admin  access = "admin"  // an admin key; a viewer key gets 403
)

// route is one endpoint: the group that serves it, its method and path pattern (net/http
// ServeMux syntax), who may call it, and its handler.
type route struct {
	group   string
	method  string
	pattern string
	access  access
	handle  handlerFunc
}

// routes declares every endpoint of the interface, once: Group and Handler serve them, and
// routes.json, which the CDK app builds API Gateway's routes from, is generated from them.
//
// Adding pages and running multistep tests are viewer operations: spec/api.md marks neither
// (admin).
func (s *Server) routes() []route {
	return []route{
		{groupWebsites, "GET", "/websites", viewer, s.listWebsites},
		{groupWebsites, "POST", "/account/websites", admin, s.createWebsite},
		{groupWebsites, "DELETE", "/{websiteID}", admin, s.deleteWebsite},
		{groupWebsites, "GET", "/{websiteID}/integrations/search-console", viewer, s.getSearchConsole},
		{groupWebsites, "PUT", "/{websiteID}/integrations/search-console", admin, s.putSearchConsole},
		{groupWebsites, "DELETE", "/{websiteID}/integrations/search-console", admin, s.deleteSearchConsole},
		{groupWebsites, "GET", "/openapi.json", public, serveOpenAPI},

		{groupPages, "GET", "/{websiteID}/settings/pages", viewer, s.listPages},
		{groupPages, "POST", "/{websiteID}/settings/pages", viewer, s.createPages},
		{groupPages, "PUT", "/{websiteID}/settings/{pageID}", admin, s.updatePage},
		{groupPages, "DELETE", "/{websiteID}/settings/{pageID}", admin, s.deletePage},

		{groupBudgets, "GET", "/{websiteID}/budgets", viewer, s.listBudgets},
		{groupBudgets, "POST", "/{websiteID}/budgets", admin, s.createBudget},
		{groupBudgets, "PUT", "/{websiteID}/budgets/{budgetID}", admin, s.updateBudget},
		{groupBudgets, "DELETE", "/{websiteID}/budgets/{budgetID}", admin, s.deleteBudget},

		{groupMultistep, "GET", "/{websiteID}/multistep", viewer, s.listTests},
		{groupMultistep, "GET", "/{websiteID}/multistep/{testID}", viewer, s.getTest},
		{groupMultistep, "POST", "/{websiteID}/multistep", admin, s.createTest},
		{groupMultistep, "PUT", "/{websiteID}/multistep/{testID}", admin, s.updateTest},
		{groupMultistep, "DELETE", "/{websiteID}/multistep/{testID}", admin, s.deleteTest},
		{groupMultistep, "POST", "/{websiteID}/multistep/run-all", viewer, s.runAll},
		{groupMultistep, "GET", "/{websiteID}/multistep/{testID}/runs", viewer, s.listRuns},
		{groupMultistep, "POST", "/{websiteID}/multistep/{testID}/runs", viewer, s.startRun},

		{groupLab, "GET", "/{websiteID}/pages", viewer, s.listPageMetrics},
		{groupLab, "GET", "/{websiteID}/pages/{pageID}", viewer, s.pageDetail},
		{groupLab, "GET", "/{websiteID}/pages/{pageID}/timeline", viewer, s.pageTimeline},
		{groupLab, "GET", "/{websiteID}/pages/{pageID}/network", viewer, s.pageNetwork},
		{groupLab, "GET", "/{websiteID}/opportunities", viewer, s.websiteOpportunities},
		{groupLab, "GET", "/{websiteID}/pages/{pageID}/opportunities", viewer, s.pageOpportunities},
		{groupLab, "GET", "/{websiteID}/pages/{pageID}/opportunities/{opportunityID}", viewer, s.opportunityDetail},
		{groupLab, "POST", "/{websiteID}/audits", admin, s.queueAudits},

		{groupField, "GET", "/{websiteID}/field-testing/pages", viewer, s.fieldReport(rum.DimPages)},
		{groupField, "GET", "/{websiteID}/field-testing/countries", viewer, s.fieldReport(rum.DimCountries)},

		// The RUM snippet a website includes and the endpoint its beacons go to. Any origin may
		// call them; they take no API key, so they reveal nothing: a known website ID is all
		// they accept, and no answer repeats what was sent.
		{groupRUM, "GET", "/rum/{file}", public, anyOrigin(s.snippet)},
		{groupRUM, "POST", "/collect", public, anyOrigin(s.collect)},
		{groupRUM, "OPTIONS", "/collect", public, anyOrigin(s.collectPreflight)},
	}
}

// Groups lists the endpoint groups, in the order of the route table.
func Groups() []string {
	var groups []string
	for _, rt := range (&Server{}).routes() {
		if !slices.Contains(groups, rt.group) {
			groups = append(groups, rt.group)
		}
	}
	return groups
}

// Group serves the endpoints of one group, for the Lambda function of that group.
func (s *Server) Group(name string) (http.Handler, error) {
	var routes []route
	for _, rt := range s.routes() {
		if rt.group == name {
			routes = append(routes, rt)
		}
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("api: no endpoint group %q (the groups are %s)", name, strings.Join(Groups(), ", "))
	}
	return s.mux(routes), nil
}

// Handler serves every group, for the local service. The RUM group's public paths overlap the
// website patterns (/rum/x against /{websiteID}/x): in AWS they are routes of their own, here
// a request goes to the RUM group when its path has the shape of one of that group's patterns.
func (s *Server) Handler() http.Handler {
	var rumRoutes, others []route
	for _, rt := range s.routes() {
		if rt.group == groupRUM {
			rumRoutes = append(rumRoutes, rt)
		} else {
			others = append(others, rt)
		}
	}
	rumMux, othersMux := s.mux(rumRoutes), s.mux(others)
	isRUM := pathShapes(rumRoutes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isRUM(r.URL.Path) {
			rumMux.ServeHTTP(w, r)
			return
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

// serve runs a route's handler for a caller its access admits. This is where every error,
// the handler's or the access check's, becomes a problem response.
func (s *Server) serve(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var c caller
		var err error
		if rt.access != public {
			c, err = s.authenticate(r)
			if err == nil && rt.access == admin && c.role != store.RoleAdmin {
				err = errForbidden
			}
		}
		if err == nil {
			err = rt.handle(w, r, c)
		}
		if err != nil {
			writeError(w, r, s.log, err)
		}
	}
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
	}{DefaultGroup: defaultGroup}
	for _, rt := range (&Server{}).routes() {
		doc.Routes = append(doc.Routes, routeJSON{Group: rt.group, Method: rt.method, Pattern: rt.pattern, Access: rt.access})
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n'), err
}
