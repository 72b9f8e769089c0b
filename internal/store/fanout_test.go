package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// TestFanoutClaims: one attempt at a time holds a claim, however many try at once; a live
// lease keeps it, a passed one lets the next attempt take it over; only the attempt holding it
// can finish it, and a finished claim is never held again. The first attempt fixes a
// website's shards for the day.
func TestFanoutClaims(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	k := store.WebsiteFanoutKey(ref, "20261125", "audits", "")
	now := time.Now().UTC()

	// Eight at once: exactly one holds it.
	var mu sync.Mutex
	var holders []model.FanoutClaim
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, held, err := st.ClaimFanout(ctx, k, now, now.Add(time.Minute), 3+i)
			if err != nil {
				t.Error(err)
				return
			}
			if held {
				mu.Lock()
				holders = append(holders, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(holders) != 1 || holders[0].Attempt != 1 || holders[0].Shards < 3 {
		t.Fatalf("holders %+v, want one, attempt 1, with its shards", holders)
	}
	first := holders[0]

	// Its lease is live: nobody else gets it.
	c, held, err := st.ClaimFanout(ctx, k, now.Add(59*time.Second), now.Add(2*time.Minute), 9)
	if err != nil || held || c.Done || c.Attempt != 1 {
		t.Fatalf("claim under a live lease: %+v held %v (%v)", c, held, err)
	}
	// The lease passed (the worker stopped half-way): the next attempt takes over, the day's
	// shards and the first start stay.
	later := now.Add(61 * time.Second)
	c, held, err = st.ClaimFanout(ctx, k, later, later.Add(time.Minute), 9)
	if err != nil || !held || c.Attempt != 2 || c.Shards != first.Shards || !c.Started.Equal(first.Started) {
		t.Fatalf("takeover: %+v held %v (%v), want attempt 2 with shards %d, started %v", c, held, err, first.Shards, first.Started)
	}
	// The stopped attempt cannot finish it any more.
	if err := st.FinishFanout(ctx, k, 1, model.FanoutDone{Queued: now, Count: 4}); !errors.Is(err, store.ErrSuperseded) {
		t.Errorf("finish by the superseded attempt: %v, want ErrSuperseded", err)
	}
	done := model.FanoutDone{Queued: later, Count: 4, Items: []string{"p1", "p2"}}
	if err := st.FinishFanout(ctx, k, 2, done); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishFanout(ctx, k, 2, done); !errors.Is(err, store.ErrSuperseded) {
		t.Errorf("finishing twice: %v, want ErrSuperseded", err)
	}
	// Done for good: even long after the lease, nothing holds it again.
	c, held, err = st.ClaimFanout(ctx, k, later.Add(time.Hour), later.Add(2*time.Hour), 9)
	if err != nil || held || !c.Done || c.Count != 4 || !slices.Equal(c.Items, done.Items) || !c.Queued.Equal(later) {
		t.Fatalf("claim of a done claim: %+v held %v (%v)", c, held, err)
	}
	if got, err := st.FanoutClaim(ctx, k); err != nil || got.Attempt != 2 || !got.Done {
		t.Errorf("read back %+v (%v)", got, err)
	}
	if _, err := st.FanoutClaim(ctx, store.WebsiteFanoutKey(ref, "20261125", "audits", "0001")); !model.IsNotFound(err) {
		t.Errorf("a claim never made: %v, want not found", err)
	}

	// A listing claim records the cursor of the next page.
	lk := store.ListingFanoutKey("20261125", "audits", 0)
	if _, held, err := st.ClaimFanout(ctx, lk, now, now.Add(time.Minute), 0); err != nil || !held {
		t.Fatalf("listing claim: %v %v", held, err)
	}
	if err := st.FinishFanout(ctx, lk, 1, model.FanoutDone{Queued: now, Count: 1000, Next: "acme#w1"}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FanoutClaim(ctx, lk); err != nil || got.Next != "acme#w1" || got.Count != 1000 || got.Shards != 0 {
		t.Errorf("listing claim read back %+v (%v)", got, err)
	}
}

// TestWebsitesAfter walks every website of every account a page at a time, each once.
func TestWebsitesAfter(t *testing.T) {
	ctx := context.Background()
	_, st, first := newWebsite(t)
	want := []string{first.ID}
	for i, account := range []string{"acme", "zeta", "beta", "acme", "zeta", "acme", "beta"} {
		w := model.Website{Account: account, Domain: "site" + string(rune('a'+i)) + ".example"}
		if err := st.CreateWebsite(ctx, &w); err != nil {
			t.Fatal(err)
		}
		want = append(want, w.ID)
	}
	for _, limit := range []int{1, 3, 8, 20} {
		var got []string
		after, pages := "", 0
		for {
			refs, next, err := st.WebsitesAfter(ctx, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(refs) > limit || (next != "" && len(refs) != limit) {
				t.Fatalf("limit %d: page of %d, next %q", limit, len(refs), next)
			}
			for _, r := range refs {
				got = append(got, r.Website)
			}
			pages++
			if next == "" {
				break
			}
			after = next
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: %d websites %v in %d pages, want %v", limit, len(got), got, pages, want)
		}
		if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
}
