package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ReportLink lets whoever holds its token read one stored Lighthouse HTML report until it
// expires: a browser frame cannot send the API key, so the dashboard asks for a link with the
// key and frames the link. Only the token's hash is stored.
type ReportLink struct {
	Account, Website string
	// Page is the page whose report it opens (none in links made before it was recorded).
	Page string
	// Key is the report's object key in the bucket.
	Key     string
	Expires time.Time
}

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
func (s *Store) PutReportLink(ctx context.Context, tokenHash string, l ReportLink) error {
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
func (s *Store) ReportLinkByHash(ctx context.Context, tokenHash string) (ReportLink, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(reportLinkPK(tokenHash), skReportLink)})
	if err != nil {
		return ReportLink{}, fmt.Errorf("get report link: %w", err)
	}
	var it reportLinkItem
	if out.Item != nil {
		if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
			return ReportLink{}, fmt.Errorf("decode report link: %w", err)
		}
	}
	if out.Item == nil || !s.now().Before(it.ExpiresAt) {
		return ReportLink{}, fmt.Errorf("report link: %w", ErrNotFound)
	}
	return ReportLink{Account: it.Account, Website: it.Website, Page: it.Page, Key: it.Key, Expires: it.ExpiresAt}, nil
}
