package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// A test series' test and a multistep run show clients that they are queued or testing until
// they end. Each has a pending marker while it has no outcome, written with it and removed in
// the write that records its outcome, so that one query finds the work whose queue message was
// lost (a local restart, a worker killed on every delivery) and it can be ended or queued
// again.

// PendingSeriesTest names a test series' test that has no outcome yet.
type PendingSeriesTest struct {
	model.SiteRef
	// Test is the test's ID, which names its series.
	Test string
}

// String names the test, in a sweep's errors.
func (p PendingSeriesTest) String() string { return "test " + p.Test }

// PendingRun names a multistep run that has no outcome yet, by its key.
type PendingRun struct {
	model.SiteRef
	Test, Run string
	Created   time.Time
}

// String names the run, in a sweep's errors.
func (p PendingRun) String() string { return "run " + p.Run }

type pendingItem struct {
	PK, SK, Type string
	// Kind is "seriestest" or "run"; the fields of the other kind are empty.
	Kind             string
	Account, Website string
	Test             string
	Run              string     `dynamodbav:",omitempty"`
	Created          *time.Time `dynamodbav:",omitempty"`
}

const (
	pendingSeriesTest = "seriestest"
	pendingRun        = "run"
)

func pendingSeriesTestItem(w model.Website, test string) pendingItem {
	return pendingItem{PK: pendingPK, SK: pendingSeriesTestSK(w.Account, w.ID, test), Type: "pending",
		Kind: pendingSeriesTest, Account: w.Account, Website: w.ID, Test: test}
}

func pendingRunItem(w model.Website, r model.Run) pendingItem {
	created := r.Created.UTC()
	return pendingItem{PK: pendingPK, SK: pendingRunSK(w.Account, w.ID, r.Test, r.Created, r.ID), Type: "pending",
		Kind: pendingRun, Account: w.Account, Website: w.ID, Test: r.Test, Run: r.ID, Created: &created}
}

// pending lists the pending markers of which of gives a value.
func pending[T any](ctx context.Context, s *Store, of func(pendingItem) (T, bool)) ([]T, error) {
	items, err := withPrefix(ctx, s, pendingPK, "", "pending work", func(it pendingItem) pendingItem { return it })
	if err != nil {
		return nil, err
	}
	var out []T
	for _, it := range items {
		if v, ok := of(it); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// PendingSeriesTests lists the tests of every website's series that have no outcome yet.
func (s *Store) PendingSeriesTests(ctx context.Context) ([]PendingSeriesTest, error) {
	return pending(ctx, s, func(it pendingItem) (PendingSeriesTest, bool) {
		return PendingSeriesTest{SiteRef: model.SiteRef{Account: it.Account, Website: it.Website}, Test: it.Test}, it.Kind == pendingSeriesTest
	})
}

// PendingRuns lists the multistep runs of every website that have no outcome yet.
func (s *Store) PendingRuns(ctx context.Context) ([]PendingRun, error) {
	return pending(ctx, s, func(it pendingItem) (PendingRun, bool) {
		if it.Kind != pendingRun || it.Created == nil {
			return PendingRun{}, false
		}
		return PendingRun{SiteRef: model.SiteRef{Account: it.Account, Website: it.Website}, Test: it.Test, Run: it.Run, Created: *it.Created}, true
	})
}

// DropPendingSeriesTest forgets the marker of a test that is gone or has ended.
func (s *Store) DropPendingSeriesTest(ctx context.Context, p PendingSeriesTest) error {
	return s.dropPending(ctx, pendingSeriesTestSK(p.Account, p.Website, p.Test))
}

// DropPendingRun forgets the marker of a run that is gone or has ended.
func (s *Store) DropPendingRun(ctx context.Context, p PendingRun) error {
	return s.dropPending(ctx, pendingRunSK(p.Account, p.Website, p.Test, p.Created, p.Run))
}

func (s *Store) dropPending(ctx context.Context, sk string) error {
	return s.dropItem(ctx, pendingPK, sk, "pending marker")
}

// purgePending deletes the pending markers a purge job covers: a website's, or a multistep
// test's runs'. A page's purge leaves its series' tests: series outlive their pages.
func (s *Store) purgePending(ctx context.Context, j model.PurgeJob) (int, error) {
	switch {
	case j.Page != "" || j.Experiment != "":
		return 0, nil // they have no pending markers of their own
	case j.Test != "":
		return s.deletePrefix(ctx, pendingPK, pendingTestPrefix(j.Account, j.Website, j.Test))
	}
	return s.deletePrefix(ctx, pendingPK, pendingWebsitePrefix(j.Account, j.Website))
}

// RequeueSeriesTest records that a test's audit was queued again at queued, while the test has
// no outcome; counted says a sweep of overdue work did it (Requeued counts those). The
// messages of earlier queuings are left unaudited from then on. It returns the test as it now
// is, and false when it had ended meanwhile (then nothing changed).
func (s *Store) RequeueSeriesTest(ctx context.Context, w model.Website, id string, queued time.Time, counted bool) (model.SeriesTest, bool, error) {
	_, sk, ok := seriesTestKey(id)
	if !ok {
		return model.SeriesTest{}, false, fmt.Errorf("test %s: %w", id, model.ErrNotFound)
	}
	return requeue(ctx, s, w, sk, "test "+id, queued, counted, func(it seriesTestItem) model.SeriesTest { return it.SeriesTest },
		func() (model.SeriesTest, error) { return s.SeriesTest(ctx, w, id) })
}

// RequeueRun records that a run was queued again at queued, while it has no outcome; counted
// says a sweep of overdue work did it (Requeued counts those). It returns the run as it now
// is, and false when it had ended meanwhile (then nothing changed).
func (s *Store) RequeueRun(ctx context.Context, w model.Website, test string, created time.Time, id string, queued time.Time, counted bool) (model.Run, bool, error) {
	return requeue(ctx, s, w, runSK(test, created, id), "run "+id, queued, counted, func(it runItem) model.Run { return it.Run },
		func() (model.Run, error) { return s.GetRun(ctx, w, test, created, id) })
}

// requeue records that the work whose item is at sk in the website's partition (decoded as I,
// whose value of is) was queued again, as RequeueSeriesTest and RequeueRun say; when it had
// ended, or is gone, current reads what it is now.
func requeue[I, T any](ctx context.Context, s *Store, w model.Website, sk, what string, queued time.Time, counted bool,
	of func(I) T, current func() (T, error)) (T, bool, error) {
	update := "SET Queued = :queued"
	values := map[string]ddbtypes.AttributeValue{
		":queued": str(queued.UTC().Format(time.RFC3339Nano)), ":q": str(model.RunQueued), ":t": str(model.RunTesting),
	}
	if counted {
		update += " ADD Requeued :one"
		values[":one"] = num(1)
	}
	now, err := s.updated(ctx, key(websitePK(w.Account, w.ID), sk), itemUpdate{expr: update, cond: "#s IN (:q, :t)",
		values: values, names: map[string]string{"#s": "Status"}, returns: ddbtypes.ReturnValueAllNew})
	var zero T
	if isConditionFailed(err) {
		// Ended, or gone (then the condition fails on the missing item too).
		v, gerr := current()
		return v, false, gerr
	}
	if err != nil {
		return zero, false, fmt.Errorf("requeue %s: %w", what, err)
	}
	var it I
	if err := attributevalue.UnmarshalMap(now, &it); err != nil {
		return zero, false, fmt.Errorf("decode %s: %w", what, err)
	}
	return of(it), true, nil
}
