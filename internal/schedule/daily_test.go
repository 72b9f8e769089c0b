package schedule_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/fanoutworkerfn"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// newService is the service over a table and every queue of the test's own, each queue with
// the settings the stack gives it, and no credentials key.
func newService(t *testing.T) *service.Service {
	t.Helper()
	e := awstest.NewEnv(t)
	t.Setenv("OPENVITALS_CREDENTIALS_KEY", "")
	cfg := service.Config{Table: e.Store.Table(), Bucket: "openvitals-test"}
	cfg.NameQueues(awstest.Queues(t, e.Clients))
	svc, err := service.New(cfg, e.Clients, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Each daily rule of the stack names its job in the event, and the scheduler starts that
// job's fan-out alone; an event naming none (the local clock, make daily) starts them all, and
// the fan-out queues a job's work once a day whichever rule started it.
func TestDailyRunsTheJobsTheEventNames(t *testing.T) {
	svc := newService(t)
	st := svc.Store
	sched := schedulefn.New(svc)
	fanouts, err := fanoutworkerfn.New(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	site, _ := awstest.Website(t, st, model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}, []model.Page{{URL: "/", Alias: "Home"}})
	for _, digest := range []bool{true, false} {
		c := model.Channel{ID: model.NewChannelID(), Kind: "slack", Digest: digest}
		if err := st.CreateChannel(ctx, site, &c); err != nil {
			t.Fatal(err)
		}
	}
	event := func(jobs ...string) events.CloudWatchEvent {
		ev := events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: time.Now().UTC()}
		if jobs != nil {
			ev.Detail, _ = json.Marshal(map[string]any{"jobs": jobs})
		}
		return ev
	}
	// run invokes the scheduler, then the fan-out workers until they are done, and counts what
	// they queued, expecting what want says.
	run := func(ev events.CloudWatchEvent, want map[string]int) (schedule.Result, map[string]int) {
		t.Helper()
		res, err := sched.Handle(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		awstest.DrainAll(t, svc.Queues.Fanout, 1, 1, fanouts.HandleSQS)
		got := map[string]int{}
		for name, q := range map[string]*queue.Queue{"audits": svc.Queues.Audit, "ux": svc.Queues.UX, "notify": svc.Queues.Notify} {
			got[name] = len(awstest.Receive(t, q, want[name]))
		}
		return res, got
	}

	res, got := run(event(schedule.JobUX), map[string]int{"ux": 1})
	if !slices.Equal(res.Fanouts, []string{schedule.JobUX}) || got["ux"] != 1 || got["audits"] != 0 || got["notify"] != 0 {
		t.Fatalf("ux rule: %+v, queued %v; want one collection and no audit", res, got)
	}
	res, got = run(event(schedule.JobAudits), map[string]int{"audits": 2, "notify": 1})
	if !slices.Equal(res.Fanouts, []string{schedule.JobAudits}) || got["audits"] != 2 || got["ux"] != 0 || got["notify"] != 1 {
		t.Fatalf("audit rule: %+v, queued %v; want two audits (desktop, mobile), no collection, the digest channel's digest", res, got)
	}
	// No jobs named: everything, but nothing twice the same day.
	res, got = run(event(), nil)
	if len(res.Fanouts) != len(schedule.Jobs) || got["audits"] != 0 || got["ux"] != 0 {
		t.Fatalf("all jobs again: %+v, queued %v; want nothing queued twice", res, got)
	}
	if _, err := sched.Handle(ctx, event("coffee")); err == nil {
		t.Error("an unknown job was accepted")
	}
}

// The sweep rule's event runs no daily job, only the sweep of overdue work, whose deadlines
// come from the queues' own settings: the audit queue's 5-minute visibility and 3 deliveries
// make a series test without an outcome overdue after 15 minutes.
func TestSweepEventEndsOverdueWork(t *testing.T) {
	svc := newService(t)
	st, audits := svc.Store, svc.Queues.Audit
	sched := schedulefn.New(svc)
	ctx := context.Background()
	site, _ := awstest.Website(t, st, model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}, []model.Page{{URL: "/", Alias: "Home"}})
	pages, _ := st.Pages(ctx, site)
	series, _, _, err := audit.NewQueue(st, audits, awstest.Log(t)).Series(ctx, site,
		audit.SeriesRequest{Targets: []audit.Target{{Page: pages[0], Device: "desktop"}}})
	if err != nil {
		t.Fatal(err)
	}
	awstest.Receive(t, audits, 1) // lost
	sweep := func(at time.Time) schedule.Result {
		t.Helper()
		detail, _ := json.Marshal(map[string]any{"jobs": []string{schedule.JobSweep}})
		res, err := sched.Handle(ctx, events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: at, Detail: detail})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Fanouts)+res.Purges != 0 {
			t.Fatalf("the sweep event ran daily work: %+v", res)
		}
		return res
	}
	if res := sweep(series.Created.Add(14 * time.Minute)); res.Overdue != (schedule.Overdue{}) {
		t.Errorf("14 minutes after: %+v, want nothing done", res.Overdue)
	}
	first := series.Created.Add(16 * time.Minute)
	if res := sweep(first); res.Overdue.SeriesTests != (queue.Swept{Requeued: 1}) {
		t.Errorf("16 minutes after: %+v, want the test queued again", res.Overdue)
	}
	awstest.Receive(t, audits, 1) // lost again
	if res := sweep(first.Add(16 * time.Minute)); res.Overdue.SeriesTests != (queue.Swept{Failed: 1}) {
		t.Errorf("16 minutes after that: %+v, want the test failed", res.Overdue)
	}
	got, err := st.TestSeries(ctx, site, series.ID)
	if err != nil || got.Status() != model.RunFailed {
		t.Errorf("series %+v (%v), want failed", got, err)
	}
}
