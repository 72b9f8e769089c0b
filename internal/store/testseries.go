package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// A test series is a set of lab audits started together (from a CI job, after a deploy): one
// series item with counters, and one item per test (a page on a device). A test goes queued →
// testing → completed or failed, the way a multistep run does (the Run* statuses); the
// series' status follows from its counters.

type seriesItem struct {
	PK, SK, Type string
	model.TestSeries
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of the day it was created, for the table's TTL
}

type seriesTestItem struct {
	PK, SK, Type string
	model.SeriesTest
	Expires int64 `dynamodbav:"expires"` // its series'
}

// seriesTestKey is the series and sort key of a test by its ID; false for an ID no series
// gave.
func seriesTestKey(id string) (series, sk string, ok bool) {
	body, n, found := strings.Cut(strings.TrimPrefix(id, "tt_"), "_")
	i, err := strconv.Atoi(n)
	if !found || !strings.HasPrefix(id, "tt_") || err != nil || i < 0 || body == "" || strconv.Itoa(i) != n {
		return "", "", false
	}
	series = "ts_" + body
	return series, seriesTestSK(series, i), true
}

// CreateTestSeries records a new series and its queued tests (their IDs and statuses set by
// the caller), with a pending marker for each test without an outcome, while the website
// exists (ErrNotFound otherwise). The tests are written first: a series is read only once all
// its tests are there.
func (s *Store) CreateTestSeries(ctx context.Context, w model.Website, series model.TestSeries, tests []model.SeriesTest) error {
	pk := websitePK(w.Account, w.ID)
	created := series.Created
	if created.IsZero() {
		created = s.now()
	}
	expires := model.HistoryEnd(model.Day(created)).Unix()
	items := make([]any, 0, 2*len(tests))
	for i, t := range tests {
		items = append(items, seriesTestItem{PK: pk, SK: seriesTestSK(series.ID, i), Type: "seriestest", SeriesTest: t, Expires: expires})
		if !t.IsFinished() {
			items = append(items, pendingSeriesTestItem(w, t.ID))
		}
	}
	if err := putAll(ctx, s, items, "put series tests"); err != nil {
		return err
	}
	series.Count = len(tests)
	return s.putWhileWebsite(ctx, w, seriesItem{PK: pk, SK: seriesSK(series.ID), Type: "series", TestSeries: series, Expires: expires}, "test series")
}

// TestSeries reads one series.
func (s *Store) TestSeries(ctx context.Context, w model.Website, id string) (model.TestSeries, error) {
	var it seriesItem
	if !strings.HasPrefix(id, "ts_") {
		return model.TestSeries{}, fmt.Errorf("test series %s: %w", id, model.ErrNotFound)
	}
	err := s.getItem(ctx, websitePK(w.Account, w.ID), seriesSK(id), "test series "+id, &it)
	return it.TestSeries, err
}

// TestSeriesList lists a website's series newest first: up to limit (0: all) after the one
// whose ID is after ("" from the newest), and whether more remain.
func (s *Store) TestSeriesList(ctx context.Context, w model.Website, after string, limit int) ([]model.TestSeries, bool, error) {
	skip := ""
	if after != "" {
		skip = seriesSK(after)
	}
	in := s.newestFirst(websitePK(w.Account, w.ID), seriesSKPrefix, seriesSKPrefix+"\U0010FFFF", skip)
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit + 1))
	}
	return window(ctx, s, in, skip, limit, "test series", func(it seriesItem) (string, model.TestSeries) { return it.SK, it.TestSeries })
}

// SeriesTests lists a series' tests in the order they were asked for.
func (s *Store) SeriesTests(ctx context.Context, w model.Website, series string) ([]model.SeriesTest, error) {
	return withPrefix(ctx, s, websitePK(w.Account, w.ID), seriesTestSKPrefix+series+"#", "series tests",
		func(it seriesTestItem) model.SeriesTest { return it.SeriesTest })
}

// SeriesTest reads one test by its ID.
func (s *Store) SeriesTest(ctx context.Context, w model.Website, id string) (model.SeriesTest, error) {
	_, sk, ok := seriesTestKey(id)
	if !ok {
		return model.SeriesTest{}, fmt.Errorf("test %s: %w", id, model.ErrNotFound)
	}
	var it seriesTestItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), sk, "test "+id, &it)
	return it.SeriesTest, err
}

