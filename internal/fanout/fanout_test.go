package fanout

import (
	"context"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		j  Job
		ok bool
	}{
		{Job{Day: "20261125", Job: JobAudits}, true},
		{Job{Day: "20261125", Job: JobUX, ListPage: 3, After: "acme#w1"}, true},
		{Job{Day: "20261125", Job: JobMultistep, Account: "acme", Website: "w1"}, true},
		{Job{Job: JobAudits}, false},
		{Job{Day: "20261125", Job: "coffee"}, false},
		{Job{Day: "20261125", Job: JobAudits, Website: "w1"}, false},
		{Job{Day: "20261125", Job: JobAudits, Account: "acme"}, false},
	} {
		if err := c.j.Check(); (err == nil) != c.ok {
			t.Errorf("%+v: %v, want ok %v", c.j, err, c.ok)
		}
	}
}

// An attempt's lease is its context's deadline (Lambda's); without one, DefaultLease from
// now, which then ends the context too.
func TestWithLease(t *testing.T) {
	now := time.Now()
	deadline := now.Add(42 * time.Second)
	parent, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	ctx, stop, lease := WithLease(parent, now)
	if d, _ := ctx.Deadline(); !lease.Equal(deadline) || !d.Equal(deadline) {
		t.Errorf("lease %v, deadline %v, want both %v", lease, d, deadline)
	}
	stop()
	ctx, stop, lease = WithLease(context.Background(), now)
	defer stop()
	if d, ok := ctx.Deadline(); !ok || !lease.Equal(now.Add(DefaultLease)) || !d.Equal(lease) {
		t.Errorf("without a deadline: lease %v, context deadline %v (%v), want %v for both", lease, d, ok, now.Add(DefaultLease))
	}
}
