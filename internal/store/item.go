package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Budgets and multistep tests are plain items of a website's partition keyed by their ID; these
// functions are their shared create, read, replace and delete.

// getItem reads one item into out; a missing item is ErrNotFound naming what.
func (s *Store) getItem(ctx context.Context, pk, sk, what string, out any) error {
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	if res.Item == nil {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// putItem writes item. With mustExist it replaces an existing item only (ErrNotFound
// otherwise); without, it creates a new one only.
func (s *Store) putItem(ctx context.Context, item any, mustExist bool, what string) error {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	cond := "attribute_not_exists(PK)"
	if mustExist {
		cond = "attribute_exists(PK)"
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: av, ConditionExpression: aws.String(cond),
	})
	if isConditionFailed(err) {
		if mustExist {
			return fmt.Errorf("%s: %w", what, ErrNotFound)
		}
		return fmt.Errorf("%s: id already in use", what)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// deleteItem removes an existing item; a missing one is ErrNotFound.
func (s *Store) deleteItem(ctx context.Context, pk, sk, what string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}
