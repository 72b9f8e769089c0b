// Package poll waits, in tests, for what a worker does in the background.
package poll

import (
	"testing"
	"time"
)

// Until polls cond every 200 ms until it holds, and fails t if it does not within the bound
// (a bound for a stuck worker, not a speed check).
func Until(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
