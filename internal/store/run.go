package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type runItem struct {
	PK   string
	SK   string
	Type string
	model.Run
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of the day it was created, for the table's TTL
}

func (s *Store) runItem(w model.Website, r model.Run) runItem {
	return runItem{PK: websitePK(w.Account, w.ID), SK: runSK(r.Test, r.Created, r.ID), Type: "run", Run: r,
		Expires: model.HistoryEnd(model.Day(r.Created)).Unix()}
}

// CreateRun records a new queued run of a test, queued at its creation, with its pending
// marker, and assigns its ID and creation time.
func (s *Store) CreateRun(ctx context.Context, w model.Website, t model.Test) (model.Run, error) {
	now := s.now()
	r := model.Run{ID: model.NewID(), Test: t.ID, Created: now, Device: t.Device, Status: model.RunQueued, Queued: &now}
	run, err := attributevalue.MarshalMap(s.runItem(w, r))
	if err != nil {
		return r, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	marker, err := attributevalue.MarshalMap(pendingRunItem(w, r))
	if err != nil {
		return r, err
	}
	reasons, err := s.transact(ctx, s.putAction(run, "attribute_not_exists(PK)"), s.putAction(marker, ""))
	if len(reasons) > 0 {
		return r, fmt.Errorf("run %s: id already in use", r.ID)
	}
	if err != nil {
		return r, fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return r, nil
}

// ErrRunEnded is returned (wrapped) by UpdateRun for a run that had an outcome already: the
// first outcome recorded stays.
var ErrRunEnded = errors.New("the run has ended already")

// UpdateRun replaces a run that has no outcome yet: ErrNotFound when it does not exist,
// ErrRunEnded when it has an outcome. A run given an outcome loses its pending marker in the
// same write.
func (s *Store) UpdateRun(ctx context.Context, w model.Website, r model.Run) error {
	item, err := attributevalue.MarshalMap(s.runItem(w, r))
	if err != nil {
		return fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	writes := []ddbtypes.TransactWriteItem{withAttrs(s.putAction(item, "#s IN (:q, :t)"),
		map[string]ddbtypes.AttributeValue{":q": str(model.RunQueued), ":t": str(model.RunTesting)}, map[string]string{"#s": "Status"})}
	if r.IsFinished() {
		writes = append(writes, s.deleteAction(key(pendingPK, pendingRunSK(w.Account, w.ID, r.Test, r.Created, r.ID)), ""))
	}
	reasons, err := s.transact(ctx, writes...)
	if len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
		if _, gerr := s.GetRun(ctx, w, r.Test, r.Created, r.ID); gerr != nil {
			return gerr // ErrNotFound: deleted
		}
		return fmt.Errorf("run %s: %w", r.ID, ErrRunEnded)
	}
	if err != nil {
		return fmt.Errorf("put run %s: %w", r.ID, err)
	}
	return nil
}

// GetRun reads one run by its test, creation time and ID (as a run message carries them).
func (s *Store) GetRun(ctx context.Context, w model.Website, test string, created time.Time, id string) (model.Run, error) {
	var it runItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), runSK(test, created, id), "run "+id, &it)
	return it.Run, err
}

// Runs lists a test's runs created since a time, newest first, at most limit (0: no limit).
func (s *Store) Runs(ctx context.Context, w model.Website, test string, since time.Time, limit int) ([]model.Run, error) {
	in := s.newestFirst(websitePK(w.Account, w.ID), TestItemsPrefix(test)+"RUN#"+since.UTC().Format(runTimeLayout),
		TestItemsPrefix(test)+"RUN$", "") // '$' sorts right after '#'
	items, err := query[runItem](ctx, s, in, limit)
	if err != nil {
		return nil, fmt.Errorf("query runs: %w", err)
	}
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	return values(items, func(it runItem) model.Run { return it.Run }), nil
}

// MarkTestQueued records that a test's daily run was queued for a UTC day; false when it was
// already, so that a second scheduler run the same day queues nothing twice.
func (s *Store) MarkTestQueued(ctx context.Context, w model.SiteRef, test, day string) (bool, error) {
	return s.markOnce(ctx, websitePK(w.Account, w.Website), testQueuedSK(test, day))
}

// markOnce writes a marker item that expires after three days; false when it exists already.
func (s *Store) markOnce(ctx context.Context, pk, sk string) (bool, error) {
	item := map[string]ddbtypes.AttributeValue{
		attrPK: str(pk), attrSK: str(sk), "Type": str("queued"), TTLAttribute: num64(time.Now().Add(72 * time.Hour).Unix()),
	}
	err := s.putItem(ctx, item, putNew, "queued mark")
	if errors.Is(err, errInUse) {
		return false, nil
	}
	return err == nil, err
}
