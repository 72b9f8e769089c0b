package awsmeter_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

func item(sk string, size int) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "p"}, "SK": &ddbtypes.AttributeValueMemberS{Value: sk},
		"D": &ddbtypes.AttributeValueMemberB{Value: bytes.Repeat([]byte{1}, size)},
	}
}

// The meter counts the units DynamoDB Local says each call consumed: a write unit per KB
// written, half a read unit per 4 KB read eventually consistent, one per 4 KB strongly.
func TestMeterCountsDynamoDBUnits(t *testing.T) {
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	m := awsmeter.New()
	db := dynamodb.NewFromConfig(clients.AWS, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true }, m.DynamoDB)
	ctx := context.Background()
	table := aws.String(st.Table())
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("a", 2500)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{st.Table(): {
		{PutRequest: &ddbtypes.PutRequest{Item: item("b", 100)}}, {PutRequest: &ddbtypes.PutRequest{Item: item("c", 10_000)}},
	}}}); err != nil {
		t.Fatal(err)
	}
	// A failed condition still costs a write unit.
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("a", 10), ConditionExpression: aws.String("attribute_not_exists(PK)")})
	if err == nil {
		t.Fatal("the conditional put succeeded")
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, ConsistentRead: aws.Bool(true), Key: map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "p"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "c"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :p"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":p": &ddbtypes.AttributeValueMemberS{Value: "p"}}}); err != nil {
		t.Fatal(err)
	}
	u := m.Usage()
	// 3 (2.5 KB) + 1 + 10 (10 KB) + 1 (failed condition); 3 (10 KB strongly) + 2 (12.6 KB
	// eventually: four 4 KB blocks at half a unit).
	if u.WriteUnits != 15 || u.ReadUnits != 5 {
		t.Errorf("%v write units, %v read units; want 15 and 5", u.WriteUnits, u.ReadUnits)
	}
	// Every item is in partition "p": the query's units too, named by its key condition.
	if len(u.WriteUnitsByKey) != 1 || u.WriteUnitsByKey["p"] != 15 || len(u.ReadUnitsByKey) != 1 || u.ReadUnitsByKey["p"] != 5 {
		t.Errorf("units by partition: writes %v, reads %v; want 15 and 5 in p", u.WriteUnitsByKey, u.ReadUnitsByKey)
	}
	// By item: a (3, and 1 for the failed condition), and the batch's 11 shared by b and c.
	if i := u.WriteUnitsByItem; len(i) != 3 || i["p a"] != 4 || i["p b"] != 5.5 || i["p c"] != 5.5 {
		t.Errorf("write units by item %v, want 4 for a and 5.5 for b and c", i)
	}
	if u.DynamoDBCalls["PutItem"] != 2 || u.DynamoDBCalls["BatchWriteItem"] != 1 {
		t.Errorf("calls %v", u.DynamoDBCalls)
	}
	b := u.Cost(awsmeter.ListPrices)
	if got, want := b.DynamoDBWrites+b.DynamoDBReads, 15*1.25e-6+5*0.25e-6; got < want*0.999 || got > want*1.001 {
		t.Errorf("priced $%g, want $%g", got, want)
	}
}

// S3 requests count by class, deletes are free; SQS requests count per 64 KB of payload, FIFO
// apart.
func TestMeterCountsS3AndSQSRequests(t *testing.T) {
	clients := awstest.Clients(t)
	m := awsmeter.New()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	s3c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}, RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired}, m.S3)
	ctx := context.Background()
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bucket")}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"x", "y"} {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String(k), Body: bytes.NewReader(make([]byte, 1000))}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String("x"), Range: aws.String("bytes=0-99")})
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bucket"), Key: aws.String("y")}); err != nil {
		t.Fatal(err)
	}
	u := m.Usage()
	// CreateBucket and two PUTs; one GET of 100 bytes.
	if u.S3Writes != 3 || u.S3Reads != 1 || u.S3BytesIn != 2000 || u.S3BytesOut != 100 {
		t.Errorf("S3: %d writes, %d reads, %d bytes in, %d out; want 3, 1, 2000, 100", u.S3Writes, u.S3Reads, u.S3BytesIn, u.S3BytesOut)
	}

	sq := sqs.NewFromConfig(clients.AWS, m.SQS)
	std := awstest.Queue(t, clients, service.BeaconQueueSettings)
	fifo := awstest.FIFOQueue(t, clients, service.RUMQueueSettings)
	m.Reset()
	big := strings.Repeat("x", 40<<10)
	if _, err := sq.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(std.URL()), Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("1"), MessageBody: aws.String(big)}, {Id: aws.String("2"), MessageBody: aws.String(big)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(fifo.URL()), MessageBody: aws.String("{}"),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")}); err != nil {
		t.Fatal(err)
	}
	u = m.Usage()
	// 80 KB in one batch is two billed requests.
	if u.SQSStandard != 2 || u.SQSFIFO != 1 {
		t.Errorf("SQS: %d standard, %d FIFO requests; want 2 and 1", u.SQSStandard, u.SQSFIFO)
	}
}

// Lambda time is billed by the millisecond, rounded up, at the function's memory.
func TestMeterBillsLambdaTime(t *testing.T) {
	m := awsmeter.New()
	m.Billed("f", 1024, 1500*time.Microsecond, 1) // 2 ms at 1 GB
	m.Billed("g", 512, 3*time.Second, 3)          // 3 s at 0.5 GB
	u := m.Usage()
	if u.LambdaRequests != 4 || u.LambdaGBSeconds != 0.002+1.5 {
		t.Errorf("%d requests, %v GB-s; want 4 and 1.502", u.LambdaRequests, u.LambdaGBSeconds)
	}
}
