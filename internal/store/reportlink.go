package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	item, err := attributevalue.MarshalMap(reportLinkItem{PK: reportLinkPK(tokenHash), SK: skReportLink, Type: "reportlink",
		Account: l.Account, Website: l.Website, Page: l.Page, Key: l.Key, ExpiresAt: l.Expires.UTC(), TTL: l.Expires.Add(time.Hour).Unix()})
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("put report link: %w", err)
	}
	return nil
}

// ReportLinkByHash returns the unexpired report link of a token's hash; an unknown or expired
// one is ErrNotFound (DynamoDB removes expired items late).
func (s *Store) ReportLinkByHash(ctx context.Context, tokenHash string) (model.ReportLink, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(reportLinkPK(tokenHash), skReportLink)})
	if err != nil {
		return model.ReportLink{}, fmt.Errorf("get report link: %w", err)
	}
	var it reportLinkItem
	if out.Item != nil {
		if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
			return model.ReportLink{}, fmt.Errorf("decode report link: %w", err)
		}
	}
	if out.Item == nil || !s.now().Before(it.ExpiresAt) {
		return model.ReportLink{}, fmt.Errorf("report link: %w", model.ErrNotFound)
	}
	return model.ReportLink{Account: it.Account, Website: it.Website, Page: it.Page, Key: it.Key, Expires: it.ExpiresAt}, nil
}
