package api_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

func TestWebsites(t *testing.T) {
	e := newTestEnv(t)

	e.do("GET", "/websites", apitest.AdminKey, nil).Want(t, 200)
	if got := apitest.List[website](t, e.do("GET", "/websites", apitest.AdminKey, nil)); len(got) != 0 {
		t.Fatalf("new account lists %v", got)
	}

	var a website
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]string{"domain": "Example.COM"}).Want(t, 201).Decode(t, &a)
	if a.ID == "" || a.Domain != "example.com" || a.DisplayName != "example.com" {
		t.Errorf("created %+v, want lower-cased domain and displayName defaulting to it", a)
	}
	var b website
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]string{"domain": "www.example.org", "displayName": "Shop ☕"}).Want(t, 201).Decode(t, &b)
	if b.Domain != "www.example.org" || b.DisplayName != "Shop ☕" {
		t.Errorf("created %+v, want www. kept and the given name", b)
	}

	// Readers see the account's websites, oldest first.
	got := apitest.List[website](t, e.do("GET", "/websites", apitest.ViewerKey, nil).Want(t, 200))
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("list %+v, want [%+v %+v]", got, a, b)
	}

	// A domain is unique within an account, but another account may monitor it too.
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]string{"domain": "EXAMPLE.com"}).Want(t, 409).Problem(t, "domain")
	e.do("POST", "/account/websites", apitest.OtherKey, map[string]string{"domain": "example.com"}).Want(t, 201)

	// Another account sees none of acme's websites and cannot delete them.
	for _, w := range apitest.List[website](t, e.do("GET", "/websites", apitest.OtherKey, nil)) {
		if w.ID == a.ID || w.ID == b.ID {
			t.Errorf("globex sees acme's website %+v", w)
		}
	}
	e.do("DELETE", "/"+a.ID, apitest.OtherKey, nil).Want(t, 404).Problem(t)

	// Deleting is for admins; it answers at once and the website is gone from every read.
	e.do("DELETE", "/"+a.ID, apitest.ViewerKey, nil).Want(t, 403).Problem(t)
	e.do("DELETE", "/"+a.ID, apitest.AdminKey, nil).Want(t, 204)
	e.do("DELETE", "/"+a.ID, apitest.AdminKey, nil).Want(t, 404)
	e.do("GET", "/"+a.ID+"/settings/pages", apitest.AdminKey, nil).Want(t, 404)
	if got := apitest.List[website](t, e.do("GET", "/websites", apitest.AdminKey, nil)); len(got) != 1 || got[0] != b {
		t.Errorf("after delete, list %+v, want only %+v", got, b)
	}
	// Its domain is free again.
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]string{"domain": "example.com"}).Want(t, 201)
}

func TestWebsiteAuth(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		name, header string
	}{
		{"no header", ""},
		{"empty bearer", "Bearer "},
		{"basic scheme", "Basic " + apitest.AdminKey},
		{"unknown key", "Bearer ov_nosuchkeyatall0000000000"},
		{"key with suffix", "Bearer " + apitest.AdminKey + "x"},
		{"huge key", "Bearer " + strings.Repeat("k", 10000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest("GET", "/websites", tc.header)
			res := e.send(req).Want(t, 401)
			if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q, want Bearer", res.Header.Get("WWW-Authenticate"))
			}
			res.Problem(t)
		})
	}
	// The scheme is case-insensitive (RFC 9110).
	e.send(newRequest("GET", "/websites", "bearer "+apitest.AdminKey)).Want(t, 200)
	e.do("POST", "/account/websites", apitest.ViewerKey, map[string]string{"domain": "example.com"}).Want(t, 403).Problem(t)
	if got := apitest.List[website](t, e.do("GET", "/websites", apitest.AdminKey, nil)); len(got) != 0 {
		t.Errorf("a refused create left %v", got)
	}
}

