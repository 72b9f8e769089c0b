package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type accountItem struct {
	PK      string
	SK      string
	Type    string
	ID      string
	Created time.Time
}

type apiKeyItem struct {
	PK      string
	SK      string
	Type    string
	Account string
	Role    model.Role
	Name    string
	Created time.Time
}

// AccountExists tells whether an account was recorded.
func (s *Store) AccountExists(ctx context.Context, account string) (bool, error) {
	var it accountItem
	err := s.getItem(ctx, accountPK(account), skAccount, "account "+account, &it)
	if model.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// EnsureAccount records an account, keeping the original creation time if it exists already.
func (s *Store) EnsureAccount(ctx context.Context, account string) error {
	item, err := attributevalue.MarshalMap(accountItem{
		PK: accountPK(account), SK: skAccount, Type: "account", ID: account, Created: s.now(),
	})
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("ensure account %s: %w", account, err)
	}
	return nil
}

// PutAPIKey stores a key for an account (which must exist), replacing any key with the same hash.
func (s *Store) PutAPIKey(ctx context.Context, k model.APIKey) error {
	if k.Created.IsZero() {
		k.Created = s.now()
	}
	item, err := attributevalue.MarshalMap(apiKeyItem{
		PK: apiKeyPK(k.Hash), SK: skAPIKey, Type: "apikey",
		Account: k.Account, Role: k.Role, Name: k.Name, Created: k.Created,
	})
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems: []ddbtypes.TransactWriteItem{
			{ConditionCheck: &ddbtypes.ConditionCheck{
				TableName:           aws.String(s.table),
				Key:                 key(accountPK(k.Account), skAccount),
				ConditionExpression: aws.String("attribute_exists(PK)"),
			}},
			{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: item}},
		},
	})
	if r := cancellationReasons(err); len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("account %s: %w", k.Account, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("put api key: %w", err)
	}
	return nil
}

// APIKeyByHash finds a key by the hash of its secret.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (model.APIKey, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       key(apiKeyPK(hash), skAPIKey),
	})
	if err != nil {
		return model.APIKey{}, fmt.Errorf("get api key: %w", err)
	}
	if out.Item == nil {
		return model.APIKey{}, fmt.Errorf("api key: %w", model.ErrNotFound)
	}
	var it apiKeyItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return model.APIKey{}, fmt.Errorf("decode api key: %w", err)
	}
	return model.APIKey{Hash: hash, Account: it.Account, Role: it.Role, Name: it.Name, Created: it.Created}, nil
}

// DeleteAPIKey revokes a key by the hash of its secret.
func (s *Store) DeleteAPIKey(ctx context.Context, hash string) error {
	return s.deleteItem(ctx, apiKeyPK(hash), skAPIKey, "api key")
}
