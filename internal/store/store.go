// Package store keeps openvitals' data in one DynamoDB table.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TTLAttribute is the attribute that holds when an item may go, in epoch seconds: the table's
// time to live is enabled on it (by the stack; the deployment rehearsal checks that it is this
// one). Items of a kept history have it from model.HistoryEnd; struct fields name it in their
// tags ("expires"), which a test checks against it.
const TTLAttribute = "expires"

// Store reads and writes openvitals' items in one DynamoDB table.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

// New returns a Store over the named table.
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: table, now: func() time.Time { return time.Now().UTC() }}
}

// Table is the name of the table the store uses.
func (s *Store) Table() string { return s.table }

// CreateTable creates the table with its key schema and waits until it is active. A table that
// already exists is left as it is.
func (s *Store) CreateTable(ctx context.Context) error {
	_, err := s.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(s.table),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrSK), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: ddbtypes.KeyTypeRange},
		},
	})
	var inUse *ddbtypes.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", s.table, err)
	}
	w := dynamodb.NewTableExistsWaiter(s.db)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)}, time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", s.table, err)
	}
	return nil
}

// DeleteTable removes the table; tests use it to clean up after themselves.
func (s *Store) DeleteTable(ctx context.Context) error {
	_, err := s.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
	return err
}

// key builds the primary key attribute map of an item.
func key(pk, sk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		attrPK: &ddbtypes.AttributeValueMemberS{Value: pk},
		attrSK: &ddbtypes.AttributeValueMemberS{Value: sk},
	}
}

func str(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }

// cancellationReasons returns the per-action reason codes of a cancelled transaction, or nil
// when err is not a cancelled transaction.
func cancellationReasons(err error) []string {
	var tc *ddbtypes.TransactionCanceledException
	if !errors.As(err, &tc) {
		return nil
	}
	codes := make([]string, len(tc.CancellationReasons))
	for i, r := range tc.CancellationReasons {
		codes[i] = aws.ToString(r.Code)
	}
	return codes
}

func isConditionFailed(err error) bool {
	var cf *ddbtypes.ConditionalCheckFailedException
	return errors.As(err, &cf)
}
