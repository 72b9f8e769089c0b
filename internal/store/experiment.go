package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

var experimentKind = websiteKind[model.Experiment]{sk: experimentSK, typ: "experiment", name: "experiment", plural: "experiments",
	id: func(e model.Experiment) string { return e.ID }, created: func(e model.Experiment) time.Time { return e.Created }, newest: true}

// CreateExperiment stores a new experiment; e.ID must be set and e.Created is set.
func (s *Store) CreateExperiment(ctx context.Context, w model.Website, e *model.Experiment) error {
	e.Created = s.now()
	return experimentKind.put(ctx, s, w, *e, putNew)
}

// UpdateExperiment replaces an existing experiment (its status and outcome).
func (s *Store) UpdateExperiment(ctx context.Context, w model.Website, e model.Experiment) error {
	return experimentKind.put(ctx, s, w, e, putExisting)
}

// Experiment returns one experiment.
func (s *Store) Experiment(ctx context.Context, w model.Website, id string) (model.Experiment, error) {
	return experimentKind.get(ctx, s, w, id)
}

// DeleteExperiment removes an experiment and records a purge marker for its objects, at once.
func (s *Store) DeleteExperiment(ctx context.Context, w model.Website, id string) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Experiment: id, Requested: s.now()}
	return job, s.deleteWithPurge(ctx, experimentKind.sk(id), job, experimentKind.what(id))
}

// Experiments lists a website's experiments, newest first.
func (s *Store) Experiments(ctx context.Context, w model.Website) ([]model.Experiment, error) {
	return experimentKind.list(ctx, s, w)
}
