package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// The store's own small generic helpers: entity files read, write and list items through
// them, in the store's terms, rather than through the SDK's requests.

// DynamoDB's limits on key values, in bytes: no item has a longer key, and DynamoDB refuses to
// even look one up.
const (
	maxPKBytes = 2048
	maxSKBytes = 1024
)

// possibleKey tells whether an item can have this key: an identifier from a request may be
// longer than any (a missing item, not a failure).
func possibleKey(pk, sk string) bool { return len(pk) <= maxPKBytes && len(sk) <= maxSKBytes }

// getItem reads one item into out, strongly consistent; a missing item is ErrNotFound naming
// what.
func (s *Store) getItem(ctx context.Context, pk, sk, what string, out any) error {
	return s.readItem(ctx, pk, sk, what, true, out)
}

// readItem reads one item into out as getItem does, consistent or not.
func (s *Store) readItem(ctx context.Context, pk, sk, what string, consistent bool, out any) error {
	if !possibleKey(pk, sk) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk), ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	if res.Item == nil {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// getOr reads one item into out like getItem, but a missing item is no error: found tells.
func (s *Store) getOr(ctx context.Context, pk, sk, what string, out any) (found bool, err error) {
	err = s.getItem(ctx, pk, sk, what, out)
	if model.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// errInUse is a new item's key taken already (see putNew).
var errInUse = errors.New("id already in use")

// A put's condition on the item it writes.
type putCondition int

const (
	// putAny creates the item or replaces it.
	putAny putCondition = iota
	// putNew creates a new item only: an item there already is errInUse.
	putNew
	// putExisting replaces an existing item only: ErrNotFound otherwise.
	putExisting
)

// keyed is a model value stored as an item of its own: its attributes with the item's key
// and type.
type keyed struct {
	pk, sk, typ string
	value       any
}

// attributesOf are the attributes of item: an item struct, a keyed value or the attributes.
func attributesOf(item any) (map[string]ddbtypes.AttributeValue, error) {
	switch it := item.(type) {
	case map[string]ddbtypes.AttributeValue:
		return it, nil
	case keyed:
		av, err := attributevalue.MarshalMap(it.value)
		if err != nil {
			return nil, err
		}
		av[attrPK], av[attrSK], av["Type"] = str(it.pk), str(it.sk), str(it.typ)
		return av, nil
	}
	return attributevalue.MarshalMap(item)
}

// putItem writes item (see attributesOf) under cond.
func (s *Store) putItem(ctx context.Context, item any, cond putCondition, what string) error {
	av, err := attributesOf(item)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}
	switch cond {
	case putNew:
		in.ConditionExpression = aws.String("attribute_not_exists(PK)")
	case putExisting:
		in.ConditionExpression = aws.String("attribute_exists(PK)")
	}
	_, err = s.db.PutItem(ctx, in)
	if isConditionFailed(err) {
		if cond == putExisting {
			return fmt.Errorf("%s: %w", what, model.ErrNotFound)
		}
		return fmt.Errorf("%s: %w", what, errInUse)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

// deleteItem removes an existing item; a missing one is ErrNotFound.
func (s *Store) deleteItem(ctx context.Context, pk, sk, what string) error {
	if !possibleKey(pk, sk) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(pk, sk),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("%s: %w", what, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}

// dropItem removes an item if it is there.
func (s *Store) dropItem(ctx context.Context, pk, sk, what string) error {
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key(pk, sk)}); err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}

// update applies an update expression to an item, under cond when it is not "" (a failed
// condition is returned as DynamoDB's error: isConditionFailed tells).
func (s *Store) update(ctx context.Context, k map[string]ddbtypes.AttributeValue, expr, cond string, values map[string]ddbtypes.AttributeValue) error {
	_, err := s.updated(ctx, k, itemUpdate{expr: expr, cond: cond, values: values})
	return err
}

// itemUpdate is an update expression on one item: its condition ("": none), the values and
// the names (#name) they use, and which of the item's attributes DynamoDB returns (returns),
// also when the condition fails (returnsOnFailure: the item as it was).
type itemUpdate struct {
	expr, cond       string
	values           map[string]ddbtypes.AttributeValue
	names            map[string]string
	returns          ddbtypes.ReturnValue
	returnsOnFailure bool
}

// updated applies u to the item of k and returns the attributes u.returns names. A failed
// condition is DynamoDB's error (isConditionFailed tells), with the item when
// u.returnsOnFailure.
func (s *Store) updated(ctx context.Context, k map[string]ddbtypes.AttributeValue, u itemUpdate) (map[string]ddbtypes.AttributeValue, error) {
	in := &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: k, UpdateExpression: aws.String(u.expr),
		ExpressionAttributeValues: u.values, ExpressionAttributeNames: u.names, ReturnValues: u.returns,
	}
	if u.cond != "" {
		in.ConditionExpression = aws.String(u.cond)
	}
	if u.returnsOnFailure {
		in.ReturnValuesOnConditionCheckFailure = ddbtypes.ReturnValuesOnConditionCheckFailureAllOld
	}
	out, err := s.db.UpdateItem(ctx, in)
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// transact applies actions in one transaction. A cancelled one gives each action's reason
// ("ConditionalCheckFailed", "None", ...) in their order.
func (s *Store) transact(ctx context.Context, actions ...ddbtypes.TransactWriteItem) ([]string, error) {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	return cancellationReasons(err), err
}

// putAction puts an item (its attributes) in a transaction, under cond when it is not "".
func (s *Store) putAction(item map[string]ddbtypes.AttributeValue, cond string) ddbtypes.TransactWriteItem {
	put := &ddbtypes.Put{TableName: aws.String(s.table), Item: item}
	if cond != "" {
		put.ConditionExpression = aws.String(cond)
	}
	return ddbtypes.TransactWriteItem{Put: put}
}

// deleteAction deletes the item of k in a transaction, under cond when it is not "".
func (s *Store) deleteAction(k map[string]ddbtypes.AttributeValue, cond string) ddbtypes.TransactWriteItem {
	del := &ddbtypes.Delete{TableName: aws.String(s.table), Key: k}
	if cond != "" {
		del.ConditionExpression = aws.String(cond)
	}
	return ddbtypes.TransactWriteItem{Delete: del}
}

// updateAction applies an update expression to the item of k in a transaction, under cond
// when it is not "".
func (s *Store) updateAction(k map[string]ddbtypes.AttributeValue, expr, cond string, values map[string]ddbtypes.AttributeValue) ddbtypes.TransactWriteItem {
	up := &ddbtypes.Update{TableName: aws.String(s.table), Key: k, UpdateExpression: aws.String(expr), ExpressionAttributeValues: values}
	if cond != "" {
		up.ConditionExpression = aws.String(cond)
	}
	return ddbtypes.TransactWriteItem{Update: up}
}

// versionedPut puts an item (its attributes) in a transaction if the stored one is still at
// version (counted from 1 by its Version attribute); at version 0, if first holds (none
// stored yet, or one stored before versions).
func (s *Store) versionedPut(item map[string]ddbtypes.AttributeValue, version int, first string) ddbtypes.TransactWriteItem {
	if version == 0 {
		return s.putAction(item, first)
	}
	return withAttrs(s.putAction(item, "Version = :v"), map[string]ddbtypes.AttributeValue{":v": num(version)}, nil)
}

// check holds a transaction to cond holding on the item of k.
func (s *Store) check(k map[string]ddbtypes.AttributeValue, cond string) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{
		TableName: aws.String(s.table), Key: k, ConditionExpression: aws.String(cond),
	}}
}

