package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestEachRunsEveryItemWithinTheBound(t *testing.T) {
	var running, most, sum atomic.Int64
	items := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	errs := Each(context.Background(), items, 3, func(i int64) error {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		sum.Add(i)
		running.Add(-1)
		return nil
	})
	if len(errs) != 0 {
		t.Fatalf("errors %v, want none", errs)
	}
	if sum.Load() != 55 {
		t.Errorf("sum of the items run %d, want 55", sum.Load())
	}
	if most.Load() > 3 {
		t.Errorf("%d ran at once, want at most 3", most.Load())
	}
}

func TestEachReturnsTheErrorsThenTheContexts(t *testing.T) {
	bad := errors.New("bad")
	errs := Each(context.Background(), []int{1, 2, 3}, 1, func(i int) error {
		if i == 2 {
			return bad
		}
		return nil
	})
	if len(errs) != 1 || errs[0] != bad {
		t.Fatalf("errors %v, want [bad]", errs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	errs = Each(ctx, []int{1}, 1, func(int) error { ran = true; return nil })
	if ran || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("after the context ended: ran %v, errors %v; want nothing run and context.Canceled", ran, errs)
	}
}

func TestDoReturnsEachCallsErrorByIndex(t *testing.T) {
	bad := errors.New("bad")
	var calls atomic.Int64
	errs := Do(2, 5, func(i int) error {
		calls.Add(1)
		if i%2 == 1 {
			return bad
		}
		return nil
	})
	if calls.Load() != 5 || len(errs) != 5 {
		t.Fatalf("%d calls, %d errors; want 5 of each", calls.Load(), len(errs))
	}
	for i, err := range errs {
		if want := i%2 == 1; (err == bad) != want {
			t.Errorf("errs[%d] = %v, want bad: %v", i, err, want)
		}
	}
}
