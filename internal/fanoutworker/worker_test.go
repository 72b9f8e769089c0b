package fanoutworker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/ux"
)

// testFanoutSettings: a message whose part another attempt holds comes back in seconds, not
// in the local service's two minutes.
var testFanoutSettings = queue.Settings{VisibilityTimeout: 5 * time.Second, MaxReceives: 5, Retention: queue.MaxRetention}

// env is a service of the test's own on the stand-ins: a table, every queue, the fan-out
// worker and the scheduler.
type env struct {
	t       *testing.T
	ctx     context.Context
	clients awsclient.Clients
	cfg     service.Config
	st      *store.Store
	svc     *service.Service
	w       *Worker
	sched   *schedule.Scheduler
}

func newEnv(t *testing.T) *env {
	t.Helper()
	t.Setenv("OPENVITALS_CREDENTIALS_KEY", "")
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	cfg := service.Config{Table: st.Table(), Bucket: "openvitals-test"}
	cfg.NameQueues(awstest.Queues(t, clients))
	cfg.FanoutQueue = awstest.Queue(t, clients, testFanoutSettings).URL()
	e := &env{t: t, ctx: context.Background(), clients: clients, cfg: cfg, st: st}
	e.svc, e.w = e.service(clients)
	e.sched = schedulefn.New(e.svc)
	return e
}

