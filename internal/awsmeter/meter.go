// Package awsmeter counts what code asks of AWS, as AWS bills it, so that a simulation running
// the real code over the stand-ins can price it: DynamoDB's consumed read and write units (it
// asks every call for them, DynamoDB Local answers), S3 requests by class and bytes, SQS
// requests in 64 KB chunks (standard and FIFO apart), and Lambda invocations with their
// GB-seconds. Prices are list prices (ListPrices).
package awsmeter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// Usage is what was asked of AWS.
type Usage struct {
	// ReadUnits and WriteUnits are DynamoDB's request units, as its answers counted them.
	ReadUnits, WriteUnits float64
	// DynamoDBCalls counts calls by operation.
	DynamoDBCalls map[string]int
	// WriteUnitsByKey and ReadUnitsByKey are the units by partition key (the items' PK): a
	// partition takes at most 1,000 write and 3,000 read units a second. A call of several
	// items shares its units among them evenly; a Query's go to the key it names.
	WriteUnitsByKey, ReadUnitsByKey map[string]float64
	// WriteUnitsByItem are the write units by item ("PK SK"): where DynamoDB has split a busy
	// partition by its sort keys (it does for tables without local indexes), an item still
	// takes at most 1,000 write units a second.
	WriteUnitsByItem map[string]float64
	// S3Writes are PUT, COPY, POST and LIST requests, S3Reads GET and HEAD (DELETE is free);
	// S3BytesIn and S3BytesOut are the bodies sent and received.
	S3Writes, S3Reads      int
	S3BytesIn, S3BytesOut  int64
	S3Calls                map[string]int
	SQSStandard, SQSFIFO   int // billed requests: one per 64 KB of a request's payload
	SQSCalls               map[string]int
	LambdaRequests         int
	LambdaGBSeconds        float64
	APIGatewayRequests     int
	FunctionURLRequests    int
	LambdaByFunction       map[string]float64 // GB-seconds
	LambdaRequestsFunction map[string]int
}

// Prices are what AWS charges, in dollars.
type Prices struct {
	WriteUnit, ReadUnit float64 // DynamoDB on demand, per request unit
	DynamoDBGBMonth     float64
	S3Write, S3Read     float64 // per request
	S3GBMonth           float64
	SQSStandard         float64 // per 64 KB request
	SQSFIFO             float64
	LambdaGBSecond      float64 // arm64
	LambdaRequest       float64
	APIGatewayRequest   float64 // HTTP API
}

// ListPrices are AWS's us-east-1 on-demand list prices: DynamoDB $1.25 per million write
// request units, $0.25 per million read request units, $0.25 a GB-month; S3 Standard $0.005
// per 1,000 PUT, COPY, POST or LIST requests, $0.0004 per 1,000 GETs, $0.023 a GB-month; SQS
// $0.40 per million requests (standard), $0.50 (FIFO); Lambda on arm64 $0.0000133334 per
// GB-second and $0.20 per million requests; API Gateway HTTP API $1.00 per million requests.
// A Lambda function URL adds no charge of its own.
var ListPrices = Prices{
	WriteUnit: 1.25e-6, ReadUnit: 0.25e-6, DynamoDBGBMonth: 0.25,
	S3Write: 0.005e-3, S3Read: 0.0004e-3, S3GBMonth: 0.023,
	SQSStandard: 0.40e-6, SQSFIFO: 0.50e-6,
	LambdaGBSecond: 0.0000133334, LambdaRequest: 0.20e-6,
	APIGatewayRequest: 1.00e-6,
}

// Bill is a usage priced, item by item, in dollars.
type Bill struct {
	DynamoDBWrites, DynamoDBReads float64
	S3Requests                    float64
	SQS                           float64
	LambdaRequests, LambdaCompute float64
	APIGateway                    float64
}

