package apitest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestClientInProcessAndOverHTTP calls the same API in the test's process and over HTTP: both
// send the key, decode the answer, list a created website and describe an error as a problem.
func TestClientInProcessAndOverHTTP(t *testing.T) {
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	const key = apitest.AdminKey
	apitest.Provision(t, st, apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: key})
	h := api.New(api.Deps{Store: st, Log: awstest.Log(t)}).Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for name, c := range map[string]apitest.Client{"in process": {Handler: h, Key: key}, "over HTTP": {Base: srv.URL, Key: key}} {
		t.Run(name, func(t *testing.T) {
			var w struct{ ID, Domain string }
			c.Call(t, "POST", "/account/websites", `{"domain":"`+name[:2]+`.example.com"}`, http.StatusCreated, &w)
			found := false
			for _, l := range apitest.List[struct{ ID string }](t, c.Call(t, "GET", "/websites", "", http.StatusOK, nil)) {
				found = found || l.ID == w.ID
			}
			if w.ID == "" || !found {
				t.Errorf("website %+v not in the list", w)
			}
			c.Call(t, "POST", "/account/websites", `{"domain":""}`, http.StatusUnprocessableEntity, nil).Problem(t, "domain")
			anonymous := apitest.Client{Handler: c.Handler, Base: c.Base}
			if res := anonymous.Do(t, anonymous.NewRequest(t, "GET", "/websites", "")); res.Status != http.StatusUnauthorized {
				t.Errorf("without a key: %d %s", res.Status, res.Body)
			}
		})
	}
}
