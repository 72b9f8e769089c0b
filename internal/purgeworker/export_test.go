package purgeworker

import "time"

// SetNow sets the worker's clock, so that a test's objects are as old as it needs.
func (w *Worker) SetNow(now func() time.Time) { w.now = now }
