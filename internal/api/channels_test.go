package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type channelOut struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Events     []string `json:"events"`
	Digest     bool     `json:"digest"`
	URL        string   `json:"url"`
	Recipients string   `json:"recipients"`
	Status     string   `json:"status"`
	Secret     string   `json:"secret"`
}

// TestChannels: admins create, read, change and delete channels; a webhook's secret is shown
// at creation and rotation only, URLs are shown masked, nothing sealed is readable in the
// table; bad input is 422 and changes nothing; viewers read; another account sees nothing.
func TestChannels(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	base := "/" + site.ID + "/channels"

	var hook channelOut
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "CI hook", "kind": "webhook", "url": "https://hooks.example.com/in/s3cr3t-path",
		"events": []string{"budget.status_changed", "budget.status_changed", "audit.failing"}}).Want(t, 201).Decode(t, &hook)
	if !strings.HasPrefix(hook.Secret, "whsec_") || hook.URL != "https://hooks.example.com/***" || strings.Join(hook.Events, ",") != "budget.status_changed,audit.failing" || hook.Status != "active" {
		t.Fatalf("created webhook %+v", hook)
	}
	var slack, email channelOut
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Slack", "kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/xyz"}).Want(t, 201).Decode(t, &slack)
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Mail", "kind": "email", "recipients": []string{"perf@example.com", "ops@example.com"}, "digest": true}).Want(t, 201).Decode(t, &email)
	if slack.Secret != "" || slack.URL != "https://hooks.slack.com/***" || email.Recipients != "p***@example.com, o***@example.com" || !email.Digest {
		t.Errorf("slack %+v, email %+v", slack, email)
	}

	list := apitest.List[channelOut](t, e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200))
	if len(list) != 3 || list[0].ID != hook.ID || list[0].Secret != "" {
		t.Fatalf("list %+v", list)
	}
	var got channelOut
	e.do("GET", base+"/"+hook.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	if got.Secret != "" || got.URL != hook.URL {
		t.Errorf("read back %+v", got)
	}

	// Nothing sealed is readable in the table.
	w := e.storedWebsite(site.ID)
	stored, err := e.store.Channel(context.Background(), w, hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.Target), "s3cr3t") || strings.Contains(string(stored.Secret), hook.Secret[6:]) {
		t.Error("the URL or the secret is stored in the clear")
	}

	for _, tc := range []struct {
		name   string
		body   any
		fields []string
	}{
		{"http URL", map[string]any{"name": "x", "kind": "webhook", "url": "http://hooks.example.com/x"}, []string{"url"}},
		{"no URL", map[string]any{"name": "x", "kind": "slack"}, []string{"url"}},
		{"user in URL", map[string]any{"name": "x", "kind": "webhook", "url": "https://u:p@hooks.example.com/x"}, []string{"url"}},
		{"unknown kind and event", map[string]any{"name": "x", "kind": "pager", "events": []string{"nope"}}, []string{"kind", "events"}},
		{"bad recipient", map[string]any{"name": "x", "kind": "email", "recipients": []string{"not an address"}}, []string{"recipients"}},
		{"no recipients", map[string]any{"name": "x", "kind": "email", "recipients": []string{}}, []string{"recipients"}},
		{"empty name", map[string]any{"name": " ", "kind": "slack", "url": "https://hooks.slack.com/x"}, []string{"name"}},
		{"port out of range", map[string]any{"name": "x", "kind": "webhook", "url": "https://hooks.example.com:99999/x"}, []string{"url"}},
		{"port 0", map[string]any{"name": "x", "kind": "webhook", "url": "https://hooks.example.com:0/x"}, []string{"url"}},
		{"empty punycode label", map[string]any{"name": "x", "kind": "webhook", "url": "https://xn--.example.com/x"}, []string{"url"}},
		{"bad punycode label", map[string]any{"name": "x", "kind": "webhook", "url": "https://xn--zz.example.com/x"}, []string{"url"}},
		{"300-character label", map[string]any{"name": "x", "kind": "webhook", "url": "https://" + strings.Repeat("a", 300) + ".example.com/x"}, []string{"url"}},
		{"label with a hyphen first", map[string]any{"name": "x", "kind": "slack", "url": "https://-hooks.example.com/x"}, []string{"url"}},
		{"host name too long", map[string]any{"name": "x", "kind": "slack", "url": "https://" + strings.Repeat("abcdefghi.", 26) + "com/x"}, []string{"url"}},
		{"single-label host", map[string]any{"name": "x", "kind": "slack", "url": "https://hooks/x"}, []string{"url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do("POST", base, apitest.AdminKey, tc.body).Want(t, 422).Problem(t, tc.fields...)
		})
	}
	e.do("POST", base, apitest.AdminKey, `{"name":"x","kind":"slack","url":"https://a.example/","extra":1}`).Want(t, 400)
	e.do("PUT", base+"/"+slack.ID, apitest.AdminKey, map[string]any{"url": "https://hooks.slack.com:70000/x"}).Want(t, 422).Problem(t, "url")
	e.do("PUT", base+"/"+slack.ID, apitest.AdminKey, map[string]any{"kind": "webhook"}).Want(t, 422).Problem(t, "kind")
	e.do("PUT", base+"/"+slack.ID, apitest.AdminKey, map[string]any{"rotateSecret": true}).Want(t, 422).Problem(t, "rotateSecret")
	if n := len(apitest.List[channelOut](t, e.do("GET", base, apitest.AdminKey, nil).Want(t, 200))); n != 3 {
		t.Errorf("%d channels after refused requests, want 3", n)
	}

	// Rotation: a new secret, shown once; the URL is kept.
	var rotated channelOut
	e.do("PUT", base+"/"+hook.ID, apitest.AdminKey, map[string]any{"rotateSecret": true, "name": "CI"}).Want(t, 200).Decode(t, &rotated)
	if rotated.Secret == "" || rotated.Secret == hook.Secret || rotated.Name != "CI" || rotated.URL != hook.URL {
		t.Errorf("rotated %+v", rotated)
	}

	// Roles and tenants.
	e.do("POST", base, apitest.ViewerKey, map[string]any{"name": "x", "kind": "slack", "url": "https://hooks.slack.com/x"}).Want(t, 403)
	e.do("DELETE", base+"/"+hook.ID, apitest.ViewerKey, nil).Want(t, 403)
	e.do("GET", base, apitest.OtherKey, nil).Want(t, 404)
	e.do("GET", base+"/"+hook.ID, apitest.OtherKey, nil).Want(t, 404)
	e.do("POST", base+"/"+hook.ID+"/test", apitest.OtherKey, nil).Want(t, 404)
	e.do("GET", base+"/"+hook.ID+"/deliveries", apitest.OtherKey, nil).Want(t, 404)

	// A test is queued for the notifier, naming the channel.
	e.do("POST", base+"/"+hook.ID+"/test", apitest.AdminKey, nil).Want(t, 202)
	bodies := awstest.Receive(t, e.notify, 1)
	var job notify.Job
	if err := json.Unmarshal([]byte(bodies[0]), &job); err != nil || !job.Sample || job.Channel != hook.ID || job.Website != site.ID {
		t.Errorf("queued test %s (%v)", bodies[0], err)
	}

	e.deleted(t, base+"/"+hook.ID)
	e.do("GET", base+"/"+hook.ID, apitest.AdminKey, nil).Want(t, 404)

	// Hosts and ports that are valid: a port, an IP address, an internationalized name.
	for _, u := range []string{"https://hooks.example.com:8443/in", "https://203.0.113.5/in", "https://[2001:db8::1]:443/in", "https://bücher.example/in"} {
		e.do("POST", base, apitest.AdminKey, map[string]any{"name": "ok", "kind": "webhook", "url": u}).Want(t, 201)
	}
}

