package audit_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
)

// scheduledEvent is an EventBridge scheduled event as the daily rule delivers it.
const scheduledEvent = `{
  "version": "0",
  "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
  "detail-type": "Scheduled Event",
  "source": "aws.events",
  "account": "123456789012",
  "time": "2026-11-22T03:00:00Z",
  "region": "us-east-1",
  "resources": ["arn:aws:events:us-east-1:123456789012:rule/openvitals-daily"],
  "detail": {}
}`

func TestDailyScheduleQueuesEachPageOncePerDay(t *testing.T) {
	ctx := context.Background()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	q := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3})
	s := audit.NewQueue(st, q, awstest.Log(t))

	var sites []model.Website
	for _, acct := range []string{"acme", "globex"} {
		if err := st.EnsureAccount(ctx, acct); err != nil {
			t.Fatal(err)
		}
		w := model.Website{Account: acct, Domain: "example.com", DisplayName: "example.com"}
		if err := st.CreateWebsite(ctx, &w); err != nil {
			t.Fatal(err)
		}
		pages := make([]model.Page, 6) // 12 audits a website: more than one batch of ten
		for i := range pages {
			pages[i] = model.Page{URL: "/p" + string(rune('a'+i)), Alias: "p"}
		}
		if err := st.CreatePages(ctx, w, pages); err != nil {
			t.Fatal(err)
		}
		sites = append(sites, w)
	}
	// A deleted website is not audited.
	gone := model.Website{Account: "acme", Domain: "gone.example", DisplayName: "gone"}
	if err := st.CreateWebsite(ctx, &gone); err != nil {
		t.Fatal(err)
	}
	if err := st.CreatePages(ctx, gone, []model.Page{{URL: "/", Alias: "/"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteWebsite(ctx, gone); err != nil {
		t.Fatal(err)
	}

	var ev events.CloudWatchEvent
	if err := json.Unmarshal([]byte(scheduledEvent), &ev); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Daily(ctx, ev.Time)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 24 || jobs[0].Day != "20261122" {
		t.Fatalf("first run: %+v, want 24 audits for 20261122", jobs)
	}
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Website == gone.ID {
			t.Errorf("queued an audit of a deleted website: %+v", j)
		}
		seen[j.Page+" "+j.Device] = true
	}
	if len(seen) != 24 {
		t.Errorf("%d distinct page and device pairs, want 24", len(seen))
	}
	if got := awstest.Receive(t, q, 24); len(got) != 24 {
		t.Errorf("%d messages on the queue, want 24", len(got))
	}

	// The same day again: nothing new. A page added since is queued alone.
	if jobs, err := s.Daily(ctx, ev.Time); err != nil || len(jobs) != 0 {
		t.Errorf("second run the same day queued %d (%v), want 0", len(jobs), err)
	}
	if err := st.CreatePages(ctx, sites[0], []model.Page{{URL: "/new", Alias: "new"}}); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.Daily(ctx, ev.Time); err != nil || len(jobs) != 2 {
		t.Errorf("run after adding a page queued %d (%v), want 2", len(jobs), err)
	}
	// The next day everything is audited again.
	ev.Time = ev.Time.Add(24 * time.Hour)
	if jobs, err := s.Daily(ctx, ev.Time); err != nil || len(jobs) != 26 {
		t.Errorf("next day queued %d (%v), want 26", len(jobs), err)
	}
}
