package multistep_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// TestDailyRunsOncePerDay shows the daily schedule queues one run per test per UTC day.
func TestDailyRunsOncePerDay(t *testing.T) {
	ctx := context.Background()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	q := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3})
	runs := multistep.NewQueue(st, q, awstest.Log(t))
	if err := st.EnsureAccount(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	w := store.Website{Account: "acme", Domain: "example.com", DisplayName: "example.com"}
	if err := st.CreateWebsite(ctx, &w); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"a", "b", "c"} {
		tt := store.Test{Alias: alias, Device: "mobile"}
		if err := st.CreateTest(ctx, w, &tt); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for i, want := range []int{3, 0} {
		if n, err := runs.Daily(ctx, day); err != nil || n != want {
			t.Errorf("run %d the same day queued %d (%v), want %d", i+1, n, err, want)
		}
	}
	if n, err := runs.Daily(ctx, day.Add(24*time.Hour)); err != nil || n != 3 {
		t.Errorf("next day queued %d (%v), want 3", n, err)
	}
	if got := awstest.Receive(t, q, 6); len(got) != 6 {
		t.Errorf("%d run messages, want 6", len(got))
	}
	tests, _ := st.Tests(ctx, w)
	for _, tt := range tests {
		rs, err := st.Runs(ctx, w, tt.ID, time.Time{}, 0)
		if err != nil || len(rs) != 2 || rs[0].Status != store.RunQueued {
			t.Errorf("test %s runs %+v (%v), want 2 queued", tt.Alias, rs, err)
		}
	}
}