// Total is the whole bill.
func (b Bill) Total() float64 {
	return b.DynamoDBWrites + b.DynamoDBReads + b.S3Requests + b.SQS + b.LambdaRequests + b.LambdaCompute + b.APIGateway
}

// Scale multiplies every item by f.
func (b Bill) Scale(f float64) Bill {
	return Bill{b.DynamoDBWrites * f, b.DynamoDBReads * f, b.S3Requests * f, b.SQS * f, b.LambdaRequests * f, b.LambdaCompute * f, b.APIGateway * f}
}

// Add adds o to b.
func (b Bill) Add(o Bill) Bill {
	return Bill{b.DynamoDBWrites + o.DynamoDBWrites, b.DynamoDBReads + o.DynamoDBReads, b.S3Requests + o.S3Requests, b.SQS + o.SQS,
		b.LambdaRequests + o.LambdaRequests, b.LambdaCompute + o.LambdaCompute, b.APIGateway + o.APIGateway}
}

// Cost prices the usage.
func (u Usage) Cost(p Prices) Bill {
	return Bill{
		DynamoDBWrites: u.WriteUnits * p.WriteUnit,
		DynamoDBReads:  u.ReadUnits * p.ReadUnit,
		S3Requests:     float64(u.S3Writes)*p.S3Write + float64(u.S3Reads)*p.S3Read,
		SQS:            float64(u.SQSStandard)*p.SQSStandard + float64(u.SQSFIFO)*p.SQSFIFO,
		LambdaRequests: float64(u.LambdaRequests) * p.LambdaRequest,
		LambdaCompute:  u.LambdaGBSeconds * p.LambdaGBSecond,
		APIGateway:     float64(u.APIGatewayRequests) * p.APIGatewayRequest,
	}
}

// Meter counts the calls of the clients it is attached to, safely from any goroutine.
type Meter struct {
	mu sync.Mutex
	u  Usage
}

// New returns a Meter that has counted nothing.
func New() *Meter { return &Meter{} }

// Usage returns what was counted so far.
func (m *Meter) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	u.DynamoDBCalls = clone(m.u.DynamoDBCalls)
	u.WriteUnitsByKey = clone(m.u.WriteUnitsByKey)
	u.ReadUnitsByKey = clone(m.u.ReadUnitsByKey)
	u.WriteUnitsByItem = clone(m.u.WriteUnitsByItem)
	u.S3Calls = clone(m.u.S3Calls)
	u.SQSCalls = clone(m.u.SQSCalls)
	u.LambdaByFunction = clone(m.u.LambdaByFunction)
	u.LambdaRequestsFunction = clone(m.u.LambdaRequestsFunction)
	return u
}

// Reset forgets what was counted.
func (m *Meter) Reset() {
	m.mu.Lock()
	m.u = Usage{}
	m.mu.Unlock()
}

func clone[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func add[V int | float64](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] += v
}

// Invoke runs fn as one invocation of a Lambda function with memoryMB, and counts its request
// and its duration, billed by the millisecond as Lambda bills it.
func (m *Meter) Invoke(function string, memoryMB int, fn func()) {
	start := time.Now()
	fn()
	m.Billed(function, memoryMB, time.Since(start), 1)
}

// Billed counts n invocations of a function taking d in all.
func (m *Meter) Billed(function string, memoryMB int, d time.Duration, n int) {
	ms := math.Ceil(float64(d) / float64(time.Millisecond))
	gbs := ms / 1000 * float64(memoryMB) / 1024
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.LambdaRequests += n
	m.u.LambdaGBSeconds += gbs
	add(&m.u.LambdaByFunction, function, gbs)
	add(&m.u.LambdaRequestsFunction, function, n)
}

// Requests counts requests of the API's entry: API Gateway's (billed) or a function URL's
// (free).
func (m *Meter) Requests(apiGateway, functionURL int) {
	m.mu.Lock()
	m.u.APIGatewayRequests += apiGateway
	m.u.FunctionURLRequests += functionURL
	m.mu.Unlock()
}

