package store_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestPageByID: a page is found by its ID through its pointer, also after its URL changed;
// a page without a pointer (stored before pointers existed) is found by reading the pages and
// gets one; a deleted page is not found.
func TestPageByID(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	pages := []model.Page{{URL: "/", Alias: "Home"}, {URL: "/a", Alias: "A"}, {URL: "/b", Alias: "B"}}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	find := func(id, wantURL string) {
		t.Helper()
		p, err := st.Page(ctx, w, id)
		if err != nil || p.URL != wantURL || p.ID != id {
			t.Errorf("page %s: %+v, %v; want url %s", id, p, err, wantURL)
		}
	}
	find(pages[1].ID, "/a")

	updated := pages[1]
	updated.URL = "/a-moved"
	if err := st.UpdatePage(ctx, w, pages[1], updated); err != nil {
		t.Fatal(err)
	}
	find(pages[1].ID, "/a-moved")

	// No pointer: found the slow way, and the pointer is back.
	pointer := map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "A#acme#W#" + w.ID},
		"SK": &ddbtypes.AttributeValueMemberS{Value: store.PageItemsPrefix(pages[2].ID) + "URL"},
	}
	if _, err := clients.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()), Key: pointer}); err != nil {
		t.Fatal(err)
	}
	find(pages[2].ID, "/b")
	out, err := clients.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table()), Key: pointer, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Errorf("the pointer was not repaired (%v)", err)
	}

	if _, err := st.DeletePage(ctx, w, pages[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Page(ctx, w, pages[0].ID); !model.IsNotFound(err) {
		t.Errorf("deleted page: %v, want not found", err)
	}
	if _, err := st.Page(ctx, w, "nosuchpage"); !model.IsNotFound(err) {
		t.Errorf("unknown page: %v, want not found", err)
	}
}

// newWebsite is a store over the test's own table with one website of account acme.
func newWebsite(t *testing.T) (service.Clients, *store.Store, model.Website) {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	w := model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}
	if err := st.CreateWebsite(context.Background(), &w); err != nil {
		t.Fatal(err)
	}
	return clients, st, w
}
