package auditworker

// Close stops the Lighthouse runner.
func (w *Worker) Close() error { return w.runner.Close() }
