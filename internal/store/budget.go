package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/openvitals/openvitals/internal/model"
)

type budgetItem struct {
	PK   string
	SK   string
	Type string
	model.Budget
}

func (s *Store) budgetItem(w model.Website, b model.Budget) budgetItem {
	return budgetItem{PK: websitePK(w.Account, w.ID), SK: budgetSK(b.ID), Type: "budget", Budget: b}
}

// CreateBudget stores a new budget and assigns its ID.
func (s *Store) CreateBudget(ctx context.Context, w model.Website, b *model.Budget) error {
	b.ID, b.Created = model.NewID(), s.now()
	return s.putItem(ctx, s.budgetItem(w, *b), false, "budget "+b.ID)
}

// Budgets lists a website's budgets, oldest first.
func (s *Store) Budgets(ctx context.Context, w model.Website) ([]model.Budget, error) {
	return websiteItems(ctx, s, w, budgetSKPrefix, "budgets", func(it budgetItem) model.Budget { return it.Budget },
		func(b model.Budget) time.Time { return b.Created }, false)
}

// Budget returns one budget of a website.
func (s *Store) Budget(ctx context.Context, w model.Website, id string) (model.Budget, error) {
	var it budgetItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), budgetSK(id), "budget "+id, &it)
	return it.Budget, err
}

// UpdateBudget replaces an existing budget.
func (s *Store) UpdateBudget(ctx context.Context, w model.Website, b model.Budget) error {
	return s.putItem(ctx, s.budgetItem(w, b), true, "budget "+b.ID)
}

// DeleteBudget removes a budget.
func (s *Store) DeleteBudget(ctx context.Context, w model.Website, id string) error {
	if err := s.deleteItem(ctx, websitePK(w.Account, w.ID), budgetSK(id), "budget "+id); err != nil {
		return err
	}
	// Its watched status, its tally and its entries go with it (ChangeBudgetTally writes them
	// only while the budget exists).
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), string(BudgetState(id))),
	})
	if err != nil {
		return fmt.Errorf("delete status of budget %s: %w", id, err)
	}
	return s.deleteBudgetTally(ctx, w, id)
}
