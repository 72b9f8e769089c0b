package runstats

import (
	"math"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/store"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func run(hoursAgo int, status string, inp float64) store.Run {
	r := store.Run{Created: now.Add(-time.Duration(hoursAgo) * time.Hour), Status: status}
	if status == store.RunCompleted {
		d, tbt, cls := 4000.0, 100.0, 0.1
		r.INP, r.Duration, r.TBT, r.CLS = &inp, &d, &tbt, &cls
	}
	return r
}

func TestStates(t *testing.T) {
	const c, f = store.RunCompleted, store.RunFailed
	for _, tc := range []struct {
		name string
		runs []store.Run
		want string
	}{
		{"no runs", nil, Off},
		{"only queued and testing", []store.Run{run(1, store.RunQueued, 0), run(2, store.RunTesting, 0)}, Off},
		{"only older than 14 days", []store.Run{run(24*15, c, 100)}, Off},
		{"all completed", []store.Run{run(1, c, 100), run(30, c, 100), run(24*13, c, 100)}, Up},
		{"only run failed", []store.Run{run(3, f, 0)}, Down},
		{"last two failed", []store.Run{run(1, f, 0), run(2, f, 0), run(3, c, 100)}, Down},
		{"last failed, one before completed", []store.Run{run(1, f, 0), run(2, c, 100)}, Flaky},
		{"an old failure, last completed", []store.Run{run(1, c, 100), run(2, f, 0), run(3, f, 0)}, Flaky},
		{"pending runs do not count", []store.Run{run(0, store.RunQueued, 0), run(1, f, 0), run(2, f, 0)}, Down},
		{"failure older than 14 days does not count", []store.Run{run(1, c, 100), run(24*15, f, 0)}, Up},
	} {
		if got := Summarize(tc.runs, now).State; got != tc.want {
			t.Errorf("%s: state %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestAveragesAndRates(t *testing.T) {
	runs := []store.Run{
		run(1, store.RunCompleted, 200),  // 2026-11-22
		run(2, store.RunFailed, 0),       // 2026-11-22
		run(3, store.RunCompleted, 400),  // 2026-11-22
		run(25, store.RunCompleted, 300), // 2026-11-21
		run(24*20, store.RunCompleted, 9999),
		run(0, store.RunQueued, 0),
	}
	st := Summarize(runs, now)
	if st.INP == nil || *st.INP != 300 || *st.Duration != 4000 || math.Abs(*st.CLS-0.1) > 1e-9 {
		t.Errorf("averages inp %v duration %v cls %v, want 300, 4000, 0.1 over the completed runs of 14 days", deref(st.INP), deref(st.Duration), deref(st.CLS))
	}
	want := []DayRate{{"2026-11-21", 100}, {"2026-11-22", 67}}
	if len(st.SuccessRates) != 2 || st.SuccessRates[0] != want[0] || st.SuccessRates[1] != want[1] {
		t.Errorf("success rates %+v, want %+v", st.SuccessRates, want)
	}
	if st.SuccessRate == nil || *st.SuccessRate != 75 || st.State != Flaky {
		t.Errorf("success rate %v, state %s; want 75 and flaky", deref2(st.SuccessRate), st.State)
	}
	if st := Summarize([]store.Run{run(1, store.RunFailed, 0)}, now); st.INP != nil || *st.SuccessRate != 0 {
		t.Errorf("only a failure: inp %v, success rate %v", deref(st.INP), deref2(st.SuccessRate))
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func deref2(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
