package google

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/api/chromeuxreport/v1"
	"google.golang.org/api/googleapi"

	"github.com/openvitals/openvitals/internal/model"
)

// TestPacerKeepsUnderTheQuota drives the pacer with a fake clock through bursts and pauses and
// checks that no 60-second window ever holds more than 150 query starts.
func TestPacerKeepsUnderTheQuota(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var slept []time.Duration
	p := &pacer{interval: time.Minute / 150, now: func() time.Time { return now },
		sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); now = now.Add(d); return nil }}
	var starts []time.Time
	for i := range 1000 {
		if i%200 == 0 {
			now = now.Add(45 * time.Second) // a pause: the next burst may start at once
		}
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		starts = append(starts, now)
		now = now.Add(30 * time.Millisecond) // the query itself
	}
	for i := range starts {
		n := 0
		for j := i; j < len(starts) && starts[j].Sub(starts[i]) < time.Minute; j++ {
			n++
		}
		if n > 150 {
			t.Fatalf("%d queries in the minute from %v", n, starts[i])
		}
	}
	if len(slept) == 0 || slept[0] != 400*time.Millisecond-30*time.Millisecond {
		t.Errorf("first wait %v, want 370 ms (400 ms apart, the query took 30 ms)", slept[:1])
	}
	// After each pause the first query starts without waiting: 5 pauses, 995 waits.
	if len(slept) != 995 {
		t.Errorf("%d waits, want 995", len(slept))
	}
}

func TestBackoff(t *testing.T) {
	tooMany := &googleapi.Error{Code: 429, Header: http.Header{"Retry-After": {"12"}}}
	for _, c := range []struct {
		attempt int
		err     error
		want    time.Duration
	}{
		{1, &googleapi.Error{Code: 503}, time.Second},
		{3, &googleapi.Error{Code: 500}, 4 * time.Second},
		{9, &googleapi.Error{Code: 503}, time.Minute},
		{1, tooMany, 12 * time.Second},
		{1, &googleapi.Error{Code: 429, Header: http.Header{"Retry-After": {"3600"}}}, time.Minute},
		{2, errors.New("connection reset by peer"), 2 * time.Second},
	} {
		if got := backoff(c.attempt, c.err); got != c.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", c.attempt, c.err, got, c.want)
		}
	}
	ctx := context.Background()
	for err, want := range map[error]bool{
		tooMany:                          true,
		&googleapi.Error{Code: 502}:      true,
		errors.New("connection refused"): true,
		&googleapi.Error{Code: 400}:      false,
		&googleapi.Error{Code: 403}:      false,
		&googleapi.Error{Code: 404}:      false,
	} {
		if got := retryable(ctx, err); got != want {
			t.Errorf("retryable(%v) = %v, want %v", err, got, want)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if retryable(done, errors.New("context canceled")) {
		t.Error("a cancelled collection is retried")
	}
}

func TestParseRecord(t *testing.T) {
	r := &chromeuxreport.Record{Metrics: map[string]chromeuxreport.Metric{
		// CLS as strings, a bin without density (none of it), a density as a string.
		"cumulative_layout_shift": {Percentiles: &chromeuxreport.Percentiles{P75: "0.12"},
			Histogram: []*chromeuxreport.Bin{{Start: "0.00", End: "0.10", Density: 0.9}, {Start: "0.10", End: "0.25"}, {Start: "0.25", Density: "0.1"}}},
		// Without a histogram or a 75th percentile: left out, not zero.
		"largest_contentful_paint":  {Percentiles: &chromeuxreport.Percentiles{P75: 2000.0}},
		"interaction_to_next_paint": {Histogram: []*chromeuxreport.Bin{{Density: 0.5}, {Density: 0.3}, {Density: 0.2}}},
		// A metric this service does not serve.
		"round_trip_time": {Percentiles: &chromeuxreport.Percentiles{P75: 120.0}, Histogram: []*chromeuxreport.Bin{{Density: 1.0}, {}}},
	}}
	got := parseRecord(r)
	if len(got) != 1 || got["cls"] != (model.Vital{P75: 0.12, Good: 90, NeedsImprovement: 0, Poor: 10}) {
		t.Errorf("parseRecord = %+v, want cls only", got)
	}
}
