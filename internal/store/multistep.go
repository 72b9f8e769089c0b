package store

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
)

var testKind = websiteKind[model.Test]{sk: testSK, typ: "test", name: "multistep test", plural: "multistep tests",
	id: func(t model.Test) string { return t.ID }, created: func(t model.Test) time.Time { return t.Created },
	normal: func(t model.Test) model.Test {
		if t.Steps == nil {
			t.Steps = []step.Step{}
		}
		return t
	}}

// CreateTest stores a new multistep test and assigns its ID.
func (s *Store) CreateTest(ctx context.Context, w model.Website, t *model.Test) error {
	t.ID, t.Created = model.NewID(), s.now()
	return testKind.put(ctx, s, w, *t, putNew)
}

// Tests lists a website's multistep tests, oldest first.
func (s *Store) Tests(ctx context.Context, w model.Website) ([]model.Test, error) {
	return testKind.list(ctx, s, w)
}

// Test returns one multistep test of a website.
func (s *Store) Test(ctx context.Context, w model.Website, id string) (model.Test, error) {
	return testKind.get(ctx, s, w, id)
}

// UpdateTest replaces an existing multistep test.
func (s *Store) UpdateTest(ctx context.Context, w model.Website, t model.Test) error {
	return testKind.put(ctx, s, w, t, putExisting)
}

// DeleteTest removes a multistep test and records a purge marker for its runs, at once.
func (s *Store) DeleteTest(ctx context.Context, w model.Website, id string) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Test: id, Requested: s.now()}
	return job, s.deleteWithPurge(ctx, testKind.sk(id), job, testKind.what(id))
}

// deleteWithPurge removes an existing item of the website a job names (sk) and records the
// job's purge marker, in one transaction: what the item leaves behind is purged after it.
func (s *Store) deleteWithPurge(ctx context.Context, sk string, job model.PurgeJob, what string) error {
	marker, err := s.purgeMarker(job)
	if err != nil {
		return err
	}
	r, err := s.transact(ctx, s.deleteAction(key(websitePK(job.Account, job.Website), sk), "attribute_exists(PK)"), s.putAction(marker, ""))
	if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}
