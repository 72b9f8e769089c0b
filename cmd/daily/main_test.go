package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/ux"
	"github.com/openvitals/openvitals/internal/uxworker"
)

// TestFollowWaitsForRetriesAndAddsUp: audits that failed once wait for their retry (make daily
// used to stop there and say nothing of the multistep runs); every line's counts add up to what
// was queued, per job, and the end says what failed.
func TestFollowWaitsForRetriesAndAddsUp(t *testing.T) {
	res := schedule.Queued{Day: "20261125", Audits: make([]audit.Job, 2), Runs: make([]multistep.Job, 1), UX: make([]ux.Job, 1)}
	steps := []schedule.Progress{
		{Audits: queue.Progress{Retrying: 2}, Runs: queue.Progress{Remaining: 1}, UX: queue.Progress{Remaining: 1}},
		{Audits: queue.Progress{Done: 1, Retrying: 1}, Runs: queue.Progress{Done: 1}, UX: queue.Progress{Skipped: 1}},
		{Audits: queue.Progress{Done: 1, Failed: 1}, Runs: queue.Progress{Done: 1}, UX: queue.Progress{Skipped: 1}},
	}
	calls := 0
	var out bytes.Buffer
	p, err := follow(context.Background(), &out, res, func(context.Context) (schedule.Progress, error) {
		s := steps[min(calls, len(steps)-1)]
		calls++
		return s, nil
	}, 0)
	if err != nil || calls != 3 || p != steps[2] {
		t.Fatalf("followed %d steps to %+v (%v), want all 3:\n%s", calls, p, err, &out)
	}
	for _, want := range []string{
		"2 audits, 1 multistep runs and 1 user-experience data collections",
		"audits (2): done 0 / failed 0 / retrying 2 / waiting 0",
		"multistep runs (1): done 1 / failed 0 / retrying 0 / waiting 0",
		"audits (2): done 1 / failed 1 / retrying 0 / waiting 0",
		"user-experience data (1): done 0 / skipped 1 / failed 0 / retrying 0 / waiting 0",
		"audits failed after 3 attempts",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}
	// A collection without a CrUX key says it skipped CrUX, and why.
	var buf bytes.Buffer
	showUX(&buf, []model.UXRun{{Day: "20261125", Attempt: 1, Finished: time.Now(), Error: "CrUX: " + uxworker.NoCrUXKey}})
	if got := buf.String(); !strings.Contains(got, "0 records stored") || !strings.Contains(got, "CrUX: skipped: no CrUX API key") {
		t.Errorf("ux summary %q", got)
	}
}

// TestWaitFanout waits while the fan-out queue holds messages, returns what the fan-out
// queued once it is over, and says the fan-out stopped when its queue empties without it
// being over (its messages went to the dead-letter queue).
func TestWaitFanout(t *testing.T) {
	ctx := context.Background()
	q := awstest.Queue(t, awstest.Clients(t), service.FanoutQueueSettings)
	if err := q.Send(ctx, map[string]string{"day": "20261125"}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	want := schedule.Queued{Day: "20261125", Audits: make([]audit.Job, 4)}
	var out bytes.Buffer
	// The queue's counts lag a send by some milliseconds: calls 50 ms apart, as make daily's
	// are a second apart, see the message.
	got, err := waitFanout(ctx, &out, func(context.Context) (schedule.Queued, bool, error) {
		calls++
		return want, calls == 4, nil
	}, q, 50*time.Millisecond)
	if err != nil || calls != 4 || len(got.Audits) != 4 || !strings.Contains(out.String(), "the fan-out queued the day's work") {
		t.Fatalf("waited %d calls for %+v (%v), want 4 calls and the 4 audits; output %q", calls, got, err, &out)
	}
	awstest.Receive(t, q, 1) // the queue is empty now
	calls = 0
	if _, err := waitFanout(ctx, &out, func(context.Context) (schedule.Queued, bool, error) {
		calls++
		return schedule.Queued{}, false, nil
	}, q, 0); !errors.Is(err, errFanoutStopped) || calls != 2 {
		t.Errorf("an empty fan-out queue, the fan-out not over: %v after %d calls, want errFanoutStopped after 2", err, calls)
	}
}
