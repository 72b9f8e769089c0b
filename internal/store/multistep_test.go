package store_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
)

// TestStepsReadAsList: a multistep test stored without its steps (as early items were) reads
// back with an empty list of steps, from Test and from Tests, as the API has always shown it.
func TestStepsReadAsList(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	test := model.Test{Alias: "checkout", Device: "desktop"}
	if err := st.CreateTest(ctx, w, &test); err != nil {
		t.Fatal(err)
	}
	_, err := clients.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()),
		Key: map[string]ddbtypes.AttributeValue{
			"PK": &ddbtypes.AttributeValueMemberS{Value: "A#" + w.Account + "#W#" + w.ID},
			"SK": &ddbtypes.AttributeValueMemberS{Value: "TEST#" + test.ID}},
		UpdateExpression:    aws.String("REMOVE Steps"),
		ConditionExpression: aws.String("attribute_exists(Steps)")})
	if err != nil {
		t.Fatalf("remove the stored steps: %v", err)
	}
	got, err := st.Test(ctx, w, test.ID)
	if err != nil || got.Steps == nil {
		t.Fatalf("Test = %+v, %v; want an empty list of steps", got, err)
	}
	all, err := st.Tests(ctx, w)
	if err != nil || len(all) != 1 || all[0].Steps == nil {
		t.Fatalf("Tests = %+v, %v; want one test with an empty list of steps", all, err)
	}
	if _, err := st.Test(ctx, w, "missing"); !model.IsNotFound(err) {
		t.Fatalf("a missing test: %v, want not found", err)
	}
}
