package store_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// The store tests' shared fixture: a store over the test's own table with a website, its
// pages and a budget.

// newWebsite is a store over the test's own table with one website of account acme.
func newWebsite(t *testing.T) (awsclient.Clients, *store.Store, model.Website) {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	return clients, st, websiteIn(t, st)
}

// websiteIn stores a website of account acme.
func websiteIn(t *testing.T, st *store.Store) model.Website {
	t.Helper()
	w := model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}
	if err := st.CreateWebsite(context.Background(), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// addPages stores pages in w and returns them with their IDs.
func addPages(t *testing.T, st *store.Store, w model.Website, pages []model.Page) []model.Page {
	t.Helper()
	if err := st.CreatePages(context.Background(), w, pages); err != nil {
		t.Fatal(err)
	}
	return pages
}

// addBudget stores an LCP budget of every device in w.
func addBudget(t *testing.T, st *store.Store, w model.Website) model.Budget {
	t.Helper()
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}
	if err := st.CreateBudget(context.Background(), w, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

type storedItem struct {
	sk      string
	expires int64
}

// itemsOf scans the table for a website's partition: each item's sort key and TTL attribute.
func itemsOf(t *testing.T, clients awsclient.Clients, st *store.Store, w model.Website) []storedItem {
	t.Helper()
	var out []storedItem
	p := dynamodb.NewScanPaginator(clients.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(st.Table()), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it["PK"].(*ddbtypes.AttributeValueMemberS).Value != "A#"+w.Account+"#W#"+w.ID {
				continue
			}
			item := storedItem{sk: it["SK"].(*ddbtypes.AttributeValueMemberS).Value}
			if n, ok := it[store.TTLAttribute].(*ddbtypes.AttributeValueMemberN); ok {
				item.expires, _ = strconv.ParseInt(n.Value, 10, 64)
			}
			out = append(out, item)
		}
	}
	return out
}
