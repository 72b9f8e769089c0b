package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	err := s.getItem(ctx, websitePK(w.Account, w.ID), dataSettingsSK, "data settings", &it)
	if errors.Is(err, model.ErrNotFound) {
		return model.DataSettings{}, nil
	}
	return it.DataSettings, err
}

// PutDataSettings sets a website's exports and retention while the website exists (else
// ErrNotFound), keeping the marks the exports and the retention pass keep with them.
func (s *Store) PutDataSettings(ctx context.Context, w model.Website, exports bool, r model.Retention) error {
	ret, err := attributevalue.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Update: &ddbtypes.Update{TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), dataSettingsSK),
			UpdateExpression:          aws.String("SET #t = :t, Exports = :e, Retention = :r"),
			ExpressionAttributeNames:  map[string]string{"#t": "Type"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":t": str("data-settings"), ":e": &ddbtypes.AttributeValueMemberBOOL{Value: exports}, ":r": ret}}},
		s.websiteExists(w),
	}})
	if len(cancellationReasons(err)) > 0 {
		return fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("put data settings: %w", err)
	}
	return nil
}

// MarkExports records the span of a website's exports: since, the first day one was written
// ("" leaves it), and purgedTo, the day before which they are gone ("" leaves it).
// A website deleted meanwhile takes nothing (ErrNotFound).
func (s *Store) MarkExports(ctx context.Context, w model.Website, since, purgedTo string) error {
	expr := "SET #t = :t"
	values := map[string]ddbtypes.AttributeValue{":t": str("data-settings")}
	if since != "" {
		expr += ", ExportsSince = :s"
		values[":s"] = str(since)
	}
	if purgedTo != "" {
		expr += ", ExportsPurgedTo = :p"
		values[":p"] = str(purgedTo)
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Update: &ddbtypes.Update{TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), dataSettingsSK),
			UpdateExpression: aws.String(expr), ExpressionAttributeNames: map[string]string{"#t": "Type"}, ExpressionAttributeValues: values}},
		s.websiteExists(w),
	}})
	if len(cancellationReasons(err)) > 0 {
		return fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("mark exports: %w", err)
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
