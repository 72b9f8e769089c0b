// Package parallel runs a function over many items, a bounded number of them at a time: the
// reads and writes of the real-user tables and of the pages' summaries, each a request to S3
// or DynamoDB, and the shards of a website's daily audits.
package parallel

import (
	"context"
	"errors"
	"sync"
)

// Do calls fn for each index below count, at most n at a time, and returns what each call
// returned, by index.
func Do(n, count int, fn func(i int) error) []error {
	errs := make([]error, count)
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for i := range count {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

// Map calls fn for each index below count, at most n at a time, and returns what each call
// made, by index, and the errors the calls returned, joined.
func Map[T any](n, count int, fn func(i int) (T, error)) ([]T, error) {
	out := make([]T, count)
	errs := Do(n, count, func(i int) error {
		var err error
		out[i], err = fn(i)
		return err
	})
	return out, errors.Join(errs...)
}

// Each runs fn for each item, at most n at a time, until ctx ends: the items not started by
// then are left. It returns the errors fn returned, in the order they came, then ctx's error
// if it ended.
func Each[T any](ctx context.Context, items []T, n int, fn func(T) error) []error {
	var mu sync.Mutex
	var errs []error
	Do(n, len(items), func(i int) error {
		if ctx.Err() != nil {
			return nil
		}
		if err := fn(items[i]); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		return nil
	})
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errs
}
