package notifyworker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestVerdictInThread: an incident's detection reaches a webhook (subscribed to detections
// only), Slack and email; its field verdict then follows once in each: the webhook's
// incident.verdict names the detection's event in inReplyTo, the email replies to the first
// one (In-Reply-To and References its Message-ID, "Re:" its subject); a redelivered message
// and the verdict recorded again send nothing more.
func TestVerdictInThread(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pages := []model.Page{{URL: "/pricing", Alias: "Pricing"}}
	if err := f.st.CreatePages(ctx, f.site, pages); err != nil {
		t.Fatal(err)
	}
	hook, slack := newReceiver(t), newReceiver(t)
	f.addChannel(t, channel.Webhook, hook.srv.URL+"/hook", event.RegressionDetected)
	f.addChannel(t, channel.Slack, slack.srv.URL+"/slack")
	ses, _ := f.addEmail(t, "perf@example.com")
	id := model.IncidentID(f.site, "page:"+pages[0].ID, model.KindRegression, "20261111")
	reg := model.Regression{ID: model.RegressionID(f.site, "lcp", "20261111"), Kind: model.KindRegression, Source: "lab", Page: pages[0].ID,
		Device: "mobile", Metric: "lcp", LastGood: "20261110", FirstBad: "20261111", Before: model.Level{Median: 2000},
		After: model.Level{Median: 2800}, Percent: 40, Status: model.RegressionOpen, Detected: time.Now(), Incident: id}
	if _, err := f.st.PutRegression(ctx, f.site, reg); err != nil {
		t.Fatal(err)
	}
	in := model.Incident{ID: id, Kind: model.KindRegression, Subject: "page:" + pages[0].ID, Members: []model.Regression{reg}}
	q := notify.NewQueue(f.q)
	q.SetGather(0)
	rec := event.NewRecorder(f.st, q, awstest.Log(t))
	if err := rec.Incident(ctx, f.site, in, regression.Unit); err != nil {
		t.Fatal(err)
	}
	f.run(t, 2*time.Second)
	if len(hook.got()) != 1 || len(slack.got()) != 1 {
		t.Fatalf("detection: %d webhooks, %d Slack messages", len(hook.got()), len(slack.got()))
	}
	mails, err := ses.Mailbox(ctx)
	if err != nil || len(mails) != 1 {
		t.Fatalf("detection: %d emails, %v", len(mails), err)
	}
	first := mails[0]

	v := model.Verdict{Incident: id, Page: pages[0].ID, Device: "mobile", Verdict: model.VerdictConfirmed, Day: "20261114", Decided: time.Now(),
		Summary: "Confirmed in the field: real users' p75 LCP 1900 ms → 2700 ms, +42 %; noise 190 ms."}
	if err := rec.Verdict(ctx, f.site, in, v); err != nil {
		t.Fatal(err)
	}
	f.run(t, 2*time.Second)
	got := hook.got()
	if len(got) != 2 {
		t.Fatalf("%d webhooks, want the detection and its verdict", len(got))
	}
	var detected, verdict event.Document
	if err := json.Unmarshal(got[0].body, &detected); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got[1].body, &verdict); err != nil {
		t.Fatal(err)
	}
	if verdict.Type != event.IncidentVerdict || verdict.After != model.VerdictConfirmed || verdict.Subject.Incident != id ||
		verdict.InReplyTo != detected.ID || detected.Type != event.RegressionDetected || verdict.Summary != v.Summary {
		t.Errorf("verdict webhook %+v after %+v", verdict, detected)
	}
	if s := slack.got(); len(s) != 2 || !strings.Contains(string(s[1].body), "Field verdict: example.com") || !strings.Contains(string(s[1].body), "Confirmed in the field") {
		t.Errorf("Slack messages %d: %s", len(s), s[len(s)-1].body)
	}
	mails, err = ses.Mailbox(ctx)
	if err != nil || len(mails) != 2 {
		t.Fatalf("%d emails, %v; want the detection and its reply", len(mails), err)
	}
	reply := mails[1]
	want := "<" + first.MessageID + "@email.amazonses.com>"
	headers := map[string]string{}
	for _, h := range reply.Headers {
		headers[h.Name] = h.Value
	}
	if first.MessageID == "" || headers["In-Reply-To"] != want || headers["References"] != want || reply.Subject != "Re: "+first.Subject {
		t.Errorf("reply %q %v; want In-Reply-To and References %s, subject Re: %q", reply.Subject, headers, want, first.Subject)
	}

	// A redelivered message, and the verdict recorded again: nothing more anywhere.
	evs, _, err := f.st.Events(ctx, f.site, model.EventFilter{Types: []string{event.IncidentVerdict}}, "", 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("verdict events %d, %v", len(evs), err)
	}
	if err := f.q.Send(ctx, notify.Job{Account: f.site.Account, Website: f.site.ID, Event: store.EventKey(evs[0])}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Verdict(ctx, f.site, in, model.Verdict{Incident: id, Verdict: model.VerdictNotSeen, Summary: "changed its mind"}); err != nil {
		t.Fatal(err)
	}
	f.run(t, 2*time.Second)
	mails, _ = ses.Mailbox(ctx)
	if len(hook.got()) != 2 || len(slack.got()) != 2 || len(mails) != 2 {
		t.Errorf("after a redelivery: %d webhooks, %d Slack messages, %d emails; want 2 each", len(hook.got()), len(slack.got()), len(mails))
	}
}