// SQSRequests counts n requests of a queue that were not made through a metered client (the
// event source mapping's receives and deletes).
func (m *Meter) SQSRequests(fifo bool, n int, op string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fifo {
		m.u.SQSFIFO += n
	} else {
		m.u.SQSStandard += n
	}
	add(&m.u.SQSCalls, op, n)
}

// middlewareFunc adds fn around each call, at the start of the stack.
func middlewareFunc(id string, fn func(ctx context.Context, params any, next func() (any, error))) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc(id, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
			middleware.InitializeOutput, middleware.Metadata, error) {
			var out middleware.InitializeOutput
			var md middleware.Metadata
			var err error
			fn(ctx, in.Parameters, func() (any, error) {
				out, md, err = next.HandleInitialize(ctx, in)
				return out.Result, err
			})
			return out, md, err
		}), middleware.Before)
	}
}

// DynamoDB meters a DynamoDB client: use it as an option of dynamodb.NewFromConfig. Every call
// asks for its consumed capacity; a conditional write that fails counts one write unit, as
// AWS charges at least that.
func (m *Meter) DynamoDB(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, middlewareFunc("awsmeter.dynamodb", func(ctx context.Context, params any, next func() (any, error)) {
		askCapacity(params)
		res, err := next()
		op := awsmiddleware.GetOperationName(ctx)
		read, write := consumed(res)
		var cond *ddbtypes.ConditionalCheckFailedException
		var canceled *ddbtypes.TransactionCanceledException
		if errors.As(err, &cond) || errors.As(err, &canceled) {
			write = 1
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.u.ReadUnits += read
		m.u.WriteUnits += write
		add(&m.u.DynamoDBCalls, op, 1)
		keys := itemKeys(params)
		for _, k := range keys {
			share := 1 / float64(len(keys))
			if write > 0 {
				add(&m.u.WriteUnitsByKey, k.pk, write*share)
				if k.sk != "" {
					add(&m.u.WriteUnitsByItem, k.pk+" "+k.sk, write*share)
				}
			}
			if read > 0 {
				add(&m.u.ReadUnitsByKey, k.pk, read*share)
			}
		}
	}))
}

// PartitionKey and SortKey are the attributes that hold an item's key in the table.
const (
	PartitionKey = "PK"
	SortKey      = "SK"
)

// itemKey is an item's key; a Query's names its partition only.
type itemKey struct{ pk, sk string }

