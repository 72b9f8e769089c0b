package multistepworker_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/multistepworker"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/notifyworker"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// journeySite serves two pages: a start page whose button blocks the main thread ~200 ms and
// then navigates, and the page it leads to.
func journeySite(t testing.TB) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>Start</title></head><body>
<button id="go">Go</button>
<script>document.getElementById("go").addEventListener("click", function () {
  var t = performance.now(); while (performance.now() - t < 200) {}
  location.href = "/next";
});</script></body></html>`))
	})
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html><head><title>Next</title></head><body><p id="done">Done</p></body></html>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// runEnv is what the end-to-end tests of runs share on the stand-ins: a table holding acme's
// admin key, the multistep queue, the purge queue, a bucket and a log.
type runEnv struct {
	*awstest.Env
	runs, purges *queue.Queue
	objects      *blobstore.Bucket
}

func newRunEnv(t *testing.T) runEnv {
	t.Helper()
	env := awstest.NewEnv(t)
	e := runEnv{Env: env, objects: env.Bucket(),
		runs:   env.Queue(queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives}),
		purges: env.Queue(awstest.QueueSettings)}
	apitest.Provision(t, e.Store, apitest.Admin)
	return e
}

func TestRunsEndToEnd(t *testing.T) {
	ctx := context.Background()
	e := newRunEnv(t)
	clients, st, q, objects, log := e.Clients, e.Store, e.runs, e.objects, e.Log
	nq := awstest.Queue(t, clients, service.NotifyQueueSettings)
	browse := browsertest.Options(t, true)
	worker := multistepworker.NewWorker(multistepworker.WorkerConfig{Scheme: "http", Journey: journey.Options{
		Browser:     browse,
		StepTimeout: 3 * time.Second,
	}, Events: event.NewRecorder(st, notify.NewQueue(nq), log)}, st, objects, log)
	sealer := seal.FixedKey(seal.GenerateKey())
	admin := apitest.Client{Handler: api.New(api.Deps{Store: st, Purger: nil, Runner: multistep.NewQueue(st, q, log), Reports: objects, Log: log, AllowLocalTargets: true,
		Credentials: sealer, Notifications: notify.NewQueue(nq)}).Handler(), Key: apitest.AdminKey}

	var site struct{ ID string }
	admin.Call(t, "POST", "/account/websites", `{"domain":"`+journeySite(t)+`"}`, 201, &site)
	// A Slack channel at a local receiver and an email channel through the SES stand-in.
	var slackMessages []string
	var slackMu sync.Mutex
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		slackMu.Lock()
		slackMessages = append(slackMessages, string(body))
		slackMu.Unlock()
	}))
	t.Cleanup(slack.Close)
	ses := awstest.SES(t)
	admin.Call(t, "POST", "/"+site.ID+"/channels", `{"name":"#perf","kind":"slack","url":"`+slack.URL+`/services/T/B/x"}`, 201, nil)
	admin.Call(t, "POST", "/"+site.ID+"/channels", `{"name":"Team","kind":"email","recipients":["perf@example.com"],"events":["multistep.state_changed"]}`, 201, nil)
	var good, broken struct{ ID string }
	admin.Call(t, "POST", "/"+site.ID+"/multistep", `{"alias":"Go","device":"desktop","steps":[
		{"type":"navigate","target":"/"},
		{"type":"click","target":"#go","waitForNavigation":"on","waitUntil":"load"},
		{"type":"waitForSelector","target":"#done"}]}`, 201, &good)
	admin.Call(t, "POST", "/"+site.ID+"/multistep", `{"alias":"Broken","device":"mobile","steps":[
		{"type":"navigate","target":"/"},
		{"type":"click","target":"#missing"}]}`, 201, &broken)
	var all struct{ Queued int }
	admin.Call(t, "POST", "/"+site.ID+"/multistep/run-all", "", 200, &all)
	if all.Queued != 2 {
		t.Fatalf("run-all queued %d", all.Queued)
	}

	// Play the queue as the local service does, until both runs have an outcome.
	w, _ := st.Website(ctx, "acme", site.ID)
	pollCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { q.Poll(pollCtx, 1, worker.HandleSQS, log); close(done) }()
	deadline := time.Now().Add(5 * time.Minute) // a bound for a stuck worker, not a speed check
	for {
		g, _ := st.Runs(ctx, w, good.ID, time.Time{}, 0)
		b, _ := st.Runs(ctx, w, broken.ID, time.Time{}, 0)
		if len(g) == 1 && g[0].IsFinished() && len(b) == 1 && b[0].IsFinished() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs not finished: %+v %+v", g, b)
		}
		time.Sleep(300 * time.Millisecond)
	}
	cancel()
	<-done

	type run struct {
		ID, Status                   string
		Duration, INP, TBT, CPUTotal *int
		CLS                          *float64
		BytesTotal                   *int64 `json:"bytes_total"`
		Error                        string
		FailedStep                   *int
		Screenshot                   bool
	}
	var runs struct{ Result struct{ List []run } }
	admin.Call(t, "GET", "/"+site.ID+"/multistep/"+good.ID+"/runs", "", 200, &runs)
	r := runs.Result.List[0]
	if r.Status != "completed" || r.INP == nil || *r.INP < 200 || *r.TBT <= 100 || *r.Duration <= 0 || r.BytesTotal == nil || *r.BytesTotal <= 0 {
		t.Errorf("completed run %+v: INP >= 200 and TBT > 100 from the 200 ms click handler", jsonOf(r))
	}
	admin.Call(t, "GET", "/"+site.ID+"/multistep/"+broken.ID+"/runs", "", 200, &runs)
	r = runs.Result.List[0]
	if r.Status != "failed" || r.FailedStep == nil || *r.FailedStep != 1 || !strings.Contains(r.Error, "#missing") || !r.Screenshot {
		t.Errorf("failed run %+v", jsonOf(r))
	}
	// The screenshot is served to API keys (events link to it).
	shot := admin.Do(t, admin.NewRequest(t, "GET", "/"+site.ID+"/multistep/"+broken.ID+"/runs/"+r.ID+"/screenshot", ""))
	if shot.Status != 200 || shot.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(shot.Body), "\x89PNG") {
		t.Errorf("screenshot: %d %s, %d bytes", shot.Status, shot.Header.Get("Content-Type"), len(shot.Body))
	}
	keys, err := objects.Keys(ctx, blobstore.TestPrefix("acme", site.ID, broken.ID))
	if err != nil || len(keys) != 1 {
		t.Fatalf("screenshot objects %v, %v", keys, err)
	}
	png, err := objects.Get(ctx, keys[0])
	if err != nil || len(png) < 100 || string(png[1:4]) != "PNG" {
		t.Errorf("the failure screenshot is not a PNG (%d bytes, %v)", len(png), err)
	}

	var list struct {
		Result struct {
			List []struct {
				ID, State string
				INP       *int
			}
		}
	}
	admin.Call(t, "GET", "/"+site.ID+"/multistep", "", 200, &list)
	for _, item := range list.Result.List {
		want := map[string]string{good.ID: "up", broken.ID: "down"}[item.ID]
		if item.State != want {
			t.Errorf("test %s state %s, want %s", item.ID, item.State, want)
		}
	}
	entries, _ := os.ReadDir(browse.TempRoot)
	for _, e := range entries {
		t.Errorf("left behind in the worker's temp dir: %s", e.Name())
	}

	// The broken journey's first run failed: the test is down, which is news (the good one's
	// first state, up, is not). The notifier sends it to Slack and by email.
	sesClient := ses.Client()
	notifier := notifyworker.NewWorker(st, sealer, deliver.NewSender(browser.Guard{AllowPrivate: true}, sesClient, "openvitals@example.com", "http://127.0.0.1:8080", ""),
		notify.NewQueue(nq), log)
	quiet := time.Now().Add(2 * time.Second)
	awstest.Drain(t, nq, 10, notifier.HandleSQS, func(int) bool { return time.Now().After(quiet) })
	slackMu.Lock()
	defer slackMu.Unlock()
	if len(slackMessages) != 1 || !strings.Contains(slackMessages[0], `Multistep test \"Broken\" is down (was off)`) || !strings.Contains(slackMessages[0], `"type":"header"`) {
		t.Errorf("Slack messages %q, want one telling that Broken is down", slackMessages)
	}
	mails, err := ses.Mailbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(mails) != 1 || !strings.Contains(mails[0].Subject, "Multistep test state changed") || !strings.Contains(mails[0].Body.Text, "After:  down") {
		t.Errorf("emails %+v, want one telling that Broken is down", mails)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
