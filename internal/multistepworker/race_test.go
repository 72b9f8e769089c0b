package multistepworker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/multistepworker"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/purgeworker"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
	"github.com/openvitals/openvitals/internal/testing/poll"
)

// TestDeleteDuringRunLeavesNothing deletes a website while one of its multistep runs is
// loading a page, lets the purge pass, then lets the page answer HTTP 500, so that the run
// fails and stores its failure screenshot after the purge: once the purge's last pass is done,
// a full table scan and a listing of the whole bucket find nothing of the website.
func TestDeleteDuringRunLeavesNothing(t *testing.T) {
	ctx := context.Background()
	e := newRunEnv(t)
	clients, st, q, pq, objects, log := e.Clients, e.Store, e.runs, e.purges, e.objects, e.Log
	worker := multistepworker.NewWorker(multistepworker.WorkerConfig{Scheme: "http", Journey: journey.Options{
		Browser:     browsertest.Options(t, true),
		StepTimeout: 2 * time.Minute, // the page is held until the purge's first pass
	}}, st, objects, log)
	// The settle time must outlast the run's end after release, not its whole run.
	const settle = 20 * time.Second
	purger := purgeworker.NewWorker(st, objects, awstest.RUM(t, st), purge.NewQueue(pq), settle, log)
	admin := apitest.Client{Handler: api.New(api.Deps{Store: st, Purger: purge.NewQueue(pq), Runner: multistep.NewQueue(st, q, log), Reports: objects, Log: log, AllowLocalTargets: true}).Handler(), Key: apitest.AdminKey}

	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		http.Error(w, "broken on purpose", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	var site, test struct{ ID string }
	admin.Call(t, "POST", "/account/websites", `{"domain":"`+srv.Listener.Addr().String()+`"}`, 201, &site)
	admin.Call(t, "POST", "/"+site.ID+"/multistep", `{"alias":"Held","device":"desktop","steps":[{"type":"navigate","target":"/held"}]}`, 201, &test)
	admin.Call(t, "POST", "/"+site.ID+"/multistep/"+test.ID+"/runs", "", 201, nil)

	pollCtx, cancel := context.WithCancel(ctx)
	runs, purges := make(chan struct{}), make(chan struct{})
	go func() { q.Poll(pollCtx, 1, worker.HandleSQS, log); close(runs) }()
	go func() { pq.Poll(pollCtx, 10, purger.HandleSQS, log); close(purges) }()
	defer func() { cancel(); <-runs; <-purges }()

	select {
	case <-arrived:
	case <-time.After(5 * time.Minute): // a bound for a stuck worker, not a speed check
		t.Fatal("the run never loaded the page")
	}
	admin.Call(t, "DELETE", "/"+site.ID, "", 204, nil)
	// The first pass: the purge message is consumed (its next pass waits, delayed), and only the
	// marker is left.
	poll.Until(t, "the purge's first pass", 5*time.Minute, func() bool {
		left := awstest.Leftovers(t, clients, st, objects, site.ID)
		return awstest.Depth(t, pq) == 0 && len(left) == 1 && strings.Contains(left[0], "PURGE|")
	})
	releaseOnce.Do(func() { close(release) })
	poll.Until(t, "the run's end", 5*time.Minute, func() bool { return awstest.Depth(t, q) == 0 })
	// The run stored its screenshot after the first pass: what the last pass is for.
	if left := awstest.Leftovers(t, clients, st, objects, site.ID); len(left) != 2 || !strings.HasSuffix(left[1], "/failure.png") {
		t.Errorf("after the run: %v, want the purge marker and the failure screenshot", left)
	}
	poll.Until(t, "the purge's last pass", 5*time.Minute, func() bool {
		p, err := st.PendingPurges(ctx)
		return err == nil && len(p) == 0 && awstest.Depth(t, pq) == 0
	})
	if left := awstest.Leftovers(t, clients, st, objects, site.ID); len(left) != 0 {
		t.Errorf("left behind after the purge: %v", left)
	}
}
