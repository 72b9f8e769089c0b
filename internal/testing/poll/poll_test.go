package poll_test

import (
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/testing/poll"
)

// TestUntilWaitsForTheCondition: Until returns once the condition holds, after polling it
// again, and not before.
func TestUntilWaitsForTheCondition(t *testing.T) {
	calls := 0
	poll.Until(t, "the third call", time.Minute, func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}
}

// TestUntilFailsAfterTheBound: a condition that never holds fails the test once the bound has
// passed.
func TestUntilFailsAfterTheBound(t *testing.T) {
	inner := &testing.T{}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		poll.Until(inner, "never", 300*time.Millisecond, func() bool { return false })
	}()
	<-done
	if !inner.Failed() || time.Since(start) < 300*time.Millisecond {
		t.Errorf("failed %v after %v, want a failure after the bound", inner.Failed(), time.Since(start))
	}
}
