package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// TestSeriesCountsEachTestOnce: a test starts and ends once however often its audit message
// is delivered, its series' status follows its tests, series list newest first with a cursor,
// a test is pending until it ends, and a website's purge takes them all, pending markers too.
func TestSeriesCountsEachTestOnce(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	newSeries := func(at time.Time, devices ...string) (model.TestSeries, []model.SeriesTest) {
		t.Helper()
		s := model.TestSeries{ID: model.NewSeriesID(at), Description: "v1.2.3", Initiator: "CLI", Created: at}
		var tests []model.SeriesTest
		for i, d := range devices {
			tests = append(tests, model.SeriesTest{ID: model.SeriesTestID(s.ID, i), Series: s.ID, Page: "p1", URL: "/", Alias: "Home", Device: d, Status: model.RunQueued})
		}
		if err := st.CreateTestSeries(ctx, w, s, tests); err != nil {
			t.Fatal(err)
		}
		return s, tests
	}
	status := func(id string) model.TestSeries {
		t.Helper()
		s, err := st.TestSeries(ctx, w, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now().UTC()
	older, _ := newSeries(now.Add(-time.Hour), "mobile")
	s, tests := newSeries(now, "desktop", "mobile")
	if got := status(s.ID); got.Status() != model.RunQueued || got.Count != 2 {
		t.Fatalf("new series: %s, count %d", got.Status(), got.Count)
	}

	for range 2 { // the second start is a redelivered message
		got, err := st.StartSeriesTest(ctx, w, tests[0].ID, time.Time{})
		if err != nil || got.Status != model.RunTesting || got.Device != "desktop" || got.Started == nil {
			t.Fatalf("start: %+v, %v", got, err)
		}
	}
	if got := status(s.ID); got.Status() != model.RunTesting || got.Started != 1 {
		t.Fatalf("one test started twice: %s, started %d", got.Status(), got.Started)
	}
	done := tests[0]
	done.Status, done.Metrics, done.ReportKey = model.RunCompleted, map[string]float64{"lcp": 1200}, "k"
	for i, want := range []bool{true, false} {
		if ended, err := st.FinishSeriesTest(ctx, w, done); err != nil || ended != want {
			t.Fatalf("finish %d: %v, %v; want %v", i, ended, err, want)
		}
	}
	// A late failure of the ended test (an old delivery) changes nothing.
	late := tests[0]
	late.Status, late.Error = model.RunFailed, "timeout"
	if ended, err := st.FinishSeriesTest(ctx, w, late); err != nil || ended {
		t.Fatalf("failing an ended test: %v, %v", ended, err)
	}
	if got, err := st.StartSeriesTest(ctx, w, tests[0].ID, time.Time{}); err != nil || got.Status != model.RunCompleted || got.Metrics["lcp"] != 1200 || got.Alias != "Home" {
		t.Fatalf("an ended test started again: %+v, %v", got, err)
	}
	failed := tests[1]
	failed.Status, failed.Error = model.RunFailed, "connection refused"
	if ended, err := st.FinishSeriesTest(ctx, w, failed); err != nil || !ended {
		t.Fatalf("fail a queued test: %v, %v", ended, err)
	}
	if got := status(s.ID); got.Status() != model.RunFailed || got.Finished != 2 || got.Failed != 1 {
		t.Fatalf("series: %s, finished %d, failed %d", got.Status(), got.Finished, got.Failed)
	}
	all, err := st.SeriesTests(ctx, w, s.ID)
	if err != nil || len(all) != 2 || all[0].Status != model.RunCompleted || all[1].Error != "connection refused" || all[1].URL != "/" {
		t.Fatalf("tests: %+v, %v", all, err)
	}

	list, more, err := st.TestSeriesList(ctx, w, "", 1)
	if err != nil || len(list) != 1 || !more || list[0].ID != s.ID {
		t.Fatalf("first window: %+v, %v, %v", list, more, err)
	}
	list, more, err = st.TestSeriesList(ctx, w, list[0].ID, 1)
	if err != nil || len(list) != 1 || more || list[0].ID != older.ID {
		t.Fatalf("second window: %+v, %v, %v", list, more, err)
	}
	for _, id := range []string{"tt_x", "tt__1", "ts_1", "tt_" + s.ID[3:] + "_01", "tt_" + s.ID[3:] + "_9"} {
		if _, err := st.SeriesTest(ctx, w, id); !model.IsNotFound(err) {
			t.Errorf("test %q: %v, want not found", id, err)
		}
	}

	// The older series' test never ended: it alone is pending, until the website's purge.
	if pending, err := st.PendingSeriesTests(ctx); err != nil || len(pending) != 1 || pending[0].Test != model.SeriesTestID(older.ID, 0) {
		t.Fatalf("pending tests %+v (%v), want the older series' only", pending, err)
	}
	if _, err := st.DeleteWebsite(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PurgeItems(ctx, model.PurgeJob{Account: w.Account, Website: w.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := st.CountItems(ctx, model.PurgeJob{Account: w.Account, Website: w.ID}); err != nil || n != 0 {
		t.Fatalf("%d items left after the website's purge (%v)", n, err)
	}
	if pending, err := st.PendingSeriesTests(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("pending tests after the website's purge: %+v (%v)", pending, err)
	}
}
