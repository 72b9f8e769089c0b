package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type searchConsoleItem struct {
	PK   string
	SK   string
	Type string
	model.SearchConsole
}

// PutSearchConsole stores a website's Search Console integration, replacing the one there.
func (s *Store) PutSearchConsole(ctx context.Context, w model.Website, sc model.SearchConsole) error {
	return s.putItem(ctx, searchConsoleItem{PK: websitePK(w.Account, w.ID), SK: integrationSK(model.SearchConsoleKind), Type: "integration", SearchConsole: sc},
		putAny, "search console integration")
}

// SearchConsole returns a website's Search Console integration; ErrNotFound when it has none.
func (s *Store) SearchConsole(ctx context.Context, w model.Website) (model.SearchConsole, error) {
	var it searchConsoleItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), integrationSK(model.SearchConsoleKind), "search console integration", &it)
	return it.SearchConsole, err
}

// DeleteSearchConsole removes a website's Search Console integration; ErrNotFound when it has
// none. The search analytics already collected stay until they age out, unseen: the pages
// show search fields only while the integration exists.
func (s *Store) DeleteSearchConsole(ctx context.Context, w model.Website) error {
	return s.deleteItem(ctx, websitePK(w.Account, w.ID), integrationSK(model.SearchConsoleKind), "search console integration")
}

// RecordSearchConsoleRun records the outcome of a collection with the integration as it was
// when the collection read it (updated is its Updated time): at is when it succeeded, or when
// it failed with errMsg. An integration deleted or replaced meanwhile is left alone, so that
// new credentials never inherit the verdict on old ones.
func (s *Store) RecordSearchConsoleRun(ctx context.Context, w model.Website, updated, at time.Time, errMsg string) error {
	u, err := attributevalue.Marshal(updated)
	if err != nil {
		return err
	}
	t, err := attributevalue.Marshal(at)
	if err != nil {
		return err
	}
	expr := "SET LastCollected = :at, LastError = :none"
	values := map[string]ddbtypes.AttributeValue{":updated": u, ":at": t, ":none": str("")}
	if errMsg != "" {
		expr = "SET LastError = :err, LastErrorAt = :at"
		values = map[string]ddbtypes.AttributeValue{":updated": u, ":at": t, ":err": str(errMsg)}
	}
	err = s.update(ctx, key(websitePK(w.Account, w.ID), integrationSK(model.SearchConsoleKind)), expr,
		"attribute_exists(PK) AND Updated = :updated", values)
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("record search console run: %w", err)
	}
	return nil
}
