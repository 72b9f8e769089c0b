package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// routeTable is the API's route table as the main module declares it and writes it to
// internal/api/routes.json: every endpoint once, with the endpoint group (a directory under
// functions/) whose function serves it. The stack reads it at synthesis, so API Gateway's
// routes follow the handlers' own.
type routeTable struct {
	// DefaultGroup serves every request no route matches (the `$default` route), so that an
	// unknown path gets the service's problem+json 404 rather than API Gateway's own
	// {"message":"Not Found"}.
	DefaultGroup string     `json:"defaultGroup"`
	Routes       []endpoint `json:"routes"`
}

// endpoint is one operation of the API.
type endpoint struct {
	Group  string `json:"group"`
	Method string `json:"method"`
	// Pattern is a net/http ServeMux path pattern ("/{websiteID}/pages/{pageID}").
	Pattern string `json:"pattern"`
	// Access is "public", "viewer" or "admin": the handlers check it; API Gateway does not.
	Access string `json:"access"`
}

// apiPath is one path API Gateway routes, whatever the method, to the function of group.
type apiPath struct {
	path, group string
}

// loadRouteTable reads the route table at path and checks that API Gateway can route it: each
// pattern a path API Gateway can express, served by one group only, and each group declared
// in apiGroups (which says what its function is and may do).
func loadRouteTable(path string) (routeTable, error) {
	var rt routeTable
	raw, err := os.ReadFile(path)
	if err != nil {
		return rt, fmt.Errorf("the API's route table: %w", err)
	}
	if err := json.Unmarshal(raw, &rt); err != nil {
		return rt, fmt.Errorf("%s: %w", path, err)
	}
	if err := rt.check(); err != nil {
		return rt, fmt.Errorf("%s: %w", path, err)
	}
	return rt, nil
}

// check reports the first thing of rt API Gateway could not route as the handlers do.
func (rt routeTable) check() error {
	if len(rt.Routes) == 0 {
		return fmt.Errorf("no routes")
	}
	if err := rt.checkGroups(); err != nil {
		return err
	}
	return rt.checkPatterns()
}

// checkGroups makes sure every route names its group, and every group is one apiGroups
// declares.
func (rt routeTable) checkGroups() error {
	if rt.DefaultGroup == "" {
		return fmt.Errorf("no defaultGroup")
	}
	for _, e := range rt.Routes {
		if e.Group == "" {
			return fmt.Errorf("%s %s: no group", e.Method, e.Pattern)
		}
	}
	for _, g := range rt.groups() {
		if _, ok := apiGroups[g]; !ok {
			return fmt.Errorf("endpoint group %q has no settings in infra: declare its function's description and grants in apiGroups (infra/api.go)", g)
		}
	}
	return nil
}

// checkPatterns makes sure every pattern is a path API Gateway can route to one function: a
// pattern of one group only, and not of the same shape as another.
func (rt routeTable) checkPatterns() error {
	owner := map[string]string{}  // pattern -> group
	shapes := map[string]string{} // API Gateway path without wildcard names -> pattern
	for _, e := range rt.Routes {
		if g, ok := owner[e.Pattern]; ok && g != e.Group {
			return fmt.Errorf("pattern %s is declared by groups %q and %q: one route cannot reach two functions", e.Pattern, g, e.Group)
		}
		owner[e.Pattern] = e.Group
		p, err := apiGatewayPath(e.Pattern)
		if err != nil {
			return err
		}
		shape := pathShape(p)
		if other, ok := shapes[shape]; ok && other != e.Pattern {
			return fmt.Errorf("patterns %s and %s differ only in their wildcards' names: API Gateway cannot tell them apart", other, e.Pattern)
		}
		shapes[shape] = e.Pattern
	}
	return nil
}

// groups returns every endpoint group of rt, the default one included, sorted.
func (rt routeTable) groups() []string {
	groups := []string{rt.DefaultGroup}
	for _, e := range rt.Routes {
		groups = append(groups, e.Group)
	}
	slices.Sort(groups)
	return slices.Compact(groups)
}

// paths returns each distinct path of rt once, with its group, sorted by path. rt must have
// passed check.
func (rt routeTable) paths() []apiPath {
	seen := map[string]bool{}
	var out []apiPath
	for _, e := range rt.Routes {
		p, _ := apiGatewayPath(e.Pattern)
		if !seen[p] {
			seen[p] = true
			out = append(out, apiPath{path: p, group: e.Group})
		}
	}
	slices.SortFunc(out, func(a, b apiPath) int { return strings.Compare(a.path, b.path) })
	return out
}

// pathShape returns an API Gateway path with its wildcards' names erased ("{pageID}" is "{}"):
// two paths of one shape would match the same requests.
func pathShape(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case strings.HasSuffix(s, "+}"):
			segs[i] = "{+}"
		case strings.HasPrefix(s, "{"):
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// apiGatewayPath turns a ServeMux path pattern into the path of an API Gateway route: "{name}"
// stays, a trailing "{name...}" becomes "{name+}". Patterns API Gateway cannot express are
// refused: prefix patterns (a trailing "/"), "{$}", and wildcards inside a segment.
func apiGatewayPath(pattern string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("pattern %q: %s", pattern, why)
	}
	if !strings.HasPrefix(pattern, "/") {
		return bad("want a path starting with / (no method or host: those are separate fields)")
	}
	if pattern == "/" || strings.HasSuffix(pattern, "/") {
		return bad("API Gateway has no prefix routes: end the pattern with {name...}, or leave it to the defaultGroup")
	}
	segs := strings.Split(pattern[1:], "/")
	for i, s := range segs {
		switch {
		case s == "":
			return bad("empty segment")
		case !strings.ContainsAny(s, "{}"):
		case !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") || strings.Count(s, "{") != 1:
			return bad("a wildcard must be a whole segment")
		case s == "{}" || s == "{...}":
			return bad("a wildcard needs a name")
		case s == "{$}":
			return bad("API Gateway has no {$}: routes match whole paths already")
		case strings.HasSuffix(s, "...}"):
			if i != len(segs)-1 {
				return bad("{name...} must be the last segment")
			}
			segs[i] = strings.TrimSuffix(s, "...}") + "+}"
		}
	}
	return "/" + strings.Join(segs, "/"), nil
}