// existsCheck holds a transaction to the item of k existing.
func (s *Store) existsCheck(k map[string]ddbtypes.AttributeValue) ddbtypes.TransactWriteItem {
	return s.check(k, "attribute_exists(PK)")
}

// withAttrs gives a transaction's action the values and the names (#name) its expressions
// use, those that are not nil.
func withAttrs(a ddbtypes.TransactWriteItem, values map[string]ddbtypes.AttributeValue, names map[string]string) ddbtypes.TransactWriteItem {
	set := func(v *map[string]ddbtypes.AttributeValue, n *map[string]string) {
		if values != nil {
			*v = values
		}
		if names != nil {
			*n = names
		}
	}
	switch {
	case a.Put != nil:
		set(&a.Put.ExpressionAttributeValues, &a.Put.ExpressionAttributeNames)
	case a.Delete != nil:
		set(&a.Delete.ExpressionAttributeValues, &a.Delete.ExpressionAttributeNames)
	case a.Update != nil:
		set(&a.Update.ExpressionAttributeValues, &a.Update.ExpressionAttributeNames)
	case a.ConditionCheck != nil:
		set(&a.ConditionCheck.ExpressionAttributeValues, &a.ConditionCheck.ExpressionAttributeNames)
	}
	return a
}

// eachPage runs a query page by page, handing each page's items to each until it says it has
// enough or no page is left.
func (s *Store) eachPage(ctx context.Context, in *dynamodb.QueryInput, each func(items []map[string]ddbtypes.AttributeValue) (enough bool, err error)) error {
	for p := dynamodb.NewQueryPaginator(s.db, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		if enough, err := each(page.Items); err != nil || enough {
			return err
		}
	}
	return nil
}

