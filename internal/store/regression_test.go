package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// TestRegressionsPurgedWithTheirPage: a page's purge takes its regressions (website items,
// listed together) and leaves the other page's and a test's; a regression of a deleted website
// is not written.
func TestRegressionsPurgedWithTheirPage(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	pages := []model.Page{{URL: "/"}, {URL: "/shop"}}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	put := func(r model.Regression) model.Regression {
		t.Helper()
		r.ID = model.RegressionID(w, r.Page+r.Test+r.Metric, r.FirstBad)
		r.Kind, r.Status, r.Detected = model.KindRegression, model.RegressionOpen, time.Now()
		if created, err := st.PutRegression(ctx, w, r); err != nil || !created {
			t.Fatalf("put %+v: %v %v", r, created, err)
		}
		return r
	}
	gone := put(model.Regression{Source: "lab", Page: pages[0].ID, Device: "mobile", Metric: "lcp", FirstBad: "20261110"})
	put(model.Regression{Source: "ux", Page: pages[0].ID, Device: "mobile", Metric: "cls", FirstBad: "20261111"})
	kept := put(model.Regression{Source: "lab", Page: pages[1].ID, Device: "mobile", Metric: "lcp", FirstBad: "20261110"})
	test := put(model.Regression{Source: "multistep", Test: "t1", Metric: "duration", FirstBad: "20261112"})

	job, err := st.DeletePage(ctx, w, pages[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PurgeItems(ctx, job); err != nil {
		t.Fatal(err)
	}
	left, _, err := st.Regressions(ctx, w, model.RegressionFilter{}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].ID != test.ID || left[1].ID != kept.ID {
		t.Fatalf("after the page's purge: %+v, want the other page's and the test's", left)
	}
	if _, err := st.Regression(ctx, w, gone.ID); !model.IsNotFound(err) {
		t.Fatalf("the purged page's regression: %v", err)
	}
	if _, err := st.PurgeItems(ctx, model.PurgeJob{Account: w.Account, Website: w.ID, Test: "t1"}); err != nil {
		t.Fatal(err)
	}
	if left, _, _ := st.Regressions(ctx, w, model.RegressionFilter{}, "", 0); len(left) != 1 || left[0].ID != kept.ID {
		t.Fatalf("after the test's purge: %+v", left)
	}

	if _, err := st.DeleteWebsite(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutRegression(ctx, w, model.Regression{ID: "rg_x", Page: pages[1].ID}); !model.IsNotFound(err) {
		t.Fatalf("a regression of a deleted website: %v, want ErrNotFound", err)
	}
}