// service builds the service and its fan-out worker over clients: the listing a few websites
// a page, audits queued again at once after a takeover.
func (e *env) service(clients awsclient.Clients) (*service.Service, *Worker) {
	e.t.Helper()
	svc, err := service.New(e.cfg, clients, awstest.Log(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	w := newWorker(svc)
	w.pageSize = 2
	w.audits.SetTakeoverDelay(0)
	return svc, w
}

// newWorker builds the worker over svc as the function does (service/fanoutworkerfn, which
// imports this package, so that its own tests cannot).
func newWorker(svc *service.Service) *Worker {
	q := svc.Queues
	return New(svc.Store, Queues{Fanout: q.Fanout, Audit: q.Audit, Multistep: q.Multistep, UX: q.UX, Notify: q.Notify, Purge: q.Purge},
		export.New(svc.Store, svc.Objects, rum.NewSegmentReader(svc.RUM, svc.Store), svc.Exports), svc.Log)
}

// websites creates n websites of acme, s0.example and on, with pages pages each.
func (e *env) websites(n, pages int) []model.Website {
	e.t.Helper()
	sites := make([]model.Website, n)
	for i := range sites {
		sites[i], _ = e.website("acme", fmt.Sprintf("s%d.example", i), pages)
	}
	return sites
}

// website creates a website of account with n pages.
func (e *env) website(account, domain string, n int) (model.Website, []model.Page) {
	e.t.Helper()
	add := make([]model.Page, n)
	for i := range add {
		add[i] = model.Page{URL: fmt.Sprintf("/p%03d", i)}
	}
	return awstest.Website(e.t, e.st, model.Website{Account: account, Domain: domain, DisplayName: domain}, add)
}

// run invokes the scheduler as a daily rule naming no job does.
func (e *env) run(at time.Time) schedule.Result {
	e.t.Helper()
	res, err := e.sched.Handle(e.ctx, events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: at})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// drain has three workers consume the fan-out queue until it is empty.
func (e *env) drain() {
	e.t.Helper()
	awstest.DrainAll(e.t, e.svc.Queues.Fanout, 3, 1, e.w.HandleSQS)
}

// audits receives every message of the audit queue.
func (e *env) audits(want int) []audit.Job {
	e.t.Helper()
	var jobs []audit.Job
	for _, body := range awstest.Receive(e.t, e.svc.Queues.Audit, want) {
		var j audit.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			e.t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// TestFanoutQueuesEachDailyJobOnce: two daily runs at once (EventBridge retrying while a run
// by hand goes on), walked by three fan-out workers, queue every page of every website on
// both devices once, each website's collection once, each test's run once and each digest
// channel's digest once; a deleted website nothing. A later run the same day, and a website's
// message delivered again, queue nothing more, and Fanned reads back what the first runs
// queued.
func TestFanoutQueuesEachDailyJobOnce(t *testing.T) {
	e := newEnv(t)
	a, pagesA := e.website("acme", "a.example", 5)
	b, pagesB := e.website("acme", "b.example", 230) // three shards
	c, _ := e.website("globex", "c.example", 0)
	gone, _ := e.website("globex", "gone.example", 3)
	if _, err := e.st.DeleteWebsite(e.ctx, gone); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"signup", "checkout"} {
		tt := model.Test{Alias: alias, Device: "mobile", Steps: []step.Step{{Type: step.Navigate, Target: "/"}}}
		if err := e.st.CreateTest(e.ctx, a, &tt); err != nil {
			t.Fatal(err)
		}
	}
	for _, digest := range []bool{true, false} {
		ch := model.Channel{ID: model.NewChannelID(), Kind: "slack", Digest: digest}
		if err := e.st.CreateChannel(e.ctx, b, &ch); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now().UTC()
	var wg sync.WaitGroup
	results := make([]schedule.Result, 2)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = e.run(start) }()
	}
	wg.Wait()
	e.drain()

	jobs := e.audits(2 * (len(pagesA) + len(pagesB)))
	count := map[string]int{}
	for _, j := range jobs {
		if j.Website == gone.ID || j.Day != model.Day(start) || j.Attempt != 1 {
			t.Errorf("audit %+v: want today's, attempt 1, of a website that exists", j)
		}
		count[j.Page+" "+j.Device]++
	}
	for _, p := range append(pagesA, pagesB...) {
		for _, d := range audit.Devices {
			if n := count[p.ID+" "+d]; n != 1 {
				t.Errorf("page %s on %s queued %d times, want once", p.URL, d, n)
			}
		}
	}
	if len(jobs) != 2*(len(pagesA)+len(pagesB)) {
		t.Errorf("%d audits queued, want %d", len(jobs), 2*(len(pagesA)+len(pagesB)))
	}
	uxSites := map[string]int{}
	for _, body := range awstest.Receive(t, e.svc.Queues.UX, 3) {
		var j ux.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		uxSites[j.Website]++
	}
	if len(uxSites) != 3 || uxSites[a.ID] != 1 || uxSites[b.ID] != 1 || uxSites[c.ID] != 1 {
		t.Errorf("collections queued per website %v, want one for each of the 3", uxSites)
	}
	if runs := awstest.Receive(t, e.svc.Queues.Multistep, 2); len(runs) != 2 {
		t.Errorf("%d runs queued, want one per test (2)", len(runs))
	}
	notes := awstest.Receive(t, e.svc.Queues.Notify, 1)
	var digest notify.Job
	if len(notes) != 1 || json.Unmarshal([]byte(notes[0]), &digest) != nil || !digest.Digest || digest.Website != b.ID {
		t.Errorf("notifications %v, want the digest channel's digest", notes)
	}

	// What make daily reads back: all of it, from either run's start.
	q, over, err := e.sched.Fanned(e.ctx, results[0], start)
	if err != nil || !over || len(q.Audits) != len(jobs) || len(q.Runs) != 2 || len(q.UX) != 3 {
		t.Errorf("fanned over %v: %d audits, %d runs, %d collections (%v); want %d, 2, 3", over, len(q.Audits), len(q.Runs), len(q.UX), err, len(jobs))
	}

	// Later the same day: a run, and a website's message delivered again.
	later := laterSameDay(start, time.Hour)
	e.run(later)
	e.drain()
	if err := e.w.Handle(e.ctx, fanout.Job{Day: model.Day(start), Job: fanout.JobAudits, Account: b.Account, Website: b.ID}); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]*queue.Queue{"audit": e.svc.Queues.Audit, "ux": e.svc.Queues.UX, "multistep": e.svc.Queues.Multistep, "notify": e.svc.Queues.Notify} {
		if got := awstest.Receive(t, q, 0); len(got) != 0 {
			t.Errorf("the %s queue got %d messages more the same day", name, len(got))
		}
	}
	if q, over, err := e.sched.Fanned(e.ctx, results[0], later); err != nil || !over || len(q.Audits)+len(q.Runs)+len(q.UX) != 0 {
		t.Errorf("fanned since the later run: over %v, %+v (%v), want nothing", over, q, err)
	}
}

// laterSameDay is d after t, or the last instant of t's day when that comes first, so that
// a test started late in the evening (UTC) stays on its day.
func laterSameDay(t time.Time, d time.Duration) time.Time {
	end := t.UTC().Truncate(24 * time.Hour).Add(24*time.Hour - time.Nanosecond)
	if later := t.Add(d); later.Before(end) {
		return later
	}
	return end
}

// failingSends lets through the first n SendMessageBatch requests to the queue of a name,
// then fails every one, as a worker that stops in the middle of its sends.
type failingSends struct {
	base  http.RoundTripper
	queue string
	mu    sync.Mutex
	left  int
}

func (f *failingSends) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Amz-Target") == "AmazonSQS.SendMessageBatch" && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(f.queue)) {
			f.mu.Lock()
			f.left--
			stop := f.left < 0
			f.mu.Unlock()
			if stop {
				return nil, errors.New("the worker stopped")
			}
		}
	}
	return f.base.RoundTrip(r)
}

