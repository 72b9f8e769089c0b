package notifyworker

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/standin"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// receiver is a local endpoint that records what it is sent and answers the statuses it is
// given in turn (then 200).
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	answers  []int
	requests []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t testing.TB, answers ...int) *receiver {
	r := &receiver{answers: answers}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, received{req.Header.Clone(), body})
		status := http.StatusOK
		if len(r.answers) > 0 {
			status, r.answers = r.answers[0], r.answers[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprint(w, "a body the notifier must not echo")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.requests...)
}

// verifySignature checks a request per the Standard Webhooks specification, written here
// from the specification rather than with the library the notifier signs with: the
// signature is base64 of HMAC-SHA256, keyed with the base64 key after "whsec_", of
// "<webhook-id>.<webhook-timestamp>.<body>", listed as "v1,<signature>".
func verifySignature(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || id == "" {
		return fmt.Errorf("webhook-id %q, webhook-timestamp %q", id, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("timestamp %s off by %s", ts, d)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, s, ok := strings.Cut(sig, ","); ok && v == "v1" && hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("no valid signature in %q", h.Get("webhook-signature"))
}

type fixture struct {
	st     *store.Store
	site   model.Website
	budget model.Budget
	q      *queue.Queue
	rec    *event.Recorder
	w      *Worker
	keys   *seal.Keyring
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	e := awstest.NewEnv(t)
	st, log := e.Store, e.Log
	site, _ := e.Website(model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"})
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}
	if err := st.CreateBudget(context.Background(), site, &b); err != nil {
		t.Fatal(err)
	}
	q := e.Queue(service.NotifyQueueSettings)
	keys := seal.FixedKey(seal.GenerateKey())
	sender := deliver.NewSender(browser.Guard{AllowPrivate: true}, nil, "", "https://api.example.com", "https://dash.example.com/app/")
	w := NewWorker(st, keys, sender, notify.NewQueue(q), log)
	// Retries a second apart, so that a test sees several attempts.
	w.backoff = func(int) time.Duration { return time.Second }
	return &fixture{st: st, site: site, budget: b, q: q, rec: event.NewRecorder(st, notify.NewQueue(q), log), w: w, keys: keys}
}

// addChannel stores a channel as the API does and returns it with its secret.
func (f *fixture) addChannel(t testing.TB, kind, url string, events ...string) (model.Channel, string) {
	t.Helper()
	c := model.Channel{ID: model.NewChannelID(), Name: kind, Kind: kind, Events: events}
	target := channel.Target{URL: url}
	if kind == channel.Webhook {
		target.Secret = channel.NewSecret()
	}
	f.seal(t, &c, target)
	return c, target.Secret
}

// addEmail starts an SES stand-in of the test's own, which the worker's email goes through, and
// stores an email channel to recipients; it returns the stand-in (its mailbox holds what was
// sent) and the channel.
func (f *fixture) addEmail(t testing.TB, recipients ...string) (*standin.SES, model.Channel) {
	t.Helper()
	ses := awstest.SES(t)
	f.w.sender = deliver.NewSender(browser.Guard{AllowPrivate: true}, ses.Client(), "openvitals@example.com", "https://api.example.com", "https://dash.example.com/app/")
	c := model.Channel{ID: model.NewChannelID(), Name: "team", Kind: channel.Email}
	f.seal(t, &c, channel.Target{Recipients: recipients})
	return ses, c
}

// seal seals target into c and stores c, as the API does.
func (f *fixture) seal(t testing.TB, c *model.Channel, target channel.Target) {
	t.Helper()
	if err := channel.Seal(context.Background(), f.keys, f.site, c, target); err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateChannel(context.Background(), f.site, c); err != nil {
		t.Fatal(err)
	}
}

// budgetChanges records the budget's status changing to each status in turn.
func (f *fixture) budgetChanges(t *testing.T, statuses ...string) {
	t.Helper()
	for _, status := range statuses {
		if err := recordBudgets(context.Background(), f.rec, f.site, status); err != nil {
			t.Fatal(err)
		}
	}
}

// statusOf reports every budget with one page and device in its status (none when ok).
type statusOf string

func (s statusOf) Reports(_ context.Context, _ model.Website, budgets []model.Budget) ([]budget.Report, error) {
	out := make([]budget.Report, len(budgets))
	for i, b := range budgets {
		out[i] = budget.Report{Budget: b, Status: string(s), Pages: []budget.PageStatus{}}
		if s != budget.OK {
			out[i].Pages = []budget.PageStatus{{Page: model.Page{ID: "home"}, Device: "mobile", Status: string(s)}}
		}
	}
	return out, nil
}

// recordBudgets records the website's budgets' statuses as status, as after an audit whose
// values are not known, which has every budget judged on every page (as statusOf reports them).
func recordBudgets(ctx context.Context, rec *event.Recorder, site model.Website, status string) error {
	return rec.Budgets(ctx, site, event.Measured{Page: model.Page{ID: "home"}, Device: "mobile", Day: model.Day(time.Now())}, statusOf(status))
}

// run delivers what the queue holds until it stays empty for quiet.
func (f *fixture) run(t *testing.T, quiet time.Duration) {
	t.Helper()
	deadline := time.Now().Add(quiet)
	awstest.Drain(t, f.q, 10, f.w.HandleSQS, func(int) bool { return time.Now().After(deadline) })
}

func (f *fixture) deliveries(t *testing.T, c model.Channel) []model.Delivery {
	t.Helper()
	ds, _, _, err := f.st.Deliveries(context.Background(), f.site, c.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestWebhookRetriedUntilDelivered: a budget exceeded is one event; the receiver answers 500,
// then 200: it gets the same webhook-id twice, both signed as the specification says, and
// nothing more, even when the event's message comes again.
func TestWebhookRetriedUntilDelivered(t *testing.T) {
	f := newFixture(t)
	r := newReceiver(t, http.StatusInternalServerError)
	hook, secret := f.addChannel(t, channel.Webhook, r.srv.URL+"/hooks/openvitals")
	other := newReceiver(t)
	f.addChannel(t, channel.Webhook, other.srv.URL+"/x", event.AuditFailing) // takes another type

	f.budgetChanges(t, "exceeded", "exceeded") // detected twice, recorded once
	f.run(t, 4*time.Second)

	got := r.got()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2 (500, then 200)", len(got))
	}
	evs, _, err := f.st.Events(context.Background(), f.site, model.EventFilter{}, "", 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events (%v), want 1", len(evs), err)
	}
	for i, req := range got {
		if id := req.header.Get("webhook-id"); id != evs[0].ID {
			t.Errorf("request %d: webhook-id %q, want the event's %q", i, id, evs[0].ID)
		}
		if err := verifySignature(secret, req.header, req.body, time.Now()); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		var doc event.Document
		if err := json.Unmarshal(req.body, &doc); err != nil || doc.Type != event.BudgetStatusChanged || doc.Before != "ok" || doc.After != "exceeded" ||
			doc.Links.Subject != "https://api.example.com/"+f.site.ID+"/budgets" || doc.View == nil || doc.View.Subject != "https://dash.example.com/app/#/w/"+f.site.ID ||
			doc.View.Events != "https://dash.example.com/app/#/w/"+f.site.ID+"/events" {
			t.Errorf("request %d: body %s (%v)", i, req.body, err)
		}
	}
	if n := len(other.got()); n != 0 {
		t.Errorf("the channel of audit.failing got %d requests", n)
	}
	ds := f.deliveries(t, hook)
	if len(ds) != 2 || ds[0].Status != 200 || ds[0].Attempt != 2 || ds[1].Status != 500 || ds[1].Retry.IsZero() ||
		strings.Contains(ds[1].Error, "must not echo") {
		t.Errorf("deliveries %+v", ds)
	}
	if c, _ := f.st.Channel(context.Background(), f.site, hook.ID); !c.FailingSince.IsZero() {
		t.Error("a channel whose last delivery succeeded is failing")
	}

	// The event's message again (a redelivery): nothing more is sent.
	if err := notify.NewQueue(f.q).Enqueue(context.Background(), f.site, evs[0]); err != nil {
		t.Fatal(err)
	}
	f.run(t, 2*time.Second)
	if n := len(r.got()); n != 2 {
		t.Errorf("%d requests after a redelivery, want still 2", n)
	}
}

// TestNotificationsStopAndCoalesce: a 4xx ends the retries; a state that changed again
// before the notifier got to it is delivered once, with its final state; a Slack channel
// gets a Block Kit message; a channel on a link-local address is refused by the guard.
func TestNotificationsStopAndCoalesce(t *testing.T) {
	f := newFixture(t)
	gone := newReceiver(t, http.StatusGone)
	goneHook, _ := f.addChannel(t, channel.Webhook, gone.srv.URL+"/old")
	slack := newReceiver(t)
	f.addChannel(t, channel.Slack, slack.srv.URL+"/services/T/B/x")
	metadata, _ := f.addChannel(t, channel.Webhook, "http://169.254.169.254/latest/meta-data")

	f.budgetChanges(t, "exceeded", "at-risk") // both queued before the notifier runs
	f.run(t, 3*time.Second)

	if n := len(gone.got()); n != 1 {
		t.Errorf("%d requests to a receiver answering 410, want 1", n)
	}
	if ds := f.deliveries(t, goneHook); len(ds) != 1 || ds[0].Status != 410 || !ds[0].Retry.IsZero() {
		t.Errorf("deliveries to a 410 receiver %+v", ds)
	}
	msgs := slack.got()
	if len(msgs) != 1 {
		t.Fatalf("%d Slack messages, want 1 (the final state)", len(msgs))
	}
	var m struct {
		Text   string
		Blocks []struct {
			Type string
			Text struct{ Text string }
		}
	}
	if err := json.Unmarshal(msgs[0].body, &m); err != nil || len(m.Blocks) < 3 || m.Blocks[0].Type != "header" ||
		!strings.Contains(m.Blocks[0].Text.Text, "Budget status changed") || !strings.Contains(m.Text, "exceeded → at-risk") ||
		!strings.Contains(string(msgs[0].body), "https://dash.example.com/app/#/w/"+f.site.ID+"|Details") || strings.Contains(string(msgs[0].body), "api.example.com") {
		t.Errorf("Slack message %s (%v)", msgs[0].body, err)
	}
	if ds := f.deliveries(t, metadata); len(ds) != 1 || ds[0].Status != 0 || !strings.Contains(ds[0].Error, "refused") || !ds[0].Retry.IsZero() {
		t.Errorf("deliveries to a link-local address %+v", ds)
	}
}

// TestEmailThroughSES: an email channel's event reaches the SES stand-in's mailbox, to its
// recipients, with a subject, a plain-text and an HTML body.
func TestEmailThroughSES(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ses, c := f.addEmail(t, "perf@example.com", "ops@example.com")
	f.budgetChanges(t, "exceeded")
	f.run(t, 2*time.Second)

	mails, err := ses.Mailbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(mails) != 1 {
		t.Fatalf("%d emails, want 1", len(mails))
	}
	m := mails[0]
	if m.From != "openvitals@example.com" || strings.Join(m.Destination.To, ",") != "perf@example.com,ops@example.com" ||
		!strings.Contains(m.Subject, "Budget status changed: example.com") ||
		!strings.Contains(m.Body.Text, "After:  exceeded") || !strings.Contains(m.Body.HTML, "<td>exceeded</td>") ||
		!strings.Contains(m.Body.HTML, `href="https://dash.example.com/app/#/w/`+f.site.ID+`"`) ||
		!strings.Contains(m.Body.Text, "Details: https://dash.example.com/app/#/w/"+f.site.ID+"\n") || strings.Contains(m.Body.HTML+m.Body.Text, "api.example.com") {
		// A person opens the dashboard's view: the API's address answers a browser 401.
		t.Errorf("email %+v", m)
	}
	if ds := f.deliveries(t, c); len(ds) != 1 || ds[0].Status != 200 || ds[0].Error != "" {
		t.Errorf("deliveries %+v", ds)
	}
}

// TestDailyDigest: a digest channel gets nothing per event, then one message a day with the
// events since its last digest; the next day's run without new events sends nothing.
func TestDailyDigest(t *testing.T) {
	f := newFixture(t)
	daily := newReceiver(t)
	c, secret := f.addChannel(t, channel.Webhook, daily.srv.URL+"/daily")
	c.Digest = true
	if err := f.st.UpdateChannel(context.Background(), f.site, c); err != nil {
		t.Fatal(err)
	}
	f.budgetChanges(t, "exceeded")
	f.run(t, 2*time.Second)
	f.budgetChanges(t, "ok")
	f.run(t, 2*time.Second)
	if n := len(daily.got()); n != 0 {
		t.Fatalf("a digest channel got %d requests before its digest", n)
	}
	for range 2 { // the day's digest, then the next day's, with nothing new
		n, err := notify.NewQueue(f.q).EnqueueDigests(context.Background(), f.st, f.site)
		if err != nil || n != 1 {
			t.Fatalf("queued %d digests (%v), want 1", n, err)
		}
		f.run(t, 2*time.Second)
	}
	got := daily.got()
	if len(got) != 1 {
		t.Fatalf("%d digest requests, want 1", len(got))
	}
	if err := verifySignature(secret, got[0].header, got[0].body, time.Now()); err != nil {
		t.Error(err)
	}
	var doc event.Document
	if err := json.Unmarshal(got[0].body, &doc); err != nil || doc.Type != event.DailyDigest || len(doc.Events) != 2 ||
		doc.Events[0].After != "ok" || doc.Events[1].After != "exceeded" || !strings.Contains(doc.Summary, "2 changes on example.com") {
		t.Errorf("digest %s (%v)", got[0].body, err)
	}
}

// TestChannelFailing: a Slack channel whose receiver answers 500 three times in a row is
// failing after the third (channel.failing, sent to the website's other channel, not to it),
// and active again once a delivery succeeds (channel.recovered).
func TestChannelFailing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	broken := newReceiver(t, 500, 500, 500)
	slackChannel, _ := f.addChannel(t, channel.Slack, broken.srv.URL+"/services/T/B/x")
	ops := newReceiver(t)
	f.addChannel(t, channel.Webhook, ops.srv.URL+"/ops")

	f.budgetChanges(t, "exceeded")
	f.run(t, 6*time.Second)

	if n := len(broken.got()); n != 4 {
		t.Fatalf("the Slack channel got %d requests, want 4 (3 failed, then delivered)", n)
	}
	var types []string
	for _, req := range ops.got() {
		var doc event.Document
		if err := json.Unmarshal(req.body, &doc); err != nil {
			t.Fatal(err)
		}
		types = append(types, doc.Type)
		if strings.HasPrefix(doc.Type, "channel.") && (doc.Subject.Channel != slackChannel.ID ||
			doc.Links.Subject != "https://api.example.com/"+f.site.ID+"/channels/"+slackChannel.ID+"/deliveries") {
			t.Errorf("%s names %+v, links %+v", doc.Type, doc.Subject, doc.Links)
		}
	}
	slices.Sort(types)
	if want := []string{event.BudgetStatusChanged, event.ChannelFailing, event.ChannelRecovered}; !slices.Equal(types, want) {
		t.Fatalf("the other channel got %v, want %v", types, want)
	}
	evs, _, err := f.st.Events(ctx, f.site, model.EventFilter{Types: []string{event.ChannelFailing}}, "", 0)
	if err != nil || len(evs) != 1 || !strings.Contains(evs[0].Summary, "last 3 deliveries failed") {
		t.Fatalf("channel.failing events %+v (%v)", evs, err)
	}
	if c, err := f.st.Channel(ctx, f.site, slackChannel.ID); err != nil || c.Failing() || c.Failures != 0 {
		t.Fatalf("after a success the channel is %+v (%v), want active", c, err)
	}
}

// TestIncidentMessage: an incident's detection, recorded with its first change, is sent as
// the incident is when it is delivered: one message naming the change found since on the
// other device too, and the measurement method of the lab results.
func TestIncidentMessage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pages := []model.Page{{URL: "/pricing", Alias: "Pricing"}}
	if err := f.st.CreatePages(ctx, f.site, pages); err != nil {
		t.Fatal(err)
	}
	hook := newReceiver(t)
	f.addChannel(t, channel.Webhook, hook.srv.URL+"/hook")
	incident := model.IncidentID(f.site, "page:"+pages[0].ID, model.KindRegression, "20261111")
	reg := func(device string, percent float64) model.Regression {
		return model.Regression{ID: model.RegressionID(f.site, device, "20261111"), Kind: model.KindRegression, Source: "lab", Page: pages[0].ID,
			Device: device, Method: model.MethodApplied, Metric: "lcp", LastGood: "20261110", FirstBad: "20261111", Before: model.Level{Median: 2000},
			After: model.Level{Median: 2000 * (1 + percent/100)}, Percent: percent, Status: model.RegressionOpen, Detected: time.Now(), Incident: incident}
	}
	mobile, desktop := reg("mobile", 40), reg("desktop", 20)
	q := notify.NewQueue(f.q)
	q.SetGather(0)
	rec := event.NewRecorder(f.st, q, awstest.Log(t))
	if _, err := f.st.PutRegression(ctx, f.site, mobile); err != nil {
		t.Fatal(err)
	}
	if err := rec.Incident(ctx, f.site, model.Incident{ID: incident, Kind: model.KindRegression, Subject: "page:" + pages[0].ID, Members: []model.Regression{mobile}}, regression.Unit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.PutRegression(ctx, f.site, desktop); err != nil {
		t.Fatal(err)
	}
	f.run(t, 2*time.Second)
	got := hook.got()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	var doc event.Document
	if err := json.Unmarshal(got[0].body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Type != event.RegressionDetected || doc.Subject.Incident != incident || doc.Subject.Device != "" || doc.Subject.Regression != "" ||
		doc.Summary != "Regression of Pricing (/pricing) from 2026-11-11: LCP 2,000 → 2,800 ms (+40 %, desktop, mobile, applied throttling)" ||
		doc.Links.Subject != "https://api.example.com/"+f.site.ID+"/incidents/"+incident ||
		doc.View == nil || doc.View.Subject != "https://dash.example.com/app/#/w/"+f.site.ID+"/regressions?incident="+incident {
		t.Fatalf("message %+v", doc)
	}
}
