package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Target is a page on one device, as a test series asks for it.
type Target struct {
	Page   model.Page
	Device string
}

// SeriesRequest is a test series to start: its targets (each page on each device once), and
// what the client said of it.
type SeriesRequest struct {
	Targets     []Target
	Description string
	Initiator   string
	Commit      string
}

// Series starts a test series: it records the series and its queued tests, annotates the
// website's timelines with the description (the deploy it tests), and queues one audit per
// test on the audit queue, like audits on demand. It returns the series and its tests, and how
// many audits were queued. A test whose audit could not be queued is recorded failed, so that
// the series still ends.
func (s *Queue) Series(ctx context.Context, w model.Website, req SeriesRequest) (model.TestSeries, []model.SeriesTest, int, error) {
	now := time.Now().UTC()
	series := model.TestSeries{ID: model.NewSeriesID(now), Description: req.Description, Initiator: req.Initiator, Commit: req.Commit, Created: now}
	tests := make([]model.SeriesTest, len(req.Targets))
	jobs := make([]Job, len(req.Targets))
	for i, t := range req.Targets {
		tests[i] = model.SeriesTest{ID: model.SeriesTestID(series.ID, i), Series: series.ID, Page: t.Page.ID,
			URL: t.Page.URL, Alias: t.Page.Alias, Device: t.Device, Status: model.RunQueued, Queued: &now}
		jobs[i] = Job{Account: w.Account, Website: w.ID, Page: t.Page.ID, Device: t.Device, Queued: now,
			Series: series.ID, Test: tests[i].ID}
	}
	if err := s.store.CreateTestSeries(ctx, w, series, tests); err != nil {
		return series, nil, 0, err
	}
	series.Count = len(tests)
	if req.Description != "" {
		// The annotation's ID is the series', so that it is told apart from hand-made ones.
		a := model.Annotation{ID: "ann_" + series.ID, At: now, Text: req.Description, Created: now}
		if err := s.store.PutAnnotation(ctx, w, a); err != nil {
			return series, tests, 0, fmt.Errorf("annotate test series: %w", err)
		}
	}
	n, err := s.send(ctx, jobs)
	if err != nil {
		ctx := context.WithoutCancel(ctx)
		for i := n; i < len(tests); i++ {
			tests[i].Status, tests[i].Error = model.RunFailed, "the audit could not be queued"
			if _, ferr := s.store.FinishSeriesTest(ctx, w, tests[i]); ferr != nil {
				s.log.ErrorContext(ctx, "record unqueued series test", "series", series.ID, "test", tests[i].ID, "err", ferr)
			}
		}
		series.Finished, series.Failed = len(tests)-n, len(tests)-n
	}
	return series, tests, n, err
}