// query reads the items a query selects, decoded as I, in the query's order: all of them
// with want 0, else pages until it holds at least want (and maybe more) or none are left.
func query[I any](ctx context.Context, s *Store, in *dynamodb.QueryInput, want int) ([]I, error) {
	var out []I
	err := s.eachPage(ctx, in, func(items []map[string]ddbtypes.AttributeValue) (bool, error) {
		var got []I
		if err := attributevalue.UnmarshalListOfMaps(items, &got); err != nil {
			return false, fmt.Errorf("decode: %w", err)
		}
		out = append(out, got...)
		return want > 0 && len(out) >= want, nil
	})
	return out, err
}

// queryKeys reads the keys of the items a query selects.
func (s *Store) queryKeys(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]ddbtypes.AttributeValue, error) {
	in.ProjectionExpression = aws.String("PK, SK")
	var keys []map[string]ddbtypes.AttributeValue
	err := s.eachPage(ctx, in, func(items []map[string]ddbtypes.AttributeValue) (bool, error) {
		keys = append(keys, items...)
		return false, nil
	})
	return keys, err
}

// betweenQuery selects the items of a partition whose sort key lies between lo and hi
// (inclusive), in key order.
func (s *Store) betweenQuery(pk, lo, hi string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":pk": str(pk), ":lo": str(lo), ":hi": str(hi),
		},
		ConsistentRead: aws.Bool(true),
	}
}

// prefixQuery selects the items of a partition whose sort key starts with prefix; an empty
// prefix selects the whole partition (DynamoDB refuses begins_with with an empty string).
func prefixQuery(table, pk, prefix string, consistent bool) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":pk": str(pk)},
		ConsistentRead:            aws.Bool(consistent),
	}
	if prefix != "" {
		in.KeyConditionExpression = aws.String("PK = :pk AND begins_with(SK, :prefix)")
		in.ExpressionAttributeValues[":prefix"] = str(prefix)
	}
	return in
}

// between reads every item of a partition whose sort key lies between lo and hi (inclusive),
// in key order, each the model value of its stored item I (of).
func between[I, T any](ctx context.Context, s *Store, pk, lo, hi, what string, of func(I) T) ([]T, error) {
	items, err := query[I](ctx, s, s.betweenQuery(pk, lo, hi), 0)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", what, err)
	}
	return values(items, of), nil
}

// withPrefix reads every item of a partition whose sort key starts with prefix, in key order,
// each the model value of its stored item I (of).
func withPrefix[I, T any](ctx context.Context, s *Store, pk, prefix, what string, of func(I) T) ([]T, error) {
	items, err := query[I](ctx, s, prefixQuery(s.table, pk, prefix, true), 0)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return values(items, of), nil
}

// byTime orders values by the time at gives them, oldest first (newest first when newest),
// keeping the order of those of one time.
func byTime[T any](values []T, at func(T) time.Time, newest bool) {
	slices.SortStableFunc(values, func(a, b T) int {
		if newest {
			return at(b).Compare(at(a))
		}
		return at(a).Compare(at(b))
	})
}

// values are the model values of stored items.
func values[I, T any](items []I, of func(I) T) []T {
	out := make([]T, len(items))
	for i, it := range items {
		out[i] = of(it)
	}
	return out
}

// getAll reads items by key (see batchGet), decoded as I, in no particular order; a missing
// item is left out.
func getAll[I any](ctx context.Context, s *Store, keys []map[string]ddbtypes.AttributeValue, consistent bool, what string) ([]I, error) {
	raw, err := s.batchGet(ctx, keys, consistent)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	var items []I
	if err := attributevalue.UnmarshalListOfMaps(raw, &items); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return items, nil
}

// newestFirst selects the items of a partition whose sort key lies between lo and hi
// (inclusive), newest (highest key) first, for a list window: at most up to before, a sort key
// that is the previous window's last item (skipped), when before is not "".
func (s *Store) newestFirst(pk, lo, hi, before string) *dynamodb.QueryInput {
	if before != "" && before < hi {
		hi = before
	}
	in := s.betweenQuery(pk, lo, hi)
	in.ScanIndexForward = aws.Bool(false)
	return in
}

