// Package parallel runs a function over many items, a bounded number of them at a time: the
// reads and writes of the real-user tables, each a request to S3 or DynamoDB.
package parallel

import (
	"context"
	"sync"
)

// Each runs fn for each item, at most n at a time, until ctx ends. It returns the errors fn
// returned, in the order they came, then ctx's error if it ended.
func Each[T any](ctx context.Context, items []T, n int, fn func(T) error) []error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, n)
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errs
}
