package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
)

// The cost simulation runs the real rebatcher and aggregator over DynamoDB Local and the SQS
// stand-in, through clients that count what AWS would bill (internal/awsmeter), for a website
// of a given traffic: the day's tables are first filled as half a day of its views leaves them
// (unmetered), then windows of the rebatcher's batching window are played and metered, and
// the metered windows are scaled to a month. The entry (collect) is priced from its requests:
// its Lambda time is assumed, not measured (collectMillis).

// Sizes of the functions as the stack deploys them, and what the simulation assumes.
const (
	collectMemoryMB    = 256
	batcherMemoryMB    = 256
	aggregatorMemoryMB = 512
	// collectMillis is a collect invocation in AWS: the handler's own work is a fraction of a
	// millisecond (BenchmarkCollect); the SQS SendMessage round trip is most of it.
	collectMillis = 20
	// windowSeconds is the rebatcher's batching window.
	windowSeconds = 30
	daySeconds    = 24 * 3600
)

// costScenario is a website's traffic.
type costScenario struct {
	name          string
	viewsPerMonth float64
	// windows is how many batching windows are metered (fewer with -short).
	windows int
}

func BenchmarkRUMCost(b *testing.B) {
	for _, sc := range []costScenario{
		{"1M_views_a_month", 1e6, 120},
		{"100M_views_a_month", 100e6, 20},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for range b.N {
				simulateCost(b, sc)
			}
		})
	}
}

// meteredStore is a store over the same table as st whose DynamoDB calls m counts, and a
// client of the SQS stand-in that m counts.
func meteredClients(b testing.TB, clients service.Clients, st *store.Store, m *awsmeter.Meter) (*store.Store, *sqs.Client) {
	ddb := dynamodb.NewFromConfig(clients.AWS, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true }, m.DynamoDB)
	return store.New(ddb, st.Table()), sqs.NewFromConfig(clients.AWS, m.SQS)
}

