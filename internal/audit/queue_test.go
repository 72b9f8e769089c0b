package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// newQueue makes a test's env and the audits queued on a queue of its own.
func newQueue(t *testing.T) (*awstest.Env, *queue.Queue, *audit.Queue) {
	t.Helper()
	e := awstest.NewEnv(t)
	q := e.Queue(awstest.QueueSettings)
	return e, q, audit.NewQueue(e.Store, q, e.Log)
}

// TestDailyWebsiteQueuesEachShardOnce: a website's daily audits are queued in shards of its
// pages, every page on both devices once, each message naming its shard and attempt; running
// it again the same day queues nothing, and a page stays in its shard (one added since goes
// with its done shard: it is audited from the next day). The next day queues everything again.
func TestDailyWebsiteQueuesEachShardOnce(t *testing.T) {
	ctx := context.Background()
	e, q, s := newQueue(t)
	add := make([]model.Page, 230)
	for i := range add {
		add[i] = model.Page{URL: fmt.Sprintf("/p%03d", i)}
	}
	w, pages := e.Website(awstest.Acme("example.com"), add...)
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	run := func(day string) int {
		t.Helper()
		lease := time.Now().Add(time.Minute)
		c, _, err := e.Store.ClaimFanout(ctx, store.WebsiteFanoutKey(ref, day, "audits", ""), time.Now(), lease, audit.Shards(len(pages)))
		if err != nil || c.Shards != 3 {
			t.Fatalf("claim of the website's share: %+v (%v), want 3 shards", c, err)
		}
		n, err := s.DailyWebsite(ctx, w, pages, day, c, lease)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := run("20261122"); n != 460 {
		t.Fatalf("first run queued %d, want 460", n)
	}
	got := awstest.Receive(t, q, 460)
	seen := map[string]audit.Job{}
	perShard := map[string]int{}
	for _, body := range got {
		var j audit.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		if j.Day != "20261122" || j.Attempt != 1 || j.Shard == "" || j.Queued.IsZero() {
			t.Errorf("message %+v: want the day, attempt 1, its shard and its time", j)
		}
		if prev, dup := seen[j.Page+" "+j.Device]; dup {
			t.Errorf("page %s on %s queued twice (shards %s and %s)", j.Page, j.Device, prev.Shard, j.Shard)
		}
		seen[j.Page+" "+j.Device] = j
		perShard[j.Shard]++
	}
	if len(seen) != 460 || len(perShard) != 3 {
		t.Errorf("%d page and device pairs in %d shards %v, want 460 in 3", len(seen), len(perShard), perShard)
	}
	for shard, n := range perShard {
		if n < 100 || n > 220 {
			t.Errorf("shard %s holds %d audits: the pages' hash spreads them badly", shard, n)
		}
	}

	// Again the same day, with a page added: nothing.
	if err := e.Store.CreatePages(ctx, w, []model.Page{{URL: "/new"}}); err != nil {
		t.Fatal(err)
	}
	pages, err := e.Store.Pages(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if n := run("20261122"); n != 0 {
		t.Errorf("second run the same day queued %d, want 0", n)
	}
	// What the day's shards queued is read back from their claims.
	c, err := e.Store.FanoutClaim(ctx, store.WebsiteFanoutKey(ref, "20261122", "audits", ""))
	if err != nil {
		t.Fatal(err)
	}
	fanned, err := audit.Fanned(ctx, e.Store, w, "20261122", c, time.Time{})
	if err != nil || len(fanned) != 460 {
		t.Errorf("the claims name %d audits (%v), want 460", len(fanned), err)
	}
	if n := run("20261123"); n != 462 {
		t.Errorf("next day queued %d, want 462", n)
	}
}

// TestSuperseded: once a later attempt took a shard over, the stopped attempt's messages are
// dropped; the later attempt's are dropped only for a page and device whose day's audit ran,
// or failed for good, since the shard was first claimed. Other audits are never dropped.
func TestSuperseded(t *testing.T) {
	ctx := context.Background()
	e := awstest.NewEnv(t)
	w, pages := e.Website(awstest.Acme("example.com"), model.Page{URL: "/a"}, model.Page{URL: "/b"}, model.Page{URL: "/c"})
	k := store.WebsiteFanoutKey(model.SiteRef{Account: w.Account, Website: w.ID}, "20261122", "audits", "0000")
	job := func(p model.Page, attempt int) audit.Job {
		return audit.Job{Account: w.Account, Website: w.ID, Page: p.ID, Device: "mobile", Day: "20261122", Shard: "0000", Attempt: attempt}
	}
	dropped := func(j audit.Job) bool {
		t.Helper()
		why, err := audit.Superseded(ctx, e.Store, w, j)
		if err != nil {
			t.Fatal(err)
		}
		return why != ""
	}
	now := time.Now().UTC()
	if _, held, err := e.Store.ClaimFanout(ctx, k, now, now.Add(time.Second), 0); err != nil || !held {
		t.Fatal(held, err)
	}
	if dropped(job(pages[0], 1)) {
		t.Error("the first attempt's message, not taken over, was dropped")
	}
	// The first attempt's copy of page a runs before the takeover.
	if err := e.Store.PutLabResult(ctx, w, pages[0], model.LabResult{Device: "mobile", Day: "20261122", Audited: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	// Page b failed for good, page c not at all.
	if err := e.Store.PutLabError(ctx, w, pages[1], "mobile", model.LabError{Message: "refused", At: now.Add(time.Second), Final: true}); err != nil {
		t.Fatal(err)
	}
	takeover := now.Add(2 * time.Second)
	if _, held, err := e.Store.ClaimFanout(ctx, k, takeover, takeover.Add(time.Minute), 0); err != nil || !held {
		t.Fatal(held, err)
	}
	for _, p := range pages {
		if !dropped(job(p, 1)) {
			t.Errorf("page %s: the stopped attempt's message was not dropped after the takeover", p.URL)
		}
	}
	for i, want := range []bool{true, true, false} {
		if got := dropped(job(pages[i], 2)); got != want {
			t.Errorf("page %s: the later attempt's message dropped %v, want %v", pages[i].URL, got, want)
		}
	}
	for _, j := range []audit.Job{
		{Account: w.Account, Website: w.ID, Page: pages[0].ID, Device: "mobile"},                                             // on demand
		{Account: w.Account, Website: w.ID, Page: pages[0].ID, Device: "mobile", Day: "20261122", Shard: "0001", Attempt: 1}, // a shard never claimed
	} {
		if dropped(j) {
			t.Errorf("%+v was dropped", j)
		}
	}
}
