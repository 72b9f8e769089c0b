package multistep

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// StatsWindow is how far back a test's statistics look: 14 days.
const StatsWindow = 14 * 24 * time.Hour

// The states of a test over the statistics window.
const (
	StateUp    = "up"
	StateDown  = "down"
	StateFlaky = "flaky"
	StateOff   = "off"
)

// DayRate is the share of a day's finished runs that completed, in percent.
type DayRate struct {
	Date string // yyyy-mm-dd, UTC
	Rate int
}

// Stats are a test's statistics over the window. Averages are nil when no run completed.
type Stats struct {
	INP, TBT, CLS, Duration *float64
	SuccessRates            []DayRate
	SuccessRate             *int
	State                   string
}

// Summarize computes the statistics of runs (any order) as of now:
//   - inp, tbt, cls and duration average the completed runs of the window;
//   - success_rates has one item per day with finished runs, success_rate covers the window;
//   - state is off when no run finished in the window, up when every finished run completed,
//     down when the latest finished run failed and so did the one before it (or it is the only
//     one), and flaky otherwise.
func Summarize(runs []model.Run, now time.Time) Stats {
	since := now.Add(-StatsWindow)
	var finished []model.Run
	for _, r := range runs {
		if r.IsFinished() && !r.Created.Before(since) && !r.Created.After(now) {
			finished = append(finished, r)
		}
	}
	st := Stats{SuccessRates: []DayRate{}, State: StateOff}
	if len(finished) == 0 {
		return st
	}
	sort.Slice(finished, func(i, j int) bool { return finished[i].Created.Before(finished[j].Created) })

	var inp, tbt, cls, dur runMean
	type day struct{ done, total int }
	days := map[string]*day{}
	completed := 0
	for _, r := range finished {
		d := r.Created.UTC().Format("2006-01-02")
		if days[d] == nil {
			days[d] = &day{}
		}
		days[d].total++
		if r.Status == model.RunCompleted {
			days[d].done++
			completed++
			inp.add(r.INP)
			tbt.add(r.TBT)
			cls.add(r.CLS)
			dur.add(r.Duration)
		}
	}
	st.INP, st.TBT, st.CLS, st.Duration = inp.value(), tbt.value(), cls.value(), dur.value()
	for d, c := range days {
		st.SuccessRates = append(st.SuccessRates, DayRate{Date: d, Rate: percentOf(c.done, c.total)})
	}
	sort.Slice(st.SuccessRates, func(i, j int) bool { return st.SuccessRates[i].Date < st.SuccessRates[j].Date })
	rate := percentOf(completed, len(finished))
	st.SuccessRate = &rate

	last := len(finished) - 1
	switch {
	case completed == len(finished):
		st.State = StateUp
	case finished[last].Status == model.RunFailed && (last == 0 || finished[last-1].Status == model.RunFailed):
		st.State = StateDown
	default:
		st.State = StateFlaky
	}
	return st
}

// StatsReader reads a website's tests and their runs; *store.Store is one.
type StatsReader interface {
	Tests(ctx context.Context, w model.Website) ([]model.Test, error)
	Runs(ctx context.Context, w model.Website, test string, since time.Time, limit int) ([]model.Run, error)
}

// TestStats is a test with the statistics of its runs.
type TestStats struct {
	Test model.Test
	Stats
}

// TestsWithStats lists a website's tests, oldest first, each with the statistics of its runs
// over the window before now; each test's runs take a query of their own.
func TestsWithStats(ctx context.Context, r StatsReader, w model.Website, now time.Time) ([]TestStats, error) {
	tests, err := r.Tests(ctx, w)
	if err != nil {
		return nil, err
	}
	out := make([]TestStats, len(tests))
	for i, t := range tests {
		runs, err := r.Runs(ctx, w, t.ID, now.Add(-StatsWindow), 0)
		if err != nil {
			return nil, err
		}
		out[i] = TestStats{Test: t, Stats: Summarize(runs, now)}
	}
	return out, nil
}

func percentOf(part, whole int) int { return int(math.Round(100 * float64(part) / float64(whole))) }

// runMean averages the values of the runs that have one.
type runMean struct {
	sum float64
	n   int
}

func (m *runMean) add(v *float64) {
	if v != nil {
		m.sum += *v
		m.n++
	}
}

func (m *runMean) value() *float64 {
	if m.n == 0 {
		return nil
	}
	v := m.sum / float64(m.n)
	return &v
}
