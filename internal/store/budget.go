package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

var budgetKind = websiteKind[model.Budget]{sk: budgetSK, typ: "budget", name: "budget", plural: "budgets",
	id: func(b model.Budget) string { return b.ID }, created: func(b model.Budget) time.Time { return b.Created }}

// CreateBudget stores a new budget and assigns its ID.
func (s *Store) CreateBudget(ctx context.Context, w model.Website, b *model.Budget) error {
	b.ID, b.Created = model.NewID(), s.now()
	return budgetKind.put(ctx, s, w, *b, putNew)
}

// Budgets lists a website's budgets, oldest first.
func (s *Store) Budgets(ctx context.Context, w model.Website) ([]model.Budget, error) {
	return budgetKind.list(ctx, s, w)
}

// Budget returns one budget of a website.
func (s *Store) Budget(ctx context.Context, w model.Website, id string) (model.Budget, error) {
	return budgetKind.get(ctx, s, w, id)
}

// UpdateBudget replaces an existing budget.
func (s *Store) UpdateBudget(ctx context.Context, w model.Website, b model.Budget) error {
	return budgetKind.put(ctx, s, w, b, putExisting)
}

// DeleteBudget removes a budget.
func (s *Store) DeleteBudget(ctx context.Context, w model.Website, id string) error {
	if err := budgetKind.delete(ctx, s, w, id); err != nil {
		return err
	}
	// Its watched status, its tally and its entries go with it (ChangeBudgetTally writes them
	// only while the budget exists).
	if err := s.dropItem(ctx, websitePK(w.Account, w.ID), string(BudgetState(id)), "status of budget "+id); err != nil {
		return err
	}
	return s.deleteBudgetTally(ctx, w, id)
}
