package auditworker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/purgeworker"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/poll"
)

// heldSite serves a small page, and holds the audit's load of it (Lighthouse's request for the
// document, the audit's only fetch of it) until release is called; arrived is closed when that
// request comes in.
func heldSite(t *testing.T) (host string, arrived <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			once.Do(func() { close(in) })
			select {
			case <-out:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Held</title></head><body><h1>Held</h1><p>A page audited while it is deleted.</p></body></html>`))
	}))
	t.Cleanup(srv.Close)
	var releaseOnce sync.Once
	release = func() { releaseOnce.Do(func() { close(out) }) }
	t.Cleanup(release)
	return srv.Listener.Addr().String(), in, release
}

// TestDeleteDuringAuditLeavesNothing deletes a website, or a page, while its audit is running
// (Lighthouse waiting for the document), lets the purge pass, then lets the audit
// finish: once the purge's last pass is done, a full table scan and a listing of the whole
// bucket find nothing of the website or page.
func TestDeleteDuringAuditLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		deletePage bool
	}{{"website", false}, {"page", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2E(t, true)
			host, arrived, release := heldSite(t)
			// The settle time must outlast the audit's end after release (a second or two),
			// not its whole run: the audit is held until the first pass is done.
			const settle = 20 * time.Second
			purger := purgeworker.NewWorker(e.store, e.objects, awstest.RUM(t, e.store), purge.NewQueue(e.purges), settle, awstest.Log(t))

			var site struct{ ID string }
			e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`","method":"simulated"}`, 201, &site)
			var pages []struct{ ID string }
			e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"},{"url":"/other","alias":"Other"}]`, 200, &pages)
			e.api.Call(e.t, "POST", "/"+site.ID+"/audits", `{"pages":["`+pages[0].ID+`"],"devices":["desktop"]}`, 202, nil)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			audits := make(chan struct{})
			go func() { e.queue.Poll(ctx, 1, e.worker.HandleSQS, awstest.Log(t)); close(audits) }()
			purges := make(chan struct{})
			go func() { e.purges.Poll(ctx, 10, purger.HandleSQS, awstest.Log(t)); close(purges) }()
			defer func() { cancel(); <-audits; <-purges }()

			select {
			case <-arrived:
			case <-time.After(5 * time.Minute): // a bound for a stuck worker, not a speed check
				t.Fatal("the audit never fetched the page")
			}
			gone := site.ID
			if tc.deletePage {
				e.api.Call(e.t, "DELETE", "/"+site.ID+"/settings/"+pages[0].ID, "", 204, nil)
				gone = pages[0].ID
			} else {
				e.api.Call(e.t, "DELETE", "/"+site.ID, "", 204, nil)
			}
			// The first pass: the purge message is consumed (its next pass waits, delayed), and
			// only the marker is left.
			poll.Until(t, "the purge's first pass", 5*time.Minute, func() bool {
				left := awstest.Leftovers(t, e.clients, e.store, e.objects, gone)
				return awstest.Depth(t, e.purges) == 0 && len(left) == 1 && strings.Contains(left[0], "PURGE|")
			})
			release()
			poll.Until(t, "the audit's end", 5*time.Minute, func() bool { return awstest.Depth(t, e.queue) == 0 })
			// The audit stored its reports (JSON and HTML) and their diagnostics after the first
			// pass (what the last pass is for), and no result: the table refused it.
			left := awstest.Leftovers(t, e.clients, e.store, e.objects, gone)
			stored := map[string]bool{}
			for _, k := range left[min(1, len(left)):] {
				_, name, _ := strings.Cut(k, "-desktop")
				if strings.HasPrefix(name, ".images/") {
					name = ".images/"
				}
				stored[name] = true
			}
			if len(left) == 0 || !strings.Contains(left[0], "PURGE|") || len(stored) != 5 || !stored[".json.gz"] || !stored[".html.gz"] ||
				!stored[".diagnostics.json.gz"] || !stored[".redacted.har.gz"] || !stored[".images/"] {
				t.Errorf("after the audit: %v, want the purge marker and the reports and diagnostics only", left)
			}
			poll.Until(t, "the purge's last pass", 5*time.Minute, func() bool {
				p, err := e.store.PendingPurges(context.Background())
				return err == nil && len(p) == 0 && awstest.Depth(t, e.purges) == 0
			})
			if left := awstest.Leftovers(t, e.clients, e.store, e.objects, gone); len(left) != 0 {
				t.Errorf("left behind after the purge: %v", left)
			}
			if tc.deletePage {
				// The other page is untouched.
				var list struct {
					Result struct{ List []struct{ ID string } }
				}
				e.api.Call(e.t, "GET", "/"+site.ID+"/pages", "", 200, &list)
				for _, p := range list.Result.List {
					if p.ID != pages[1].ID {
						t.Errorf("pages after the delete: %+v, want only %s", list.Result.List, pages[1].ID)
					}
				}
				if len(list.Result.List) == 0 {
					t.Error("the other page is gone")
				}
			}
		})
	}
}