// TestEventsList: the activity feed lists a website's events newest first, filtered by type
// and day, in windows; unknown types are 400; another account gets 404.
func TestEventsList(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("example.com")
	w := e.storedWebsite(site.ID)
	rec := event.NewRecorder(e.store, notify.NewQueue(e.notify), awstest.Log(t))
	day := time.Now().UTC()
	for i, status := range []string{"exceeded", "ok", "at-risk"} {
		key := store.BudgetState("b" + string(rune('0'+i%2)))
		err := rec.Observe(ctx, w, key, func(st model.State) event.Decision {
			return event.Decision{Value: status, Event: &model.Event{Type: event.BudgetStatusChanged, Budget: "b", Summary: status, Occurred: day.Add(time.Duration(i) * time.Second)}}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Budget states need their budget: none exists, so nothing was recorded.
	if evs := apitest.List[map[string]any](t, e.do("GET", "/"+site.ID+"/events", apitest.ViewerKey, nil).Want(t, 200)); len(evs) != 0 {
		t.Fatalf("%d events for budgets that do not exist", len(evs))
	}
	var b struct{ ID string }
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, map[string]any{"metric": "lcp", "operator": "lt", "value": 2500, "device": "all"}).Want(t, 201).Decode(t, &b)
	for i, status := range []string{"exceeded", "ok", "at-risk"} {
		err := rec.Observe(ctx, w, store.BudgetState(b.ID), func(st model.State) event.Decision {
			return event.Decision{Value: status, Event: &model.Event{Type: event.BudgetStatusChanged, Budget: b.ID, Summary: status, Occurred: day.Add(time.Duration(i) * time.Second)}}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	type eventOut struct {
		ID, Type, Before, After, Summary string
		Links                            struct{ Subject string }
	}
	evs := apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events", apitest.ViewerKey, nil).Want(t, 200))
	if len(evs) != 3 || evs[0].After != "at-risk" || evs[0].Before != "ok" || evs[2].Before != "" || evs[2].After != "exceeded" {
		t.Fatalf("events %+v", evs)
	}
	if !strings.HasSuffix(evs[0].Links.Subject, "/"+site.ID+"/budgets") {
		t.Errorf("link %q", evs[0].Links.Subject)
	}
	first := apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events?limit=2", apitest.ViewerKey, nil).Want(t, 200))
	var page struct {
		Result struct{ Cursor string } `json:"result"`
	}
	e.do("GET", "/"+site.ID+"/events?limit=2", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page)
	rest := apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events?limit=2&cursor="+page.Result.Cursor, apitest.ViewerKey, nil).Want(t, 200))
	if len(first) != 2 || len(rest) != 1 || rest[0].ID != evs[2].ID {
		t.Errorf("windows %d + %d, want 2 + 1 ending with the oldest", len(first), len(rest))
	}
	today := day.Format("20060102")
	if n := len(apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events?type=budget.status_changed&date="+today+"-"+today, apitest.ViewerKey, nil).Want(t, 200))); n != 3 {
		t.Errorf("%d events of today's budget changes, want 3", n)
	}
	if n := len(apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events?type=audit.failing", apitest.ViewerKey, nil).Want(t, 200))); n != 0 {
		t.Errorf("%d audit.failing events, want 0", n)
	}
	if n := len(apitest.List[eventOut](t, e.do("GET", "/"+site.ID+"/events?date=20200101-20200102", apitest.ViewerKey, nil).Want(t, 200))); n != 0 {
		t.Errorf("%d events in 2020, want 0", n)
	}
	e.do("GET", "/"+site.ID+"/events?type=nope", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "type")
	e.do("GET", "/"+site.ID+"/events?date=2020", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "date")
	e.do("GET", "/"+site.ID+"/events", apitest.OtherKey, nil).Want(t, 404)

	// Each change was queued once for delivery.
	if got := awstest.Receive(t, e.notify, 3); len(got) != 3 {
		t.Errorf("%d notifications queued, want 3", len(got))
	}
}

// TestEmailRecipientsSealed: an email channel's recipients are sealed at rest like the other
// channels' targets: the table holds no address in the clear, every key reads them masked, and
// the notifier opens them whole. A channel stored before (its recipients in the clear beside
// the sealed target) reads back masked, and is masked at rest once read.
func TestEmailRecipientsSealed(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("example.com")
	base := "/" + site.ID + "/channels"
	w := e.storedWebsite(site.ID)
	stored := func(id string) string {
		t.Helper()
		item := awstest.TableOf(t, e.clients, e.store).Get(awstest.WebsitePK("acme", site.ID), "CHANNEL#"+id)
		if item == nil {
			t.Fatalf("channel %s is not stored", id)
		}
		return fmt.Sprint(item)
	}
	opened := func(id string) string {
		t.Helper()
		c, err := e.store.Channel(ctx, w, id)
		if err != nil {
			t.Fatal(err)
		}
		target, err := channel.Open(ctx, credentialsKey, w, c)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(target.Recipients, ",")
	}

	var mail channelOut
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Mail", "kind": "email", "recipients": []string{"perf@example.com", "o@ops.example.org"}}).
		Want(t, 201).Decode(t, &mail)
	if mail.Recipients != "p***@example.com, o***@ops.example.org" {
		t.Errorf("created: recipients %q, want them masked", mail.Recipients)
	}
	for _, key := range []string{apitest.ViewerKey, apitest.AdminKey} {
		var got channelOut
		e.do("GET", base+"/"+mail.ID, key, nil).Want(t, 200).Decode(t, &got)
		if got.Recipients != mail.Recipients {
			t.Errorf("read: recipients %q, want %q", got.Recipients, mail.Recipients)
		}
	}
	if item := stored(mail.ID); strings.Contains(item, "perf@") || strings.Contains(item, "o@ops") {
		t.Errorf("a recipient is stored in the clear: %s", item)
	}
	if got := opened(mail.ID); got != "perf@example.com,o@ops.example.org" {
		t.Errorf("opened recipients %q", got)
	}
	var changed channelOut
	e.do("PUT", base+"/"+mail.ID, apitest.AdminKey, map[string]any{"recipients": []string{"team@example.net"}}).Want(t, 200).Decode(t, &changed)
	if changed.Recipients != "t***@example.net" || strings.Contains(stored(mail.ID), "team@") || opened(mail.ID) != "team@example.net" {
		t.Errorf("changed: recipients %q, opened %q", changed.Recipients, opened(mail.ID))
	}
	// What the API shows, sent back, would replace the addresses: refused.
	e.do("PUT", base+"/"+mail.ID, apitest.AdminKey, map[string]any{"recipients": []string{"t***@example.net"}}).Want(t, 422).Problem(t, "recipients")
	if opened(mail.ID) != "team@example.net" {
		t.Error("a refused change changed the recipients")
	}

	// A channel stored before recipients were masked: the sealed target, and the recipients
	// in the clear beside it.
	old := model.Channel{ID: model.NewChannelID(), Name: "Old", Kind: channel.Email}
	if err := channel.Seal(ctx, credentialsKey, w, &old, channel.Target{Recipients: []string{"lead@example.com", "cto@example.com"}}); err != nil {
		t.Fatal(err)
	}
	old.Shown = "lead@example.com, cto@example.com"
	if err := e.store.CreateChannel(ctx, w, &old); err != nil {
		t.Fatal(err)
	}
	list := apitest.List[channelOut](t, e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200))
	if len(list) != 2 || list[1].ID != old.ID || list[1].Recipients != "l***@example.com, c***@example.com" {
		t.Fatalf("list %+v: the old channel should read back masked", list)
	}
	var got channelOut
	e.do("GET", base+"/"+old.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	if got.Recipients != "l***@example.com, c***@example.com" || got.Name != "Old" {
		t.Errorf("old channel read %+v", got)
	}
	if item := stored(old.ID); strings.Contains(item, "lead@") || strings.Contains(item, "cto@") {
		t.Errorf("the old channel still holds recipients in the clear once read: %s", item)
	}
	if got := opened(old.ID); got != "lead@example.com,cto@example.com" {
		t.Errorf("old channel opened %q", got)
	}
}