func TestWebsiteValidation(t *testing.T) {
	e := newTestEnv(t)
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"scheme", `{"domain":"https://example.com"}`, 422, "domain"},
		{"path", `{"domain":"example.com/shop"}`, 422, "domain"},
		{"query", `{"domain":"example.com?a=1"}`, 422, "domain"},
		{"port", `{"domain":"example.com:8080"}`, 422, "domain"},
		{"empty", `{"domain":""}`, 422, "domain"},
		{"missing", `{"displayName":"x"}`, 422, "domain"},
		{"null", `{"domain":null}`, 422, "domain"},
		{"single label", `{"domain":"localhost"}`, 422, "domain"},
		{"ip address", `{"domain":"10.0.0.1"}`, 422, "domain"},
		{"ipv6", `{"domain":"[::1]"}`, 422, "domain"},
		{"space", `{"domain":"exa mple.com"}`, 422, "domain"},
		{"leading hyphen", `{"domain":"-bad.example.com"}`, 422, "domain"},
		{"underscore", `{"domain":"a_b.example.com"}`, 422, "domain"},
		{"userinfo", `{"domain":"user@example.com"}`, 422, "domain"},
		{"too long", `{"domain":"` + strings.Repeat("a.", 130) + `com"}`, 422, "domain"},
		{"control char in name", `{"domain":"example.com","displayName":"a\u0000b"}`, 422, "displayName"},
		{"name too long", `{"domain":"example.com","displayName":` + bigJSONString(201) + `}`, 422, "displayName"},
		{"number domain", `{"domain":5}`, 400, "domain"},
		{"array name", `{"domain":"example.com","displayName":[]}`, 400, "displayName"},
		{"unknown field", `{"domain":"example.com","owner":"me"}`, 400, "owner"},
		{"array body", `[{"domain":"example.com"}]`, 400, ""},
		{"not json", `domain=example.com`, 400, ""},
		{"truncated", `{"domain":"example.com"`, 400, ""},
		{"two values", `{"domain":"example.com"}{"domain":"example.org"}`, 400, ""},
		{"empty body", ``, 400, ""},
		{"invalid utf-8", "{\"domain\":\"ex\xffample.com\"}", 422, "domain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.do("POST", "/account/websites", apitest.AdminKey, tc.body).Want(t, tc.status)
			if tc.field != "" {
				res.Problem(t, tc.field)
			} else {
				res.Problem(t)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		body := `{"domain":"example.com","displayName":` + bigJSONString(2<<20) + `}`
		e.do("POST", "/account/websites", apitest.AdminKey, body).Want(t, 413).Problem(t)
	})
	t.Run("wrong content type", func(t *testing.T) {
		req := newRequest("POST", "/account/websites", "Bearer "+apitest.AdminKey)
		req.Body = readCloser(`{"domain":"example.com"}`)
		req.Header.Set("Content-Type", "text/plain")
		e.send(req).Want(t, 415).Problem(t)
	})
	if got := apitest.List[website](t, e.do("GET", "/websites", apitest.AdminKey, nil)); len(got) != 0 {
		t.Fatalf("refused requests created %v", got)
	}

	// Internationalized names are stored in their ASCII form, so they compare exactly.
	var w website
	e.do("POST", "/account/websites", apitest.AdminKey, `{"domain":"Bücher.example"}`).Want(t, 201).Decode(t, &w)
	if w.Domain != "xn--bcher-kva.example" || w.DisplayName != "xn--bcher-kva.example" {
		t.Errorf("IDN stored as %+v", w)
	}
	e.do("POST", "/account/websites", apitest.AdminKey, `{"domain":"xn--bcher-kva.example"}`).Want(t, 409)
}

func TestUnknownRoutes(t *testing.T) {
	e := newTestEnv(t)
	e.do("GET", "/no/such/endpoint/here", apitest.AdminKey, nil).Want(t, 404).Problem(t)
	e.do("GET", "//budgets", apitest.AdminKey, nil).Want(t, 404).Problem(t)
	e.do("GET", "/websites/../websites", apitest.AdminKey, nil).Want(t, 404).Problem(t)
	res := e.do("PATCH", "/websites", apitest.AdminKey, nil).Want(t, 405)
	res.Problem(t)
	if res.Header.Get("Allow") == "" {
		t.Error("405 without an Allow header")
	}
}

// TestOpenAPIDocument: the service serves openapi.json as generated, byte for byte. That the
// file follows openapi.yaml (TestOpenAPIJSONIsCurrent) and the document names every route and
// nothing more (TestRoutesMatchOpenAPI) is checked once, beside them.
func TestOpenAPIDocument(t *testing.T) {
	e := newTestEnv(t)
	res := e.do("GET", "/openapi.json", "", nil).Want(t, 200)
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Body, want) {
		t.Errorf("GET /openapi.json serves %d bytes that are not openapi.json (%d bytes)", len(res.Body), len(want))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	res.Decode(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
}
