package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type labItem struct {
	PK   string
	SK   string
	Type string
	model.LabResult
	// Expires is the end of the result's day in the history (model.HistoryEnd), for the
	// table's TTL.
	Expires int64 `dynamodbav:"expires"`
}

func (it labItem) result() model.LabResult { return it.LabResult }

// opportunityItem is an opportunity of a website: the first day it was seen and its latest
// texts, so that the website's list reads them in one query (items written before the texts
// have none until the next result with it).
type opportunityItem struct {
	PK        string
	SK        string
	Type      string
	ID        string
	FirstSeen string // yyyymmdd
	model.OpportunityText
}

// PutLabResult stores a lab result of page, replacing the same day's, clears the page's last
// error on that device, marks the page's summary stale, and records the first day each of its opportunities was seen on the
// website. The result and the error are written only while the website and the page exist
// (ErrNotFound otherwise), so that an audit finishing after a deletion leaves nothing behind
// its purge; an opportunity recorded in the moment between is removed by the purge's last pass.
func (s *Store) PutLabResult(ctx context.Context, w model.Website, page model.Page, r model.LabResult) error {
	pk := websitePK(w.Account, w.ID)
	r.Page = page.ID
	item, err := attributevalue.MarshalMap(labItem{PK: pk, SK: labSK(page.ID, r.Device, r.Day), Type: "lab", LabResult: r,
		Expires: model.HistoryEnd(r.Day).Unix()})
	if err != nil {
		return err
	}
	err = s.whilePageExists(ctx, w, page, "lab result", s.putAction(item, ""), s.deleteAction(key(pk, labErrorSK(page.ID, r.Device)), ""))
	if err != nil {
		return err
	}
	if err := s.staleSummary(ctx, w, page); err != nil {
		return err
	}
	for _, o := range r.Opportunities {
		if err := s.recordOpportunity(ctx, pk, r.Day, o); err != nil {
			return err
		}
	}
	return nil
}

// recordOpportunity writes an opportunity's latest texts on the website and the first day it
// was seen: the day of the first result with it, or an earlier one stored later.
func (s *Store) recordOpportunity(ctx context.Context, pk, day string, o model.Opportunity) error {
	texts := map[string]ddbtypes.AttributeValue{
		":type": str("opportunity"), ":id": str(o.ID), ":day": str(day),
		":title": str(o.Title), ":category": str(o.Category), ":description": str(o.Description),
	}
	was, err := s.updated(ctx, key(pk, opportunitySK(o.ID)), itemUpdate{
		expr:   "SET #type = :type, ID = :id, Title = :title, Category = :category, Description = :description, FirstSeen = if_not_exists(FirstSeen, :day)",
		values: texts, names: map[string]string{"#type": "Type"}, returns: ddbtypes.ReturnValueUpdatedOld})
	if err != nil {
		return fmt.Errorf("record opportunity: %w", err)
	}
	var old struct{ FirstSeen string }
	if err := attributevalue.UnmarshalMap(was, &old); err != nil || old.FirstSeen == "" || old.FirstSeen <= day {
		return err
	}
	err = s.update(ctx, key(pk, opportunitySK(o.ID)), "SET FirstSeen = :day", "FirstSeen > :day", map[string]ddbtypes.AttributeValue{":day": str(day)})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("record opportunity: %w", err)
	}
	return nil
}

// whilePageExists applies writes in one transaction with checks that the website and the page
// (by its URL and ID) still exist; if either is gone it writes nothing and returns ErrNotFound.
func (s *Store) whilePageExists(ctx context.Context, w model.Website, page model.Page, what string, writes ...ddbtypes.TransactWriteItem) error {
	checks := []ddbtypes.TransactWriteItem{s.websiteExists(w), s.pageExistsCheck(w, page)}
	r, err := s.transact(ctx, append(checks, writes...)...)
	if len(r) >= 2 && (r[0] == "ConditionalCheckFailed" || r[1] == "ConditionalCheckFailed") {
		return fmt.Errorf("%s of page %s: website or page deleted: %w", what, page.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// LabResults returns a page's results on one device from day from to day to (yyyymmdd,
// inclusive), oldest first.
func (s *Store) LabResults(ctx context.Context, w model.Website, page, device, from, to string) ([]model.LabResult, error) {
	return between(ctx, s, websitePK(w.Account, w.ID), labSK(page, device, from), labSK(page, device, to), "lab results", labItem.result)
}

// Opportunities maps each opportunity ever seen on a website to the first day it was seen and
// its latest texts.
func (s *Store) Opportunities(ctx context.Context, w model.Website) (map[string]model.SeenOpportunity, error) {
	items, err := withPrefix(ctx, s, websitePK(w.Account, w.ID), opportunitySK(""), "opportunities", func(it opportunityItem) opportunityItem { return it })
	if err != nil {
		return nil, err
	}
	seen := make(map[string]model.SeenOpportunity, len(items))
	for _, it := range items {
		seen[it.ID] = model.SeenOpportunity{FirstSeen: it.FirstSeen, OpportunityText: it.OpportunityText}
	}
	return seen, nil
}

type labErrorItem struct {
	PK   string
	SK   string
	Type string
	model.LabError
}

// PutLabError records the latest failure of a page's audit on one device, while the website
// and the page exist (ErrNotFound otherwise).
func (s *Store) PutLabError(ctx context.Context, w model.Website, page model.Page, device string, e model.LabError) error {
	item, err := attributevalue.MarshalMap(labErrorItem{PK: websitePK(w.Account, w.ID), SK: labErrorSK(page.ID, device), Type: "laberror", LabError: e})
	if err != nil {
		return err
	}
	return s.whilePageExists(ctx, w, page, "lab error", s.putAction(item, ""))
}

// LastLabError returns the failure recorded since a page's last successful audit on a device.
func (s *Store) LastLabError(ctx context.Context, w model.Website, page, device string) (model.LabError, error) {
	var it labErrorItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), labErrorSK(page, device), "lab error", &it)
	return it.LabError, err
}

// LabResultsOfDay returns the lab results of the given pages on the given devices for one UTC
// day (yyyymmdd), in one BatchGetItem per 100 page-devices; a page not audited that day on a
// device has none.
func (s *Store) LabResultsOfDay(ctx context.Context, w model.Website, pages []model.Page, devices []string, day string) ([]model.LabResult, error) {
	return ofDay(ctx, s, w, pages, devices, func(page, device string) string { return labSK(page, device, day) }, "lab results of "+day, labItem.result)
}