// TestFanoutTakesOverAStoppedAttempt: a worker stops after queuing part of a website's
// audits (its lease is its deadline, as in Lambda); one of those copies is audited meanwhile.
// Once the lease has passed, the message's next delivery takes the website and its shard over
// and queues the whole shard again. With the audit worker's check (audit.Superseded), every
// page is audited once on each device: nothing is lost, nothing runs twice.
func TestFanoutTakesOverAStoppedAttempt(t *testing.T) {
	e := newEnv(t)
	site, pages := e.website("acme", "example.com", 30) // one shard, 60 audits, 6 requests
	auditQueue := e.cfg.AuditQueue[strings.LastIndex(e.cfg.AuditQueue, "/")+1:]
	stops := &failingSends{base: http.DefaultTransport, queue: auditQueue, left: 3}
	failing := e.clients
	failing.SQS = sqs.NewFromConfig(e.clients.AWS, func(o *sqs.Options) { o.HTTPClient = &http.Client{Transport: stops} })
	_, stopping := e.service(failing)

	msg := fanout.Job{Day: model.Day(time.Now().UTC()), Job: fanout.JobAudits, Account: site.Account, Website: site.ID}
	deadline := time.Now().Add(time.Second)
	ctx, cancel := context.WithDeadline(e.ctx, deadline)
	err := stopping.Handle(ctx, msg)
	cancel()
	if err == nil {
		t.Fatal("the stopping worker succeeded")
	}
	first := e.audits(30)
	if len(first) == 0 || len(first) >= 60 {
		t.Fatalf("the stopped attempt queued %d audits, want some of the 60", len(first))
	}

	audited := map[string]int{}
	consume := func(j audit.Job) {
		t.Helper()
		why, err := audit.Superseded(e.ctx, e.st, site, j)
		if err != nil {
			t.Fatal(err)
		}
		if why != "" {
			return
		}
		audited[j.Page+" "+j.Device]++
		var page model.Page
		for _, p := range pages {
			if p.ID == j.Page {
				page = p
			}
		}
		if err := e.st.PutLabResult(e.ctx, site, page, model.LabResult{Device: j.Device, Day: j.Day, Audited: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	consume(first[0]) // before the takeover
	time.Sleep(time.Until(deadline) + 50*time.Millisecond)
	if err := e.w.Handle(e.ctx, msg); err != nil {
		t.Fatal(err)
	}
	second := e.audits(60)
	if len(second) != 60 {
		t.Fatalf("the takeover queued %d audits, want the whole shard (60)", len(second))
	}
	for _, j := range second {
		if j.Attempt != 2 {
			t.Fatalf("the takeover queued %+v: want attempt 2", j)
		}
	}
	// The copies still queued when the takeover came are consumed before and after the new
	// ones: the queue orders nothing.
	rest := first[1:]
	for _, j := range rest[:len(rest)/2] {
		consume(j)
	}
	for _, j := range second {
		consume(j)
	}
	for _, j := range rest[len(rest)/2:] {
		consume(j)
	}
	for _, p := range pages {
		for _, d := range audit.Devices {
			if n := audited[p.ID+" "+d]; n != 1 {
				t.Errorf("page %s on %s audited %d times, want once", p.URL, d, n)
			}
		}
	}
	if len(audited) != 60 {
		t.Errorf("%d page and device pairs audited, want 60", len(audited))
	}

	// The website's share and its shard are done, by the second attempt.
	ref := model.SiteRef{Account: site.Account, Website: site.ID}
	for _, part := range []string{"", "0000"} {
		c, err := e.st.FanoutClaim(e.ctx, store.WebsiteFanoutKey(ref, msg.Day, fanout.JobAudits, part))
		if err != nil || !c.Done || c.Attempt != 2 {
			t.Errorf("claim %q: %+v (%v), want done by attempt 2", part, c, err)
		}
	}
}

// TestBusyPartsComeBack: a website's share another attempt holds, within its lease, is not
// queued: the message fails, to come back after the visibility timeout.
func TestBusyPartsComeBack(t *testing.T) {
	e := newEnv(t)
	site, _ := e.website("acme", "example.com", 3)
	msg := fanout.Job{Day: model.Day(time.Now().UTC()), Job: fanout.JobAudits, Account: site.Account, Website: site.ID}
	k := store.WebsiteFanoutKey(msg.Ref(), msg.Day, msg.Job, "")
	if _, held, err := e.st.ClaimFanout(e.ctx, k, time.Now(), time.Now().Add(time.Hour), 1); err != nil || !held {
		t.Fatal(held, err)
	}
	if err := e.w.Handle(e.ctx, msg); !errors.Is(err, fanout.ErrBusy) {
		t.Errorf("a share held by a live attempt: %v, want ErrBusy", err)
	}
	body, _ := json.Marshal(msg)
	if resp, err := e.w.HandleSQS(e.ctx, awstest.SQSEvent(string(body))); err != nil || len(resp.BatchItemFailures) != 1 {
		t.Errorf("the message of a busy share: %+v (%v), want it failed", resp, err)
	}
	if got := awstest.Receive(t, e.svc.Queues.Audit, 0); len(got) != 0 {
		t.Errorf("%d audits queued for a busy share", len(got))
	}
}

// TestListingTakesOverAStoppedAttempt: a page of the listing whose attempt stopped (its
// lease passed, nothing recorded done) is walked again by the next delivery, and every
// website's message is queued.
func TestListingTakesOverAStoppedAttempt(t *testing.T) {
	e := newEnv(t)
	sites := e.websites(5, 1)
	day := model.Day(time.Now().UTC())
	past := time.Now().Add(-time.Minute)
	if _, held, err := e.st.ClaimFanout(e.ctx, store.ListingFanoutKey(day, fanout.JobUX, 0), past, past.Add(time.Second), 0); err != nil || !held {
		t.Fatal(held, err)
	}
	if err := fanout.NewQueue(e.svc.Queues.Fanout).Start(e.ctx, day, fanout.JobUX); err != nil {
		t.Fatal(err)
	}
	e.drain()
	if got := awstest.Receive(t, e.svc.Queues.UX, len(sites)); len(got) != len(sites) {
		t.Errorf("%d collections queued, want %d", len(got), len(sites))
	}
	if listed, err := fanout.Listed(e.ctx, e.st, day, fanout.JobUX); err != nil || !listed {
		t.Errorf("listed %v (%v), want the whole listing walked", listed, err)
	}
	c, err := e.st.FanoutClaim(e.ctx, store.ListingFanoutKey(day, fanout.JobUX, 0))
	if err != nil || c.Attempt != 2 || !c.Done || c.Count != 2 {
		t.Errorf("first page's claim %+v (%v), want done by attempt 2 with 2 websites", c, err)
	}
}

// TestRerunCompletesWhatWasLeft: a run the same day after one whose websites' messages were
// lost (the listing walked and recorded, a website's share done, the others never queued)
// walks the listing again and queues the shares left undone, and nothing of the done one.
func TestRerunCompletesWhatWasLeft(t *testing.T) {
	e := newEnv(t)
	sites := e.websites(3, 2)
	day := model.Day(time.Now().UTC())
	now := time.Now().UTC()
	// The earlier run: the listing's two pages done, the first website's share done.
	after := ""
	for n := 0; ; n++ {
		refs, next, err := e.st.WebsitesAfter(e.ctx, after, e.w.pageSize)
		if err != nil {
			t.Fatal(err)
		}
		k := store.ListingFanoutKey(day, fanout.JobAudits, n)
		if _, held, err := e.st.ClaimFanout(e.ctx, k, now, now.Add(time.Minute), 0); err != nil || !held {
			t.Fatal(held, err)
		}
		if err := e.st.FinishFanout(e.ctx, k, 1, model.FanoutDone{Queued: now, Count: len(refs), Next: next}); err != nil {
			t.Fatal(err)
		}
		if after = next; next == "" {
			break
		}
	}
	done := sites[0]
	k := store.WebsiteFanoutKey(model.SiteRef{Account: done.Account, Website: done.ID}, day, fanout.JobAudits, "")
	if _, held, err := e.st.ClaimFanout(e.ctx, k, now, now.Add(time.Minute), 1); err != nil || !held {
		t.Fatal(held, err)
	}
	if err := e.st.FinishFanout(e.ctx, k, 1, model.FanoutDone{Queued: now, Count: 4}); err != nil {
		t.Fatal(err)
	}

	if err := fanout.NewQueue(e.svc.Queues.Fanout).Start(e.ctx, day, fanout.JobAudits); err != nil {
		t.Fatal(err)
	}
	e.drain()
	per := map[string]int{}
	for _, j := range e.audits(8) {
		per[j.Website]++
	}
	if per[done.ID] != 0 || per[sites[1].ID] != 4 || per[sites[2].ID] != 4 {
		t.Errorf("audits queued per website %v, want 4 for each of the two left undone and none for %s", per, done.ID)
	}
}

// TestUnreadableMessages: a message without a day or with an unknown job fails, for the
// dead-letter queue; a website that is gone is done with.
func TestUnreadableMessages(t *testing.T) {
	e := newEnv(t)
	for _, j := range []fanout.Job{{Job: fanout.JobAudits}, {Day: "20261125", Job: "coffee"}, {Day: "20261125", Job: fanout.JobUX, Website: "w"}} {
		body, _ := json.Marshal(j)
		ev := awstest.SQSEvent(string(body))
		resp, err := e.w.HandleSQS(e.ctx, ev)
		if err != nil || len(resp.BatchItemFailures) != 1 {
			t.Errorf("message %s: %+v (%v), want it failed", body, resp, err)
		}
	}
	if err := e.w.Handle(e.ctx, fanout.Job{Day: "20261125", Job: fanout.JobAudits, Account: "acme", Website: "gone"}); err != nil {
		t.Errorf("a website that is gone: %v", err)
	}
}

// The multistep runs a website's share queued are named in its claim, for make daily.
func TestRunsAreNamedInTheClaim(t *testing.T) {
	e := newEnv(t)
	w, _ := e.website("acme", "example.com", 1)
	tt := model.Test{Alias: "signup", Device: "desktop", Steps: []step.Step{{Type: step.Navigate, Target: "/"}}}
	if err := e.st.CreateTest(e.ctx, w, &tt); err != nil {
		t.Fatal(err)
	}
	day := model.Day(time.Now().UTC())
	if err := e.w.Handle(e.ctx, fanout.Job{Day: day, Job: fanout.JobMultistep, Account: w.Account, Website: w.ID}); err != nil {
		t.Fatal(err)
	}
	c, err := e.st.FanoutClaim(e.ctx, store.WebsiteFanoutKey(model.SiteRef{Account: w.Account, Website: w.ID}, day, fanout.JobMultistep, ""))
	if err != nil || len(c.Items) != 1 {
		t.Fatalf("claim %+v (%v), want the run", c, err)
	}
	j, err := multistep.JobOfKey(model.SiteRef{Account: w.Account, Website: w.ID}, c.Items[0])
	if err != nil || j.Test != tt.ID {
		t.Errorf("run %+v (%v), want test %s's", j, err, tt.ID)
	}
	if _, err := e.st.GetRun(e.ctx, w, j.Test, j.Created, j.Run); err != nil {
		t.Errorf("the claim names run %+v, which the store does not have: %v", j, err)
	}
}
