package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
)

type testItem struct {
	PK   string
	SK   string
	Type string
	model.Test
}

func (s *Store) testItem(w model.Website, t model.Test) testItem {
	if t.Steps == nil {
		t.Steps = []step.Step{}
	}
	return testItem{PK: websitePK(w.Account, w.ID), SK: testSK(t.ID), Type: "test", Test: t}
}

// CreateTest stores a new multistep test and assigns its ID.
func (s *Store) CreateTest(ctx context.Context, w model.Website, t *model.Test) error {
	t.ID, t.Created = model.NewID(), s.now()
	return s.putItem(ctx, s.testItem(w, *t), false, "multistep test "+t.ID)
}

// Tests lists a website's multistep tests, oldest first.
func (s *Store) Tests(ctx context.Context, w model.Website) ([]model.Test, error) {
	return websiteItems(ctx, s, w, testSKPrefix, "multistep tests", func(it testItem) model.Test { return it.Test },
		func(t model.Test) time.Time { return t.Created }, false)
}

// Test returns one multistep test of a website.
func (s *Store) Test(ctx context.Context, w model.Website, id string) (model.Test, error) {
	var it testItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), testSK(id), "multistep test "+id, &it)
	return it.Test, err
}

// UpdateTest replaces an existing multistep test.
func (s *Store) UpdateTest(ctx context.Context, w model.Website, t model.Test) error {
	return s.putItem(ctx, s.testItem(w, t), true, "multistep test "+t.ID)
}

// DeleteTest removes a multistep test and records a purge marker for its runs, at once.
func (s *Store) DeleteTest(ctx context.Context, w model.Website, id string) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Test: id, Requested: s.now()}
	return job, s.deleteWithPurge(ctx, testSK(id), job, "multistep test "+id)
}

// deleteWithPurge removes an existing item of the website a job names (sk) and records the
// job's purge marker, in one transaction: what the item leaves behind is purged after it.
func (s *Store) deleteWithPurge(ctx context.Context, sk string, job model.PurgeJob, what string) error {
	marker, err := s.purgeMarker(job)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []ddbtypes.TransactWriteItem{
			{Delete: &ddbtypes.Delete{TableName: aws.String(s.table), Key: key(websitePK(job.Account, job.Website), sk),
				ConditionExpression: aws.String("attribute_exists(PK)")}},
			{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: marker}},
		},
	})
	if r := cancellationReasons(err); len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}
