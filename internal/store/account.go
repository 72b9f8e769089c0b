package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
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
	return s.getOr(ctx, accountPK(account), skAccount, "account "+account, &it)
}

// EnsureAccount records an account, keeping the original creation time if it exists already.
func (s *Store) EnsureAccount(ctx context.Context, account string) error {
	err := s.putItem(ctx, accountItem{PK: accountPK(account), SK: skAccount, Type: "account", ID: account, Created: s.now()},
		putNew, "account "+account)
	if errors.Is(err, errInUse) {
		return nil
	}
	return err
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
	r, err := s.transact(ctx, s.existsCheck(key(accountPK(k.Account), skAccount)), s.putAction(item, ""))
	if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("account %s: %w", k.Account, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("put api key: %w", err)
	}
	return nil
}

// APIKeyByHash finds a key by the hash of its secret.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (model.APIKey, error) {
	var it apiKeyItem
	if err := s.readItem(ctx, apiKeyPK(hash), skAPIKey, "api key", false, &it); err != nil {
		return model.APIKey{}, err
	}
	return model.APIKey{Hash: hash, Account: it.Account, Role: it.Role, Name: it.Name, Created: it.Created}, nil
}

// DeleteAPIKey revokes a key by the hash of its secret.
func (s *Store) DeleteAPIKey(ctx context.Context, hash string) error {
	return s.deleteItem(ctx, apiKeyPK(hash), skAPIKey, "api key")
}
