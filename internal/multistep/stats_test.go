package multistep

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

var statsNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func statsRun(hoursAgo int, status string, inp float64) model.Run {
	r := model.Run{Created: statsNow.Add(-time.Duration(hoursAgo) * time.Hour), Status: status}
	if status == model.RunCompleted {
		d, tbt, cls := 4000.0, 100.0, 0.1
		r.INP, r.Duration, r.TBT, r.CLS = &inp, &d, &tbt, &cls
	}
	return r
}

func TestStates(t *testing.T) {
	const c, f = model.RunCompleted, model.RunFailed
	for _, tc := range []struct {
		name string
		runs []model.Run
		want string
	}{
		{"no runs", nil, StateOff},
		{"only queued and testing", []model.Run{statsRun(1, model.RunQueued, 0), statsRun(2, model.RunTesting, 0)}, StateOff},
		{"only older than 14 days", []model.Run{statsRun(24*15, c, 100)}, StateOff},
		{"all completed", []model.Run{statsRun(1, c, 100), statsRun(30, c, 100), statsRun(24*13, c, 100)}, StateUp},
		{"only run failed", []model.Run{statsRun(3, f, 0)}, StateDown},
		{"last two failed", []model.Run{statsRun(1, f, 0), statsRun(2, f, 0), statsRun(3, c, 100)}, StateDown},
		{"last failed, one before completed", []model.Run{statsRun(1, f, 0), statsRun(2, c, 100)}, StateFlaky},
		{"an old failure, last completed", []model.Run{statsRun(1, c, 100), statsRun(2, f, 0), statsRun(3, f, 0)}, StateFlaky},
		{"pending runs do not count", []model.Run{statsRun(0, model.RunQueued, 0), statsRun(1, f, 0), statsRun(2, f, 0)}, StateDown},
		{"failure older than 14 days does not count", []model.Run{statsRun(1, c, 100), statsRun(24*15, f, 0)}, StateUp},
		{"a run from the future does not count", []model.Run{statsRun(-2, f, 0), statsRun(1, c, 100)}, StateUp},
	} {
		if got := Summarize(tc.runs, statsNow).State; got != tc.want {
			t.Errorf("%s: state %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestAveragesAndRates(t *testing.T) {
	runs := []model.Run{
		statsRun(1, model.RunCompleted, 200),  // 2026-11-22
		statsRun(2, model.RunFailed, 0),       // 2026-11-22
		statsRun(3, model.RunCompleted, 400),  // 2026-11-22
		statsRun(25, model.RunCompleted, 300), // 2026-11-21
		statsRun(24*20, model.RunCompleted, 9999),
		statsRun(0, model.RunQueued, 0),
	}
	st := Summarize(runs, statsNow)
	if st.INP == nil || *st.INP != 300 || *st.Duration != 4000 || math.Abs(*st.CLS-0.1) > 1e-9 {
		t.Errorf("averages inp %v duration %v cls %v, want 300, 4000, 0.1 over the completed runs of 14 days", deref(st.INP), deref(st.Duration), deref(st.CLS))
	}
	want := []DayRate{{"2026-11-21", 100}, {"2026-11-22", 67}}
	if len(st.SuccessRates) != 2 || st.SuccessRates[0] != want[0] || st.SuccessRates[1] != want[1] {
		t.Errorf("success rates %+v, want %+v", st.SuccessRates, want)
	}
	if st.SuccessRate == nil || *st.SuccessRate != 75 || st.State != StateFlaky {
		t.Errorf("success rate %v, state %s; want 75 and flaky", deref(st.SuccessRate), st.State)
	}
	if st := Summarize([]model.Run{statsRun(1, model.RunFailed, 0)}, statsNow); st.INP != nil || *st.SuccessRate != 0 {
		t.Errorf("only a failure: inp %v, success rate %v", deref(st.INP), deref(st.SuccessRate))
	}
	if st := Summarize(nil, statsNow); st.SuccessRates == nil || len(st.SuccessRates) != 0 || st.SuccessRate != nil || st.INP != nil {
		t.Errorf("no runs: %+v, want empty rates and no averages", st)
	}
}

// fakeRuns is a website's tests and runs in memory.
type fakeRuns struct {
	tests []model.Test
	runs  map[string][]model.Run
	since []time.Time // the since of each Runs call
	err   error
}

func (f *fakeRuns) Tests(context.Context, model.Website) ([]model.Test, error) { return f.tests, nil }

func (f *fakeRuns) Runs(_ context.Context, _ model.Website, test string, since time.Time, _ int) ([]model.Run, error) {
	f.since = append(f.since, since)
	return f.runs[test], f.err
}

func TestTestsWithStats(t *testing.T) {
	f := &fakeRuns{
		tests: []model.Test{{ID: "a", Alias: "A"}, {ID: "b", Alias: "B"}},
		runs: map[string][]model.Run{
			"a": {statsRun(1, model.RunCompleted, 100)},
			"b": {statsRun(1, model.RunFailed, 0)},
		},
	}
	got, err := TestsWithStats(context.Background(), f, model.Website{}, statsNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Test.ID != "a" || got[0].State != StateUp || got[1].Test.Alias != "B" || got[1].State != StateDown {
		t.Errorf("tests with stats %+v", got)
	}
	for _, since := range f.since {
		if !since.Equal(statsNow.Add(-StatsWindow)) {
			t.Errorf("runs read since %v, want the window's start", since)
		}
	}
	f.err = errors.New("throttled")
	if _, err := TestsWithStats(context.Background(), f, model.Website{}, statsNow); !errors.Is(err, f.err) {
		t.Errorf("a failed read: %v", err)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
