package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// endpoint is one operation of the interface with a request that would succeed for acme's admin.
type endpoint struct {
	method, path, body string
	admin              bool
}

// acmeEndpoints lists every operation on acme's data, with working ids and bodies.
func acmeEndpoints(e *testEnv) []endpoint {
	site := e.createWebsite("example.com")
	p := e.createPages(site.ID, "/")[0]
	var b budget
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(e.t, 201).Decode(e.t, &b)
	var ms multistepTest
	e.do("POST", "/"+site.ID+"/multistep", apitest.AdminKey, `{"alias":"a","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).Want(e.t, 201).Decode(e.t, &ms)
	w := "/" + site.ID
	return []endpoint{
		{"GET", w + "/settings/pages", "", false},
		{"POST", w + "/settings/pages", `[{"url":"/new"}]`, false},
		{"PUT", w + "/settings/" + p.ID, `{"alias":"x"}`, true},
		{"GET", w + "/budgets", "", false},
		{"POST", w + "/budgets", `{"metric":"lcp","operator":"lt","value":1,"device":"all"}`, true},
		{"PUT", w + "/budgets/" + b.ID, `{"value":1}`, true},
		{"GET", w + "/multistep", "", false},
		{"GET", w + "/multistep/" + ms.ID, "", false},
		{"POST", w + "/multistep", `{"alias":"b","device":"desktop","steps":[{"type":"navigate","target":"/"}]}`, true},
		{"PUT", w + "/multistep/" + ms.ID, `{"alias":"c"}`, true},
		{"GET", w + "/field-testing/pages", "", false},
		{"GET", w + "/field-testing/countries?timing=lcp+cls", "", false},
		{"GET", w + "/metrics", "", false},
		{"GET", w + "/pages/" + p.ID + "/ux-history?device=mobile", "", false},
		{"GET", w + "/data-settings", "", false},
		{"PUT", w + "/data-settings", `{"exports":true}`, true},
		{"DELETE", w + "/multistep/" + ms.ID, "", true},
		{"DELETE", w + "/budgets/" + b.ID, "", true},
		{"DELETE", w + "/settings/" + p.ID, "", true},
		{"DELETE", w, "", true},
	}
}

func (e *testEnv) call(ep endpoint, authorization string) response {
	e.t.Helper()
	req := newRequest(ep.method, ep.path, authorization)
	if ep.body != "" {
		req.Body = readCloser(ep.body)
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(req)
}

// TestAccessControl runs every operation without a key, with an unknown key, with a viewer key
// and with another account's admin key, before acme's admin runs it for real: another account
// gets 404 exactly as for a missing website, a viewer 403 on admin operations.
func TestAccessControl(t *testing.T) {
	e := newTestEnv(t)
	for _, ep := range acmeEndpoints(e) {
		t.Run(ep.method+" "+ep.path, func(t *testing.T) {
			e.t = t
			for _, auth := range []string{"", "Bearer ov_unknown_key_000000000", "Token " + apitest.AdminKey} {
				res := e.call(ep, auth).Want(t, http.StatusUnauthorized)
				if res.Header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
			}
			other := e.call(ep, "Bearer "+apitest.OtherKey).Want(t, http.StatusNotFound)
			missing := e.call(endpoint{ep.method, replaceWebsite(ep.path, "nosuchsite00"), ep.body, ep.admin}, "Bearer "+apitest.AdminKey).Want(t, http.StatusNotFound)
			siteID := strings.Split(ep.path, "/")[1]
			if strings.ReplaceAll(other.Problem(t).Detail, siteID, "X") != strings.ReplaceAll(missing.Problem(t).Detail, "nosuchsite00", "X") {
				t.Errorf("another account's website answers %s, a missing one %s", other.Body, missing.Body)
			}
			if ep.admin {
				e.call(ep, "Bearer "+apitest.ViewerKey).Want(t, http.StatusForbidden).Problem(t)
			}
			ok := e.call(ep, "Bearer "+apitest.AdminKey)
			if ok.Status >= 300 {
				t.Fatalf("acme's admin got %d: %s", ok.Status, ok.Body)
			}
		})
	}
}

func replaceWebsite(path, id string) string {
	rest := strings.TrimPrefix(path, "/")
	if i := strings.Index(rest, "/"); i >= 0 {
		return "/" + id + rest[i:]
	}
	return "/" + id
}
