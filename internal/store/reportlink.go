package store

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

const skReportLink = "REPORTLINK"

func reportLinkPK(tokenHash string) string { return "REPORTLINK#" + tokenHash }

type reportLinkItem struct {
	PK, SK, Type     string
	Account, Website string
	Page             string `dynamodbav:",omitempty"`
	Key              string
	ExpiresAt        time.Time
	// TTL: DynamoDB removes the item some time after it expired.
	TTL int64 `dynamodbav:"expires"`
}

// PutReportLink stores a report link under the hash of its token.
func (s *Store) PutReportLink(ctx context.Context, tokenHash string, l model.ReportLink) error {
	return s.putItem(ctx, reportLinkItem{PK: reportLinkPK(tokenHash), SK: skReportLink, Type: "reportlink",
		Account: l.Account, Website: l.Website, Page: l.Page, Key: l.Key, ExpiresAt: l.Expires.UTC(), TTL: l.Expires.Add(time.Hour).Unix()},
		putAny, "report link")
}

// ReportLinkByHash returns the unexpired report link of a token's hash; an unknown or expired
// one is ErrNotFound (DynamoDB removes expired items late).
func (s *Store) ReportLinkByHash(ctx context.Context, tokenHash string) (model.ReportLink, error) {
	var it reportLinkItem
	err := s.readItem(ctx, reportLinkPK(tokenHash), skReportLink, "report link", false, &it)
	if err != nil && !model.IsNotFound(err) {
		return model.ReportLink{}, err
	}
	if err != nil || !s.now().Before(it.ExpiresAt) {
		return model.ReportLink{}, fmt.Errorf("report link: %w", model.ErrNotFound)
	}
	return model.ReportLink{Account: it.Account, Website: it.Website, Page: it.Page, Key: it.Key, Expires: it.ExpiresAt}, nil
}