// itemKeys are the keys of the items a call reads or writes, one per item.
func itemKeys(params any) []itemKey {
	pk := func(item map[string]ddbtypes.AttributeValue) itemKey {
		var k itemKey
		if v, ok := item[PartitionKey].(*ddbtypes.AttributeValueMemberS); ok {
			k.pk = v.Value
		}
		if v, ok := item[SortKey].(*ddbtypes.AttributeValueMemberS); ok {
			k.sk = v.Value
		}
		return k
	}
	var keys []itemKey
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		keys = append(keys, pk(in.Key))
	case *dynamodb.PutItemInput:
		keys = append(keys, pk(in.Item))
	case *dynamodb.UpdateItemInput:
		keys = append(keys, pk(in.Key))
	case *dynamodb.DeleteItemInput:
		keys = append(keys, pk(in.Key))
	case *dynamodb.QueryInput:
		// The key condition names the partition key first: "PK = :pk AND ...".
		if in.KeyConditionExpression != nil {
			cond := *in.KeyConditionExpression
			if i := strings.Index(cond, "="); i > 0 && strings.TrimSpace(cond[:i]) == PartitionKey {
				name := strings.Fields(cond[i+1:])
				if len(name) > 0 {
					if v, ok := in.ExpressionAttributeValues[name[0]].(*ddbtypes.AttributeValueMemberS); ok {
						keys = append(keys, itemKey{pk: v.Value})
					}
				}
			}
		}
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				keys = append(keys, pk(k))
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				if r.PutRequest != nil {
					keys = append(keys, pk(r.PutRequest.Item))
				} else if r.DeleteRequest != nil {
					keys = append(keys, pk(r.DeleteRequest.Key))
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, t := range in.TransactItems {
			switch {
			case t.Put != nil:
				keys = append(keys, pk(t.Put.Item))
			case t.Update != nil:
				keys = append(keys, pk(t.Update.Key))
			case t.Delete != nil:
				keys = append(keys, pk(t.Delete.Key))
			case t.ConditionCheck != nil:
				keys = append(keys, pk(t.ConditionCheck.Key))
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, t := range in.TransactItems {
			if t.Get != nil {
				keys = append(keys, pk(t.Get.Key))
			}
		}
	}
	return keys
}

// ItemBytes is the size DynamoDB bills an item at: its attribute names and values (strings
// and binaries by length, numbers about a byte per two digits and one more, lists and maps 3
// bytes and one a member more, booleans and nulls one).
func ItemBytes(item map[string]ddbtypes.AttributeValue) int {
	total := 0
	for name, v := range item {
		total += len(name) + valueBytes(v)
	}
	return total
}

func valueBytes(v ddbtypes.AttributeValue) int {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberN:
		return numberBytes(v.Value)
	case *ddbtypes.AttributeValueMemberB:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberBOOL, *ddbtypes.AttributeValueMemberNULL:
		return 1
	case *ddbtypes.AttributeValueMemberL:
		return 3 + sumBytes(v.Value, func(e ddbtypes.AttributeValue) int { return valueBytes(e) + 1 })
	case *ddbtypes.AttributeValueMemberM:
		return 3 + ItemBytes(v.Value) + len(v.Value)
	case *ddbtypes.AttributeValueMemberSS:
		return sumBytes(v.Value, func(e string) int { return len(e) })
	case *ddbtypes.AttributeValueMemberNS:
		return sumBytes(v.Value, numberBytes)
	case *ddbtypes.AttributeValueMemberBS:
		return sumBytes(v.Value, func(e []byte) int { return len(e) })
	}
	return 0
}

// numberBytes is a number's size: about a byte per two digits, and one more.
func numberBytes(n string) int { return (len(n)+1)/2 + 1 }

// sumBytes adds up the sizes of a set's or list's members.
func sumBytes[T any](members []T, size func(T) int) int {
	n := 0
	for _, m := range members {
		n += size(m)
	}
	return n
}

func askCapacity(params any) {
	total := ddbtypes.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumed reads the units an answer says it consumed.
func consumed(res any) (read, write float64) {
	units := func(cs ...*ddbtypes.ConsumedCapacity) (n float64) {
		for _, c := range cs {
			if c != nil && c.CapacityUnits != nil {
				n += *c.CapacityUnits
			}
		}
		return n
	}
	list := func(cs []ddbtypes.ConsumedCapacity) float64 {
		var n float64
		for i := range cs {
			n += units(&cs[i])
		}
		return n
	}
	switch out := res.(type) {
	case *dynamodb.GetItemOutput:
		return units(out.ConsumedCapacity), 0
	case *dynamodb.QueryOutput:
		return units(out.ConsumedCapacity), 0
	case *dynamodb.ScanOutput:
		return units(out.ConsumedCapacity), 0
	case *dynamodb.BatchGetItemOutput:
		return list(out.ConsumedCapacity), 0
	case *dynamodb.TransactGetItemsOutput:
		return list(out.ConsumedCapacity), 0
	case *dynamodb.PutItemOutput:
		return 0, units(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return 0, units(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return 0, units(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return 0, list(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return 0, list(out.ConsumedCapacity)
	}
	return 0, 0
}

// S3 meters an S3 client: use it as an option of s3.New or s3.NewFromConfig.
func (m *Meter) S3(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, middlewareFunc("awsmeter.s3", func(ctx context.Context, params any, next func() (any, error)) {
		var in int64
		if p, ok := params.(*s3.PutObjectInput); ok {
			if l, ok := p.Body.(interface{ Len() int }); ok {
				in = int64(l.Len())
			}
		}
		res, _ := next()
		op := awsmiddleware.GetOperationName(ctx)
		var out int64
		if g, ok := res.(*s3.GetObjectOutput); ok && g.ContentLength != nil {
			out = *g.ContentLength
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		switch op {
		case "GetObject", "HeadObject":
			m.u.S3Reads++
		case "DeleteObject", "DeleteObjects":
		default:
			m.u.S3Writes++
		}
		m.u.S3BytesIn += in
		m.u.S3BytesOut += out
		add(&m.u.S3Calls, op, 1)
	}))
}

// sqsChunk is the payload SQS bills as one request.
const sqsChunk = 64 << 10

// SQS meters an SQS client: use it as an option of sqs.NewFromConfig. A request is billed per
// 64 KB of its payload (the messages' bodies sent or received).
func (m *Meter) SQS(o *sqs.Options) {
	o.APIOptions = append(o.APIOptions, middlewareFunc("awsmeter.sqs", func(ctx context.Context, params any, next func() (any, error)) {
		var url string
		var payload int
		switch in := params.(type) {
		case *sqs.SendMessageInput:
			url, payload = deref(in.QueueUrl), len(deref(in.MessageBody))
		case *sqs.SendMessageBatchInput:
			url = deref(in.QueueUrl)
			for _, e := range in.Entries {
				payload += len(deref(e.MessageBody))
			}
		case *sqs.ReceiveMessageInput:
			url = deref(in.QueueUrl)
		case *sqs.DeleteMessageInput:
			url = deref(in.QueueUrl)
		case *sqs.DeleteMessageBatchInput:
			url = deref(in.QueueUrl)
		case *sqs.ChangeMessageVisibilityBatchInput:
			url = deref(in.QueueUrl)
		case *sqs.GetQueueAttributesInput:
			url = deref(in.QueueUrl)
		}
		res, _ := next()
		if r, ok := res.(*sqs.ReceiveMessageOutput); ok {
			for _, msg := range r.Messages {
				payload += len(deref(msg.Body))
			}
		}
		n := max(1, (payload+sqsChunk-1)/sqsChunk)
		m.SQSRequests(strings.HasSuffix(url, ".fifo"), n, awsmiddleware.GetOperationName(ctx))
	}))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Table writes a usage's and its bill's lines for people: what was counted and what it costs.
func (u Usage) Table(w io.Writer, p Prices) {
	b := u.Cost(p)
	fmt.Fprintf(w, "  DynamoDB   %10.1f write units  %10.1f read units   $%.6f + $%.6f  calls %v\n", u.WriteUnits, u.ReadUnits, b.DynamoDBWrites, b.DynamoDBReads, u.DynamoDBCalls)
	fmt.Fprintf(w, "  S3         %10d writes       %10d reads        $%.6f  (%.1f MB in, %.1f MB out) calls %v\n", u.S3Writes, u.S3Reads, b.S3Requests,
		float64(u.S3BytesIn)/1e6, float64(u.S3BytesOut)/1e6, u.S3Calls)
	fmt.Fprintf(w, "  SQS        %10d standard     %10d FIFO         $%.6f  calls %v\n", u.SQSStandard, u.SQSFIFO, b.SQS, u.SQSCalls)
	fmt.Fprintf(w, "  Lambda     %10d requests     %10.2f GB-s        $%.6f + $%.6f  %v\n", u.LambdaRequests, u.LambdaGBSeconds, b.LambdaRequests, b.LambdaCompute, u.LambdaByFunction)
	fmt.Fprintf(w, "  entry      %10d API Gateway  %10d function URL $%.6f\n", u.APIGatewayRequests, u.FunctionURLRequests, b.APIGateway)
}
