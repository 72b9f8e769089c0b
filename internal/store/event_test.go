package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// TestChangeState: a change and its event are written together, once: a second writer from
// the same reading gets ErrChanged and writes no event; the event's ID depends on the state
// and its version only; a state whose budget, page or test is gone takes nothing.
func TestChangeState(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	b := addBudget(t, st, w)
	key := store.BudgetState(b.ID)
	from, err := st.WatchedState(ctx, w, key)
	if err != nil || from.Version != 0 || from.Value != "" {
		t.Fatalf("a state never recorded: %+v, %v", from, err)
	}
	ev := &model.Event{Type: "budget.status_changed", Budget: b.ID}
	to, err := st.ChangeState(ctx, w, from, "exceeded", "", ev)
	if err != nil || to.Version != 1 || to.Unsent != store.EventKey(*ev) || ev.ID != model.EventID(w, key, 1) {
		t.Fatalf("change: %+v, %v (event %+v)", to, err, ev)
	}
	// The same change again, from the same reading: refused, no second event.
	if _, err := st.ChangeState(ctx, w, from, "exceeded", "", &model.Event{Type: "budget.status_changed"}); !errors.Is(err, model.ErrChanged) {
		t.Errorf("a second change from the same reading: %v, want ErrChanged", err)
	}
	evs, _, err := st.Events(ctx, w, model.EventFilter{}, "", 0)
	if err != nil || len(evs) != 1 || evs[0].ID != ev.ID || evs[0].After != "exceeded" || evs[0].Version != 1 {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if err := st.MarkEventQueued(ctx, w, to); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.WatchedState(ctx, w, key); got.Unsent != "" || got.Value != "exceeded" {
		t.Errorf("after queuing: %+v", got)
	}

	// Gone owners take nothing.
	if err := st.DeleteBudget(ctx, w, b.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.WatchedState(ctx, w, key); got.Version != 0 {
		t.Errorf("a deleted budget's state is left: %+v", got)
	}
	if _, err := st.ChangeState(ctx, w, model.State{Key: key}, "ok", "", &model.Event{Type: "budget.status_changed"}); !model.IsNotFound(err) {
		t.Errorf("a deleted budget's state: %v, want not found", err)
	}
	if _, err := st.ChangeState(ctx, w, model.State{Key: store.PageState("nopage", "ux#mobile")}, "passed", "", nil); !model.IsNotFound(err) {
		t.Errorf("a missing page's state: %v, want not found", err)
	}
	if n, _, _ := st.Events(ctx, w, model.EventFilter{}, "", 0); len(n) != 1 {
		t.Errorf("%d events, want still 1", len(n))
	}
}

// TestEventExpiresPerWebsite: an event's TTL is its time plus its website's retention of
// events, read when it is written: the default (90 days) until the website sets fewer, then
// those days; an event written before keeps its TTL (the retention pass removes it).
func TestEventExpiresPerWebsite(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	b := addBudget(t, st, w)
	key := store.BudgetState(b.ID)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	change := func(value string) model.Event {
		t.Helper()
		from, err := st.WatchedState(ctx, w, key)
		if err != nil {
			t.Fatal(err)
		}
		ev := &model.Event{Type: "budget.status_changed", Budget: b.ID, Occurred: at}
		if _, err := st.ChangeState(ctx, w, from, value, "", ev); err != nil {
			t.Fatal(err)
		}
		return *ev
	}
	expires := func(ev model.Event) int64 {
		t.Helper()
		for _, it := range itemsOf(t, clients, st, w) {
			if strings.HasPrefix(it.sk, "EV#") && strings.Contains(it.sk, ev.ID) {
				return it.expires
			}
		}
		t.Fatalf("no item of event %s", ev.ID)
		return 0
	}
	before := change("exceeded")
	if got, want := expires(before), at.Add(90*24*time.Hour).Unix(); got != want {
		t.Errorf("at the default: expires %d, want %d (90 days)", got, want)
	}
	if err := st.PutDataSettings(ctx, w, false, model.Retention{Events: 7}); err != nil {
		t.Fatal(err)
	}
	after := change("ok")
	if got, want := expires(after), at.Add(7*24*time.Hour).Unix(); got != want {
		t.Errorf("kept 7 days: expires %d, want %d", got, want)
	}
	if got, want := expires(before), at.Add(90*24*time.Hour).Unix(); got != want {
		t.Errorf("the event written before: expires %d, want %d", got, want)
	}
}
