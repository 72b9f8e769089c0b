package store

import (
	"context"
	"errors"

	"github.com/openvitals/openvitals/internal/model"
)

type uxHistoryItem struct {
	PK   string
	SK   string
	Type string
	model.UXHistory
	Expires int64 `dynamodbav:"expires"` // model.HistoryEnd of its last period, for the table's TTL
}

// PutUXHistory stores the dataset's history of a page (or, with h.Page empty, of the website's
// origin) on a device, replacing the one stored: one item of up to model.UXHistoryPeriods
// periods (about 15 KB), kept as long as the history of its newest period's last day.
func (s *Store) PutUXHistory(ctx context.Context, w model.Website, h model.UXHistory) error {
	last := model.Day(h.Fetched)
	if n := len(h.Periods); n > 0 {
		last = h.Periods[n-1].Last
	}
	return s.putItem(ctx, uxHistoryItem{PK: websitePK(w.Account, w.ID), SK: uxHistorySK(h.Page, h.Device), Type: "uxhistory",
		UXHistory: h, Expires: model.HistoryEnd(last).Unix()}, putAny, "ux history")
}

// UXHistory reads the dataset's history of a page (page "": the origin's) on a device; it is
// a not-found error when none was fetched yet.
func (s *Store) UXHistory(ctx context.Context, w model.Website, page, device string) (model.UXHistory, error) {
	var it uxHistoryItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), uxHistorySK(page, device), "ux history", &it)
	return it.UXHistory, err
}

type verdictItem struct {
	PK   string
	SK   string
	Type string
	model.Verdict
	Expires int64 `dynamodbav:"expires"` // as long as its incident's history
}

// PutVerdict stores an incident's field verdict unless one is stored already, and returns the
// one that stands (v, or the earlier one): a verdict is decided once.
func (s *Store) PutVerdict(ctx context.Context, w model.Website, firstBad string, v model.Verdict) (model.Verdict, bool, error) {
	err := s.putItem(ctx, verdictItem{PK: websitePK(w.Account, w.ID), SK: verdictSK(v.Incident), Type: "verdict", Verdict: v,
		Expires: model.HistoryEnd(firstBad).Unix()}, putNew, "verdict")
	if errors.Is(err, errInUse) {
		var it verdictItem
		err := s.getItem(ctx, websitePK(w.Account, w.ID), verdictSK(v.Incident), "verdict", &it)
		return it.Verdict, false, err
	}
	if err != nil {
		return v, false, err
	}
	return v, true, nil
}

// Verdicts returns a website's field verdicts by incident ID.
func (s *Store) Verdicts(ctx context.Context, w model.Website) (map[string]model.Verdict, error) {
	verdicts, err := between(ctx, s, websitePK(w.Account, w.ID), verdictSK(""), verdictSK("\uffff"), "verdicts",
		func(it verdictItem) model.Verdict { return it.Verdict })
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.Verdict, len(verdicts))
	for _, v := range verdicts {
		out[v.Incident] = v
	}
	return out, nil
}