// StartSeriesTest moves a queued test to testing and counts it as started, in one transaction,
// when the message at hand is its current one: queued is the message's queuing time, which
// must be the test's Queued (when it has one; a zero queued skips the check). It returns the test as it now is: a test that
// had begun or ended already, or that was queued again after this message, is left as it is
// (a redelivered or superseded audit message), and the caller tells by its status and Queued.
func (s *Store) StartSeriesTest(ctx context.Context, w model.Website, id string, queued time.Time) (model.SeriesTest, error) {
	series, sk, ok := seriesTestKey(id)
	if !ok {
		return model.SeriesTest{}, fmt.Errorf("test %s: %w", id, model.ErrNotFound)
	}
	pk := websitePK(w.Account, w.ID)
	now := s.now()
	cond := "#s = :queued"
	values := map[string]ddbtypes.AttributeValue{":testing": str(model.RunTesting), ":queued": str(model.RunQueued), ":now": str(now.Format(time.RFC3339Nano))}
	if !queued.IsZero() {
		cond += " AND (attribute_not_exists(Queued) OR Queued = :token)"
		values[":token"] = str(queued.UTC().Format(time.RFC3339Nano))
	}
	reasons, err := s.transact(ctx,
		withAttrs(s.updateAction(key(pk, sk), "SET #s = :testing, Started = :now", cond, values), nil, map[string]string{"#s": "Status"}),
		s.updateAction(key(pk, seriesSK(series)), "ADD Started :one", "attribute_exists(PK)", map[string]ddbtypes.AttributeValue{":one": num(1)}))
	if err != nil && len(reasons) == 0 {
		return model.SeriesTest{}, fmt.Errorf("start test %s: %w", id, err)
	}
	// Started now, or before (or gone): read what it is.
	return s.SeriesTest(ctx, w, id)
}

// FinishSeriesTest records a test's outcome (t.Status completed or failed, with its values or
// error, t.Finished when it ended), counts it on its series and removes its pending marker,
// in one transaction, unless the
// test had ended already: then it changes nothing and reports false, so that a redelivered
// audit counts nothing twice. The test's page, device and start are kept as they were.
func (s *Store) FinishSeriesTest(ctx context.Context, w model.Website, t model.SeriesTest) (bool, error) {
	series, sk, ok := seriesTestKey(t.ID)
	if !ok || series != t.Series {
		return false, fmt.Errorf("test %s: %w", t.ID, model.ErrNotFound)
	}
	if !t.IsFinished() {
		return false, fmt.Errorf("test %s: status %q is no outcome", t.ID, t.Status)
	}
	finished := s.now()
	if t.Finished != nil {
		finished = *t.Finished
	}
	set := map[string]any{"Status": t.Status, "Finished": finished, "Opportunities": t.Opportunities}
	if t.Error != "" {
		set["Error"] = t.Error
	}
	if len(t.Metrics) > 0 {
		set["Metrics"] = t.Metrics
	}
	if t.ReportKey != "" {
		set["ReportKey"] = t.ReportKey
	}
	if t.Method != "" {
		set["Method"] = t.Method
	}
	names := map[string]string{}
	values := map[string]ddbtypes.AttributeValue{":queued": str(model.RunQueued), ":testing": str(model.RunTesting)}
	var sets []string
	for name, v := range set {
		av, err := attributevalue.Marshal(v)
		if err != nil {
			return false, err
		}
		names["#"+name], values[":"+name] = name, av
		sets = append(sets, "#"+name+" = :"+name)
	}
	slices.Sort(sets)
	failed := "0"
	if t.Status == model.RunFailed {
		failed = "1"
	}
	pk := websitePK(w.Account, w.ID)
	r, err := s.transact(ctx,
		withAttrs(s.updateAction(key(pk, sk), "SET "+strings.Join(sets, ", "), "#Status IN (:queued, :testing)", values), nil, names),
		s.updateAction(key(pk, seriesSK(series)), "ADD Finished :one, Failed :failed", "attribute_exists(PK)",
			map[string]ddbtypes.AttributeValue{":one": num(1), ":failed": &ddbtypes.AttributeValueMemberN{Value: failed}}),
		s.deleteAction(key(pendingPK, pendingSeriesTestSK(w.Account, w.ID, t.ID)), ""))
	if len(r) > 0 {
		if r[0] == "ConditionalCheckFailed" {
			return false, nil // ended before, or gone with its series
		}
		return false, fmt.Errorf("test %s: series gone: %w", t.ID, model.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("finish test %s: %w", t.ID, err)
	}
	return true, nil
}
