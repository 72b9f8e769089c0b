package awstest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/store"
)

// Table is a store's table as DynamoDB holds it, read and written past the store: what a test
// checks the stored format's effects with (no secret at rest, nothing left after a purge), or
// leaves items with as an earlier version did. It reads consistently, and fails the test on
// any error.
type Table struct {
	t    testing.TB
	db   *dynamodb.Client
	name string
}

// TableOf returns st's table, read and written through clients.
func TableOf(t testing.TB, clients awsclient.Clients, st *store.Store) *Table {
	return &Table{t: t, db: clients.DynamoDB, name: st.Table()}
}

// Table returns the env's store's table (see TableOf).
func (e *Env) Table() *Table {
	return TableOf(e.t, e.Clients, e.Store)
}

// WebsitePK is the partition key of a website's own items, spelled here rather than asked of
// the store: a test states the stored format itself, and notices when it changes.
func WebsitePK(account, website string) string { return "A#" + account + "#W#" + website }

// Items returns the items of partition pk whose sort key begins with skPrefix (every one when
// it is empty), decoded; an empty pk reads every partition (a scan).
func (tb *Table) Items(pk, skPrefix string) []map[string]any {
	tb.t.Helper()
	raw := tb.rawItems(pk, skPrefix)
	items := make([]map[string]any, len(raw))
	for i, it := range raw {
		if err := attributevalue.UnmarshalMap(it, &items[i]); err != nil {
			tb.t.Fatal(err)
		}
	}
	return items
}

// Sizes returns the sizes of the items Items returns, as DynamoDB bills them
// (awsmeter.ItemBytes), by their keys ("PK|SK").
func (tb *Table) Sizes(pk, skPrefix string) map[string]int {
	tb.t.Helper()
	sizes := map[string]int{}
	for _, it := range tb.rawItems(pk, skPrefix) {
		sizes[keyOf(it)] = awsmeter.ItemBytes(it)
	}
	return sizes
}

// rawItems returns what Items does, as DynamoDB sends the items.
func (tb *Table) rawItems(pk, skPrefix string) []map[string]ddbtypes.AttributeValue {
	tb.t.Helper()
	values := map[string]ddbtypes.AttributeValue{}
	var onSK *string
	if skPrefix != "" {
		values[":sk"] = &ddbtypes.AttributeValueMemberS{Value: skPrefix}
		onSK = aws.String("begins_with(SK, :sk)")
	}
	var items []map[string]ddbtypes.AttributeValue
	if pk == "" {
		if onSK == nil {
			values = nil // DynamoDB refuses an empty map
		}
		eachPage(tb.t, dynamodb.NewScanPaginator(tb.db, &dynamodb.ScanInput{TableName: aws.String(tb.name), ConsistentRead: aws.Bool(true),
			FilterExpression: onSK, ExpressionAttributeValues: values}),
			func(page *dynamodb.ScanOutput) { items = append(items, page.Items...) })
		return items
	}
	values[":pk"] = &ddbtypes.AttributeValueMemberS{Value: pk}
	onKeys := "PK = :pk"
	if onSK != nil {
		onKeys += " AND " + *onSK
	}
	eachPage(tb.t, dynamodb.NewQueryPaginator(tb.db, &dynamodb.QueryInput{TableName: aws.String(tb.name), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String(onKeys), ExpressionAttributeValues: values}),
		func(page *dynamodb.QueryOutput) { items = append(items, page.Items...) })
	return items
}

// pager is what the SDK's scan and query paginators have in common.
type pager[Page any] interface {
	HasMorePages() bool
	NextPage(context.Context, ...func(*dynamodb.Options)) (Page, error)
}

// eachPage hands every page of p to use, and fails the test on an error.
func eachPage[Page any](t testing.TB, p pager[Page], use func(Page)) {
	t.Helper()
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		use(page)
	}
}

// Keys returns the keys of every item of the table, each as "PK|SK".
func (tb *Table) Keys() []string {
	tb.t.Helper()
	var keys []string
	for _, it := range tb.rawItems("", "") {
		keys = append(keys, keyOf(it))
	}
	return keys
}

// keyOf is item's key as "PK|SK".
func keyOf(item map[string]ddbtypes.AttributeValue) string {
	pk, _ := item["PK"].(*ddbtypes.AttributeValueMemberS)
	sk, _ := item["SK"].(*ddbtypes.AttributeValueMemberS)
	return pk.Value + "|" + sk.Value
}

// Count is how many items the table holds, counted by DynamoDB (no item is sent).
func (tb *Table) Count() int {
	tb.t.Helper()
	n := 0
	eachPage(tb.t, dynamodb.NewScanPaginator(tb.db, &dynamodb.ScanInput{TableName: aws.String(tb.name), Select: ddbtypes.SelectCount, ConsistentRead: aws.Bool(true)}),
		func(page *dynamodb.ScanOutput) { n += int(page.Count) })
	return n
}

// Get returns the item of key pk, sk, decoded; nil when there is none.
func (tb *Table) Get(pk, sk string) map[string]any {
	tb.t.Helper()
	out, err := tb.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(tb.name), ConsistentRead: aws.Bool(true), Key: key(pk, sk)})
	if err != nil {
		tb.t.Fatal(err)
	}
	if out.Item == nil {
		return nil
	}
	var item map[string]any
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		tb.t.Fatal(err)
	}
	return item
}

// Put writes item (its PK and SK among its attributes), replacing any of its key.
func (tb *Table) Put(item map[string]any) {
	tb.t.Helper()
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		tb.t.Fatal(err)
	}
	if _, err := tb.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tb.name), Item: av}); err != nil {
		tb.t.Fatal(err)
	}
}

// Delete deletes the item of key pk, sk (nothing when there is none).
func (tb *Table) Delete(pk, sk string) {
	tb.t.Helper()
	if _, err := tb.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(tb.name), Key: key(pk, sk)}); err != nil {
		tb.t.Fatal(err)
	}
}

// Remove removes attributes from the item of key pk, sk, which must exist (an update of a
// missing key would make an item of its own).
func (tb *Table) Remove(pk, sk string, attributes ...string) {
	tb.t.Helper()
	// By placeholders: an attribute's name may be one of DynamoDB's reserved words.
	refs, names := make([]string, len(attributes)), map[string]string{}
	for i, a := range attributes {
		refs[i] = "#a" + strconv.Itoa(i)
		names[refs[i]] = a
	}
	if _, err := tb.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(tb.name), Key: key(pk, sk),
		UpdateExpression: aws.String("REMOVE " + strings.Join(refs, ", ")), ConditionExpression: aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: names}); err != nil {
		tb.t.Fatal(err)
	}
}

// key is the primary key pk, sk.
func key(pk, sk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: pk}, "SK": &ddbtypes.AttributeValueMemberS{Value: sk}}
}
