package awstest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/store"
)

// Reads counts what a store reads from DynamoDB: its read requests by operation, the items they
// read (before any filter) and the read capacity units DynamoDB says they consumed (every read asks for them).
// Tests use it to show that some work reads the same whatever the size of a website.
type Reads struct {
	mu    sync.Mutex
	calls map[string]int
	items int
	units float64
	// writes counts write requests and the write capacity units they consumed.
	writes     int
	writeUnits float64
}

// ReadCount is what a Reads counted.
type ReadCount struct {
	Calls  map[string]int // read requests by operation
	Items  int            // items read (a query's before its filter)
	Units  float64        // read capacity units consumed
	Writes int            // write requests (puts, updates, deletes, transactions, batches)
	// WriteUnits are the write capacity units consumed, as reported (DynamoDB Local reports
	// none for transactions).
	WriteUnits float64
}

// Requests is the number of read requests.
func (c ReadCount) Requests() int {
	n := 0
	for _, v := range c.Calls {
		n += v
	}
	return n
}

func (c ReadCount) String() string {
	ops := make([]string, 0, len(c.Calls))
	for op, n := range c.Calls {
		ops = append(ops, fmt.Sprintf("%s %d", op, n))
	}
	sort.Strings(ops)
	return fmt.Sprintf("%d reads (%s), %d items, %.1f RCU; %d writes, %.1f WCU",
		c.Requests(), strings.Join(ops, ", "), c.Items, c.Units, c.Writes, c.WriteUnits)
}

// Plus is c and o counted together.
func (c ReadCount) Plus(o ReadCount) ReadCount {
	sum := ReadCount{Calls: map[string]int{}, Items: c.Items + o.Items, Units: c.Units + o.Units,
		Writes: c.Writes + o.Writes, WriteUnits: c.WriteUnits + o.WriteUnits}
	for _, calls := range []map[string]int{c.Calls, o.Calls} {
		for k, v := range calls {
			sum.Calls[k] += v
		}
	}
	return sum
}

// Reset starts counting afresh.
func (r *Reads) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.items, r.units, r.writes, r.writeUnits = map[string]int{}, 0, 0, 0, 0
}

// Count is what was counted since the last Reset.
func (r *Reads) Count() ReadCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := ReadCount{Calls: map[string]int{}, Items: r.items, Units: r.units, Writes: r.writes, WriteUnits: r.writeUnits}
	for k, v := range r.calls {
		c.Calls[k] = v
	}
	return c
}

// CountedStore returns a store over a new table of its own (deleted when the test ends) whose
// every DynamoDB request is counted by the Reads returned.
func CountedStore(t testing.TB, clients awsclient.Clients) (*store.Store, *Reads) {
	t.Helper()
	plain := Store(t, clients)
	r := &Reads{}
	r.Reset()
	db := dynamodb.New(clients.DynamoDB.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("openvitals-count", r.count), middleware.After)
		})
	})
	return store.New(db, plain.Table()), r
}

// count asks every request for its consumed capacity and adds what it read or wrote.
func (r *Reads) count(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	read, data := askCapacity(in.Parameters)
	if !data {
		return next.HandleInitialize(ctx, in) // table management
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	items, units := consumed(out.Result)
	r.mu.Lock()
	defer r.mu.Unlock()
	if read != "" {
		r.calls[read]++
		r.items += items
		r.units += units
	} else {
		r.writes++
		r.writeUnits += units
	}
	return out, md, err
}

// askCapacity asks a data operation to return its consumed capacity; it names the operation
// when it reads, and says whether params is a data operation at all.
func askCapacity(params any) (read string, data bool) {
	total := ddbtypes.ReturnConsumedCapacityTotal
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity, read = total, "GetItem"
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity, read = total, "Query"
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity, read = total, "Scan"
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity, read = total, "BatchGetItem"
	case *dynamodb.TransactGetItemsInput:
		p.ReturnConsumedCapacity, read = total, "TransactGetItems"
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = total
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = total
	default:
		return "", false
	}
	return read, true
}

// consumed is what an operation's result says it read (items, before any filter) and the
// capacity units it consumed.
func consumed(result any) (items int, units float64) {
	add := func(cs ...ddbtypes.ConsumedCapacity) {
		for _, c := range cs {
			units += aws.ToFloat64(c.CapacityUnits)
		}
	}
	one := func(c *ddbtypes.ConsumedCapacity) {
		if c != nil {
			add(*c)
		}
	}
	switch o := result.(type) {
	case *dynamodb.GetItemOutput:
		if o.Item != nil {
			items = 1
		}
		one(o.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		items = int(o.ScannedCount) // before any filter: what DynamoDB read
		one(o.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		items = int(o.ScannedCount)
		one(o.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, rs := range o.Responses {
			items += len(rs)
		}
		add(o.ConsumedCapacity...)
	case *dynamodb.TransactGetItemsOutput:
		items = len(o.Responses)
		add(o.ConsumedCapacity...)
	case *dynamodb.PutItemOutput:
		one(o.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		one(o.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		one(o.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		add(o.ConsumedCapacity...)
	case *dynamodb.BatchWriteItemOutput:
		add(o.ConsumedCapacity...)
	}
	return items, units
}
