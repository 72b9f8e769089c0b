package multistep_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestOverdueRunsEndOrQueueAgain: multistep runs whose messages are lost do not stay queued or
// testing. After the multistep queue's deadline a run that never began is queued again once,
// with a new message; a run that began, or was queued again and is overdue again, ends failed
// with a reason, and the first outcome recorded stays. A run of a deleted test is forgotten.
func TestOverdueRunsEndOrQueueAgain(t *testing.T) {
	ctx := context.Background()
	e, q, runs, w, tests := newRuns(t, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 2}, "lost", "began", "gone")
	deadline := awstest.Deadline(t, q)
	var rs []model.Run
	for _, tt := range tests {
		r, err := runs.Run(ctx, w, tt)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	awstest.Receive(t, q, 3) // lost
	began := rs[1]
	began.Status, began.Started = model.RunTesting, &began.Created
	if err := e.Store.UpdateRun(ctx, w, began); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.DeleteTest(ctx, w, tests[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.PurgeItems(ctx, model.PurgeJob{Account: w.Account, Website: w.ID, Test: tests[2].ID}); err != nil {
		t.Fatal(err)
	}
	get := func(r model.Run) model.Run {
		t.Helper()
		got, err := e.Store.GetRun(ctx, w, r.Test, r.Created, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	if swept, err := runs.Overdue(ctx, rs[0].Created.Add(deadline-time.Second), deadline); err != nil || swept != (queue.Swept{}) {
		t.Fatalf("before the deadline: %+v, %v", swept, err)
	}
	sweep1 := rs[1].Created.Add(deadline + time.Second)
	if swept, err := runs.Overdue(ctx, sweep1, deadline); err != nil || swept != (queue.Swept{Requeued: 1, Failed: 1}) {
		t.Fatalf("after the deadline: %+v, %v; want one queued again, one failed", swept, err)
	}
	if got := get(rs[0]); got.Status != model.RunQueued || got.Requeued != 1 || !got.Queued.Equal(sweep1) {
		t.Errorf("the run never delivered: %+v", got)
	}
	if got := get(rs[1]); got.Status != model.RunFailed || !strings.HasPrefix(got.Error, "no result after 2m") || !got.Finished.Equal(sweep1) {
		t.Errorf("the run that began: %+v", got)
	}
	// The first outcome stays: a worker finishing the failed run late changes nothing.
	late := get(rs[1])
	late.Status, late.Error = model.RunCompleted, ""
	if err := e.Store.UpdateRun(ctx, w, late); !errors.Is(err, store.ErrRunEnded) {
		t.Errorf("a late outcome: %v, want ErrRunEnded", err)
	}
	msgs := awstest.Receive(t, q, 1)
	var job multistep.Job
	if len(msgs) != 1 || json.Unmarshal([]byte(msgs[0]), &job) != nil || job.Run != rs[0].ID || !job.Queued.Equal(sweep1) || !job.Created.Equal(rs[0].Created) {
		t.Fatalf("messages queued again %v, want the lost run's, queued at %s", msgs, sweep1)
	}

	sweep2 := sweep1.Add(deadline)
	if swept, err := runs.Overdue(ctx, sweep2, deadline); err != nil || swept != (queue.Swept{Failed: 1}) {
		t.Fatalf("after its second deadline: %+v, %v; want it failed", swept, err)
	}
	if got := get(rs[0]); got.Status != model.RunFailed || got.Error != "no result after 2m0s: the run's message was lost, or every attempt was stopped before it could record an error" {
		t.Errorf("the run queued again and lost again: %+v", got)
	}
	if pending, err := e.Store.PendingRuns(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending runs %+v (%v), want none", pending, err)
	}
}
