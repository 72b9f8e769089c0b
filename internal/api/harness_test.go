package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// credentialsKey seals the integration credentials the tests store.
var credentialsKey = seal.FixedKey(seal.GenerateKey())

type testEnv struct {
	t       testing.TB
	handler http.Handler
	store   *store.Store
	purges  *queue.Queue
	audits  *queue.Queue
	runs    *queue.Queue
	rum     *queue.Queue // the beacon queue: page views from /collect
	flush   *queue.Queue // FIFO: the rebatcher's requests to fold a website's log
	rums    *rumstore.Store
	notify  *queue.Queue // channel tests
	objects *blobstore.Bucket
	exports *blobstore.Bucket // the export bucket POST /{websiteID}/exports writes into
	clients awsclient.Clients
}

// newTestEnv serves the whole API over a table and purge queue of the test's own, on the
// local stand-ins.
func newTestEnv(t testing.TB) *testEnv { return newTestEnvAt(t, nil) }

// newTestEnvAt is newTestEnv with the server's clock (nil: time.Now).
func newTestEnvAt(t testing.TB, now func() time.Time) *testEnv {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	q := awstest.Queue(t, clients, service.PurgeQueueSettings)
	apitest.Provision(t, st, apitest.Admin, apitest.Viewer, apitest.Other)
	aq := awstest.Queue(t, clients, service.AuditQueueSettings)
	mq := awstest.Queue(t, clients, service.MultistepQueueSettings)
	objects, exports := awstest.Bucket(t), awstest.Bucket(t)
	log := awstest.Log(t)
	rq := awstest.Queue(t, clients, service.BeaconQueueSettings)
	fq := awstest.FIFOQueue(t, clients, service.RUMQueueSettings)
	rums := awstest.RUM(t, st)
	nq := awstest.Queue(t, clients, service.NotifyQueueSettings)
	srv := api.New(api.Deps{Notifications: notify.NewQueue(nq), Store: st, Purger: purge.NewQueue(q), Auditor: audit.NewQueue(st, aq, log),
		Runner: multistep.NewQueue(st, mq, log), Reports: objects, Log: log, Credentials: credentialsKey,
		Beacons: rum.NewCollector(rq), Field: rum.NewReader(rums), RUM: rums, Now: now, Exports: export.New(st, objects, rum.NewSegmentReader(rums, st), exports)})
	return &testEnv{t: t, handler: srv.Handler(), store: st, purges: q, audits: aq, runs: mq, rum: rq, flush: fq, rums: rums, notify: nq,
		objects: objects, exports: exports, clients: clients}
}

// response is an answer checked against the OpenAPI document.
type response = apitest.Response

// do sends a request and checks the response against the OpenAPI document. body is nil (no
// body), a string or []byte (sent as is), or a value sent as JSON.
func (e *testEnv) do(method, path, key string, body any) response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return e.send(req)
}

func (e *testEnv) send(req *http.Request) response {
	e.t.Helper()
	return apitest.Client{Handler: e.handler}.Do(e.t, req)
}

type website struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Domain      string `json:"domain"`
}

type page struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	Alias string `json:"alias"`
}

// createWebsite makes a website of acme and returns it.
func (e *testEnv) createWebsite(domain string) website {
	e.t.Helper()
	var w website
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]string{"domain": domain}).Want(e.t, 201).Decode(e.t, &w)
	return w
}

func (e *testEnv) createPages(siteID string, urls ...string) []page {
	e.t.Helper()
	in := make([]map[string]string, len(urls))
	for i, u := range urls {
		in[i] = map[string]string{"url": u}
	}
	var out []page
	e.do("POST", "/"+siteID+"/settings/pages", apitest.AdminKey, in).Want(e.t, 200).Decode(e.t, &out)
	return out
}

// createSite makes a website of acme with pages at urls, and returns it as the API answered,
// its pages, and the website as the store has it.
func (e *testEnv) createSite(domain string, urls ...string) (website, []page, model.Website) {
	e.t.Helper()
	site := e.createWebsite(domain)
	pages := e.createPages(site.ID, urls...)
	return site, pages, e.storedWebsite(site.ID)
}

func bigJSONString(n int) string { return `"` + strings.Repeat("a", n) + `"` }

func newRequest(method, path, authorization string) *http.Request {
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
}

func readCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

// storedWebsite reads a website of acme as the store has it.
func (e *testEnv) storedWebsite(id string) model.Website {
	e.t.Helper()
	w, err := e.store.Website(context.Background(), "acme", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// putGzipped stores body gzipped under key in the report bucket, as the audit worker stores
// its artifacts.
func (e *testEnv) putGzipped(key string, body []byte) {
	e.t.Helper()
	if err := e.objects.Put(context.Background(), key, awstest.Gzipped(e.t, body), "application/gzip"); err != nil {
		e.t.Fatal(err)
	}
}

// storedPage reads a page of w as the store has it (with its creation time, which keys its row).
func storedPage(t testing.TB, e *testEnv, w model.Website, id string) model.Page {
	t.Helper()
	p, err := e.store.Page(context.Background(), w, id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deleted deletes the item at path with an admin key (204) and finds it gone: deleting it
// again is 404.
func (e *testEnv) deleted(t *testing.T, path string) {
	t.Helper()
	e.do("DELETE", path, apitest.AdminKey, nil).Want(t, 204)
	e.do("DELETE", path, apitest.AdminKey, nil).Want(t, 404)
}