func simulateCost(b *testing.B, sc costScenario) {
	ctx := context.Background()
	clients := awstest.Clients(b)
	st, site := benchWebsite(b)
	m := awsmeter.New()
	mst, msqs := meteredClients(b, clients, st, m)
	fifo := awstest.FIFOQueue(b, clients, service.RUMQueueSettings)
	out, err := queue.Open(ctx, msqs, fifo.URL())
	if err != nil {
		b.Fatal(err)
	}
	// The website's limit is raised for the largest traffic, as an operator does.
	limits := quota.NewKeeper(mst, time.Now)
	if err := st.SetAccountLimits(ctx, site.Account, map[string]int{string(quota.BeaconsPerDay): 10_000_000}); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rb := rumworker.NewRebatcherWith(out, quiet)
	agg := rumworker.NewAggregatorWith(mst, limits, quiet, func(string) string { return "XX" })

	perSecond := sc.viewsPerMonth / 30 / daySeconds
	windows, half := sc.windows, perSecond*daySeconds/2
	if testing.Short() {
		windows, half = 2, 2000
	}
	day := "20261115"
	rng := rand.New(rand.NewPCG(11, 11))
	t0 := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	fillDay(b, st, site, day, int(half), rng)

	carry := 0.0
	views := 0
	for w := range windows {
		at := t0.Add(time.Duration(w*windowSeconds) * time.Second)
		carry += perSecond * windowSeconds
		n := int(carry)
		carry -= float64(n)
		views += n
		// collect: one message of one view per invocation, each a request of the entry.
		var ev events.SQSEvent
		for i := range n {
			v := rumworker.BenchView(rng, day, 1000, 50)
			v.ID = rum.NewViewID(at.Add(time.Duration(i) * time.Second * windowSeconds / time.Duration(max(n, 1))))
			body, err := json.Marshal(rum.Batch{ID: v.ID, Account: site.Account, Website: site.ID, Views: []rum.View{v}})
			if err != nil {
				b.Fatal(err)
			}
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d-%d", w, i), Body: string(body)})
		}
		m.Requests(n, 0)
		m.Billed("rum (collect)", collectMemoryMB, time.Duration(n*collectMillis)*time.Millisecond, n)
		m.SQSRequests(false, n, "SendMessage (collect)")
		if n == 0 {
			continue
		}
		// The event source receives and deletes beacon messages ten at a time.
		m.SQSRequests(false, (n+9)/10, "ReceiveMessage (event source)")
		m.SQSRequests(false, (n+9)/10, "DeleteMessageBatch (event source)")
		m.Invoke("rum-batcher", batcherMemoryMB, func() {
			if resp, err := rb.HandleSQS(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
				b.Fatalf("rebatch: %v %v", err, resp.BatchItemFailures)
			}
		})
		drainMetered(b, msqs, fifo.URL(), func(ev events.SQSEvent) {
			m.Invoke("rum-aggregator", aggregatorMemoryMB, func() {
				if resp, err := agg.HandleSQS(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
					b.Fatalf("fold: %v %v", err, resp.BatchItemFailures)
				}
			})
		})
	}
	u := m.Usage()
	bill := u.Cost(awsmeter.ListPrices)
	perMonth := bill.Scale(float64(daySeconds) / float64(windows*windowSeconds) * 30)
	perMillion := perMonth.Scale(1e6 / sc.viewsPerMonth)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d windows of %d s, %d views metered (%.1f a window)\n", sc.name, windows, windowSeconds, views, float64(views)/float64(windows))
	u.Table(&sb, awsmeter.ListPrices)
	fmt.Fprintf(&sb, "  a month: $%.2f (DynamoDB writes $%.2f, reads $%.2f, S3 $%.2f, SQS $%.2f, Lambda $%.2f + $%.2f, API Gateway $%.2f)\n",
		perMonth.Total(), perMonth.DynamoDBWrites, perMonth.DynamoDBReads, perMonth.S3Requests, perMonth.SQS, perMonth.LambdaRequests, perMonth.LambdaCompute, perMonth.APIGateway)
	fmt.Fprintf(&sb, "  per million views: $%.2f\n", perMillion.Total())
	// Printed rather than logged: a benchmark's log is cut short.
	fmt.Print(sb.String())
	b.ReportMetric(perMillion.Total(), "$/M_views")
	b.ReportMetric(perMonth.Total(), "$/month")
	if n := u.DynamoDBCalls["PutItem"] + u.DynamoDBCalls["BatchWriteItem"]; n > 0 && windows > 0 {
		b.ReportMetric(u.WriteUnits/float64(windows), "WCU/window")
	}
}

// fillDay stores n views of day as the aggregator leaves them: the running totals and the
// daily segment and attribution tables, and the month's index.
func fillDay(b testing.TB, st *store.Store, site model.Website, day string, n int, rng *rand.Rand) {
	ctx := context.Background()
	totals := rumworker.NewRunningTotals()
	daily := rumworker.NewDailyTables(day)
	batch := make([]rum.View, 0, 4000)
	for range n {
		v := rumworker.BenchView(rng, day, 1000, 50)
		totals.Add(v, rum.TimingNames)
		if batch = append(batch, v); len(batch) == cap(batch) {
			daily.Add(batch)
			batch = batch[:0]
		}
	}
	daily.Add(batch)
	if _, _, _, err := totals.Store(ctx, st, site.Account, site.ID, day); err != nil {
		b.Fatal(err)
	}
	if _, _, err := daily.Store(ctx, st, site.Account, site.ID); err != nil {
		b.Fatal(err)
	}
	if err := st.PutRUMIndex(ctx, site.Account, site.ID, model.RUMIndex{Month: day[:6], Days: []string{day}}); err != nil {
		b.Fatal(err)
	}
}

// drainMetered receives the queue's messages ten at a time, as the event source does, hands
// each batch to handle and deletes it.
func drainMetered(b testing.TB, client *sqs.Client, url string, handle func(events.SQSEvent)) {
	ctx := context.Background()
	for {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return
		}
		var ev events.SQSEvent
		var done []sqstypes.DeleteMessageBatchRequestEntry
		for _, msg := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(msg.MessageId), Body: aws.ToString(msg.Body)})
			done = append(done, sqstypes.DeleteMessageBatchRequestEntry{Id: msg.MessageId, ReceiptHandle: msg.ReceiptHandle})
		}
		handle(ev)
		if _, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: done}); err != nil {
			b.Fatal(err)
		}
	}
}
