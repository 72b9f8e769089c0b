package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
)

// dataSettingsSK holds a website's data settings (exports, retention) under its partition, so
// that a purge of the website removes them.
const dataSettingsSK = "DATA#SET"

type dataSettingsItem struct {
	PK, SK, Type string
	model.DataSettings
}

// DataSettings returns a website's data settings; a website that never set them has the
// defaults (the zero DataSettings).
func (s *Store) DataSettings(ctx context.Context, w model.Website) (model.DataSettings, error) {
	var it dataSettingsItem
	_, err := s.getOr(ctx, websitePK(w.Account, w.ID), dataSettingsSK, "data settings", &it)
	return it.DataSettings, err
}

// PutDataSettings sets a website's exports and retention while the website exists (else
// ErrNotFound), keeping the marks the exports and the retention pass keep with them.
func (s *Store) PutDataSettings(ctx context.Context, w model.Website, exports bool, r model.Retention) error {
	ret, err := attributevalue.Marshal(r)
	if err != nil {
		return err
	}
	return s.setDataSettings(ctx, w, "SET #t = :t, Exports = :e, Retention = :r",
		map[string]ddbtypes.AttributeValue{":e": &ddbtypes.AttributeValueMemberBOOL{Value: exports}, ":r": ret}, "put data settings")
}

// MarkExports records the span of a website's exports: since, the first day one was written
// ("" leaves it), and purgedTo, the day before which they are gone ("" leaves it).
// A website deleted meanwhile takes nothing (ErrNotFound).
func (s *Store) MarkExports(ctx context.Context, w model.Website, since, purgedTo string) error {
	expr := "SET #t = :t"
	values := map[string]ddbtypes.AttributeValue{}
	if since != "" {
		expr += ", ExportsSince = :s"
		values[":s"] = str(since)
	}
	if purgedTo != "" {
		expr += ", ExportsPurgedTo = :p"
		values[":p"] = str(purgedTo)
	}
	return s.setDataSettings(ctx, w, expr, values, "mark exports")
}

// setDataSettings applies an update expression to a website's data settings (#t its Type,
// :t set here) while the website exists (else ErrNotFound); what names it in an error.
func (s *Store) setDataSettings(ctx context.Context, w model.Website, expr string, values map[string]ddbtypes.AttributeValue, what string) error {
	values[":t"] = str("data-settings")
	up := withAttrs(s.updateAction(key(websitePK(w.Account, w.ID), dataSettingsSK), expr, "", values), nil, map[string]string{"#t": "Type"})
	reasons, err := s.transact(ctx, up, s.websiteExists(w))
	if len(reasons) > 0 {
		return fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// DeleteEventsBefore removes a website's events of the days before day (yyyymmdd): a retention
// shorter than the events' expiry at write. It returns how many it removed.
func (s *Store) DeleteEventsBefore(ctx context.Context, w model.Website, day string) (int, error) {
	in := s.betweenQuery(websitePK(w.Account, w.ID), eventSKPrefix, eventSKPrefix+day)
	in.ConsistentRead = nil
	keys, err := s.queryKeys(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("list old events: %w", err)
	}
	n, err := s.writeAll(ctx, deleteRequests(keys))
	if err != nil {
		return n, fmt.Errorf("delete old events: %w", err)
	}
	return n, nil
}