// window runs a newestFirst query until it holds more than limit items (0: all of them),
// leaving out the item whose sort key is skip, and tells whether more remain. item turns a
// decoded item into its value and gives its sort key.
func window[I, T any](ctx context.Context, s *Store, in *dynamodb.QueryInput, skip string, limit int, what string, item func(I) (string, T)) ([]T, bool, error) {
	var out []T
	err := s.eachPage(ctx, in, func(page []map[string]ddbtypes.AttributeValue) (bool, error) {
		var items []I
		if err := attributevalue.UnmarshalListOfMaps(page, &items); err != nil {
			return false, fmt.Errorf("decode %s: %w", what, err)
		}
		for _, it := range items {
			if sk, v := item(it); sk != skip {
				out = append(out, v)
			}
		}
		return limit > 0 && len(out) > limit, nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", what, err)
	}
	more := false
	if limit > 0 && len(out) > limit {
		out, more = out[:limit], true
	}
	return out, more, nil
}

// batchGet reads items by key, 100 to a request, retrying the keys DynamoDB leaves
// unprocessed.
func (s *Store) batchGet(ctx context.Context, keys []map[string]ddbtypes.AttributeValue, consistent bool) ([]map[string]ddbtypes.AttributeValue, error) {
	var out []map[string]ddbtypes.AttributeValue
	for start := 0; start < len(keys); start += 100 {
		items, err := s.batchGetPage(ctx, keys[start:min(start+100, len(keys))], consistent)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// batchGetPage reads up to 100 keys (one BatchGetItem and its retries).
func (s *Store) batchGetPage(ctx context.Context, keys []map[string]ddbtypes.AttributeValue, consistent bool) ([]map[string]ddbtypes.AttributeValue, error) {
	var out []map[string]ddbtypes.AttributeValue
	pending := map[string]ddbtypes.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}
	for attempt := 0; len(pending) > 0 && len(pending[s.table].Keys) > 0; attempt++ {
		if attempt > 0 {
			if attempt > 8 {
				return nil, fmt.Errorf("batch get: %d keys still unprocessed", len(pending[s.table].Keys))
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Responses[s.table]...)
		pending = res.UnprocessedKeys
	}
	return out, nil
}

// batchWrite sends one batch and retries its unprocessed requests with a growing pause.
func (s *Store) batchWrite(ctx context.Context, reqs []ddbtypes.WriteRequest) error {
	pending := map[string][]ddbtypes.WriteRequest{s.table: reqs}
	for attempt := 0; len(pending[s.table]) > 0; attempt++ {
		if attempt > 0 {
			if attempt > 8 {
				return fmt.Errorf("batch write: %d requests still unprocessed", len(pending[s.table]))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		}
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return fmt.Errorf("batch write: %w", err)
		}
		pending = out.UnprocessedItems
	}
	return nil
}

// writeAll sends write requests 25 to a batch (see batchWrite); it returns how many were sent
// before a failure.
func (s *Store) writeAll(ctx context.Context, reqs []ddbtypes.WriteRequest) (int, error) {
	for start := 0; start < len(reqs); start += 25 {
		if err := s.batchWrite(ctx, reqs[start:min(start+25, len(reqs))]); err != nil {
			return start, err
		}
	}
	return len(reqs), nil
}

// putAll writes items (item structs), creating or replacing them, 25 to a batch; what names
// them in an error.
func putAll[I any](ctx context.Context, s *Store, items []I, what string) error {
	reqs := make([]ddbtypes.WriteRequest, len(items))
	for i, it := range items {
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			return fmt.Errorf("%s: encode: %w", what, err)
		}
		reqs[i] = ddbtypes.WriteRequest{PutRequest: &ddbtypes.PutRequest{Item: av}}
	}
	if _, err := s.writeAll(ctx, reqs); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// keysOf are the keys of the items of a partition that sk keys by each of ids.
func keysOf[T any](pk string, ids []T, sk func(T) string) []map[string]ddbtypes.AttributeValue {
	keys := make([]map[string]ddbtypes.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(pk, sk(id))
	}
	return keys
}

// deleteRequests are the write requests that delete the items of keys.
func deleteRequests(keys []map[string]ddbtypes.AttributeValue) []ddbtypes.WriteRequest {
	reqs := make([]ddbtypes.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = ddbtypes.WriteRequest{DeleteRequest: &ddbtypes.DeleteRequest{Key: k}}
	}
	return reqs
}

// ofDay reads the items of the given pages on the given devices that sk keys (a day's), in
// one BatchGetItem per 100 page-devices, each the model value of its stored item I (of); an
// item missing is left out.
func ofDay[I, T any](ctx context.Context, s *Store, w model.Website, pages []model.Page, devices []string, sk func(page, device string) string, what string, of func(I) T) ([]T, error) {
	keys := make([]map[string]ddbtypes.AttributeValue, 0, len(pages)*len(devices))
	for _, p := range pages {
		for _, d := range devices {
			keys = append(keys, key(websitePK(w.Account, w.ID), sk(p.ID, d)))
		}
	}
	items, err := getAll[I](ctx, s, keys, false, what)
	if err != nil {
		return nil, err
	}
	return values(items, of), nil
}
