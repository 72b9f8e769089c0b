package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

type experimentItem struct {
	PK, SK, Type string
	model.Experiment
}

func (s *Store) experimentItem(w model.Website, e model.Experiment) experimentItem {
	return experimentItem{PK: websitePK(w.Account, w.ID), SK: experimentSK(e.ID), Type: "experiment", Experiment: e}
}

// CreateExperiment stores a new experiment; e.ID must be set and e.Created is set.
func (s *Store) CreateExperiment(ctx context.Context, w model.Website, e *model.Experiment) error {
	e.Created = s.now()
	return s.putItem(ctx, s.experimentItem(w, *e), false, "experiment "+e.ID)
}

// UpdateExperiment replaces an existing experiment (its status and outcome).
func (s *Store) UpdateExperiment(ctx context.Context, w model.Website, e model.Experiment) error {
	return s.putItem(ctx, s.experimentItem(w, e), true, "experiment "+e.ID)
}

// Experiment returns one experiment.
func (s *Store) Experiment(ctx context.Context, w model.Website, id string) (model.Experiment, error) {
	var it experimentItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), experimentSK(id), "experiment "+id, &it)
	return it.Experiment, err
}

// DeleteExperiment removes an experiment and records a purge marker for its objects, at once.
func (s *Store) DeleteExperiment(ctx context.Context, w model.Website, id string) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Experiment: id, Requested: s.now()}
	return job, s.deleteWithPurge(ctx, experimentSK(id), job, "experiment "+id)
}

// Experiments lists a website's experiments, newest first.
func (s *Store) Experiments(ctx context.Context, w model.Website) ([]model.Experiment, error) {
	return websiteItems(ctx, s, w, experimentSKPrefix, "experiments", func(it experimentItem) model.Experiment { return it.Experiment },
		func(e model.Experiment) time.Time { return e.Created }, true)
}
