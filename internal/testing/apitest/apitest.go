// Package apitest calls the API as its clients do, from tests: every answer is checked against
// the OpenAPI document (internal/testing/contract) before the test sees it, so that no test
// of any layer can pass on an answer the document does not describe.
package apitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/contract"
)

// Keys of the accounts the tests call the API as: acme with an admin and a viewer key, and
// globex, another tenant whose data acme must never see. Provision stores them.
const (
	AdminKey  = "acme-admin-key-0123456789"
	ViewerKey = "acme-viewer-key-0123456789"
	OtherKey  = "globex-admin-key-0123456789"
)

// Admin, Viewer and Other are the grants of AdminKey, ViewerKey and OtherKey, which Provision
// takes.
var (
	Admin  = apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: AdminKey}
	Viewer = apikey.Grant{Account: "acme", Role: model.RoleViewer, Key: ViewerKey}
	Other  = apikey.Grant{Account: "globex", Role: model.RoleAdmin, Key: OtherKey}
)

// Client sends requests to the API: to Handler in the test's process when it is set, else over
// HTTP to the server at Base. Key, unless empty, is sent as the bearer key.
type Client struct {
	Handler http.Handler
	Base    string
	Key     string
}

// Response is an answer that has passed the contract check.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	call   string // the request's method and path, for failure messages
}

// NewRequest makes a request of method to path (below Base when over HTTP), with the client's
// key; a body that is not empty is sent as JSON.
func (c Client) NewRequest(t testing.TB, method, path, body string) *http.Request {
	t.Helper()
	var req *http.Request
	if c.Handler != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	} else {
		var err error
		if req, err = http.NewRequest(method, c.Base+path, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	return req
}

// Do sends req and checks the answer against the OpenAPI document.
func (c Client) Do(t testing.TB, req *http.Request) Response {
	t.Helper()
	var res Response
	if c.Handler != nil {
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		res = Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	} else {
		hr, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer hr.Body.Close()
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			t.Fatal(err)
		}
		res = Response{Status: hr.StatusCode, Header: hr.Header, Body: body}
	}
	contract.Check(t, req, res.Status, res.Header, res.Body)
	res.call = req.Method + " " + req.URL.RequestURI()
	return res
}

// Call sends method to path with body (see NewRequest), fails t unless the answer's status is
// want, and decodes the answer's JSON into out unless out is nil.
func (c Client) Call(t testing.TB, method, path, body string, want int, out any) Response {
	t.Helper()
	res := c.Do(t, c.NewRequest(t, method, path, body)).Want(t, want)
	if out != nil {
		res.Decode(t, out)
	}
	return res
}

// Want fails t unless the answer's status is status.
func (r Response) Want(t testing.TB, status int) Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d; body: %s", r.call, r.Status, status, r.Body)
	}
	return r
}

// Decode decodes the answer's JSON into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s: decode %s: %v", r.call, r.Body, err)
	}
}

// Problem decodes an error answer and fails t unless it describes its status and names each of
// fields among its errors.
func (r Response) Problem(t testing.TB, fields ...string) api.Problem {
	t.Helper()
	var p api.Problem
	r.Decode(t, &p)
	if p.Status != r.Status || p.Detail == "" || p.Message != p.Detail || p.Title == "" {
		t.Errorf("%s: problem %+v does not describe the %d answer", r.call, p, r.Status)
	}
	for _, f := range fields {
		found := false
		for _, fe := range p.Errors {
			found = found || fe.Field == f
		}
		if !found {
			t.Errorf("%s: problem %s does not name field %q", r.call, r.Body, f)
		}
	}
	return p
}

// List decodes an answer of the form {"result":{"list":[...]}}.
func List[T any](t testing.TB, r Response) []T {
	t.Helper()
	var out struct {
		Result struct {
			List []T `json:"list"`
		} `json:"result"`
	}
	r.Decode(t, &out)
	return out.Result.List
}

// Provision stores the grants' keys in st, as the keys command does, so that the API answers
// them.
func Provision(t testing.TB, st *store.Store, grants ...apikey.Grant) {
	t.Helper()
	for _, g := range grants {
		if err := apikey.Provision(context.Background(), st, g, "test"); err != nil {
			t.Fatal(err)
		}
	}
}
