package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/capacity"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// The cost simulation runs the real rebatcher and aggregator over DynamoDB Local, gofakes3 and
// the SQS stand-in, through clients that count what AWS would bill (internal/awsmeter), for a
// website of a given traffic, on a simulated clock: the day's object is first filled as half a
// day of its views leaves it (unmetered), then the rebatcher's batching windows are played and
// metered, the aggregator's queue delivering each request to fold flushDelay after it was
// first sent (as the stack's queue delays it), and the metered windows are scaled to a month.
// The entry (collect behind a Lambda function URL) is priced from its requests: its Lambda
// time is assumed, not measured (collectMillis). Storage is priced from the day object's size.

// Sizes of the functions and queues as the stack deploys them (infra/rum.go), and what the
// simulation assumes.
const (
	collectMemoryMB    = 256
	batcherMemoryMB    = 256
	aggregatorMemoryMB = 1024
	// collectMillis is a collect invocation in AWS: the handler's own work is a fraction of a
	// millisecond (BenchmarkCollect); the SQS SendMessage round trip is most of it.
	collectMillis = 20
	// windowSeconds is the rebatcher's batching window, flushDelay the aggregator queue's
	// delay.
	windowSeconds = 60
	flushDelay    = 180 * time.Second
	daySeconds    = 24 * 3600
)

// costScenario is a website's traffic.
type costScenario struct {
	name          string
	viewsPerMonth float64
	// windows is how many batching windows are metered (fewer with -short).
	windows int
	// pollers is how many rebatcher invocations share a window's beacons (the event source's
	// pollers each gather a batch of their own; 0 means 1).
	pollers int
	// spa draws visits of a single-page app (a hard load and three soft navigations, one
	// beacon carrying the four views) instead of views of one beacon each.
	spa bool
}

// BenchmarkRUMCost prices a month of a website's real users at several traffics. With
// OPENVITALS_RUM_COST_FILE set, it writes the months (one website's, at each traffic of one
// rebatcher invocation a window) there as JSON, for the capacity model (internal/capacity).
func BenchmarkRUMCost(b *testing.B) {
	var months []capacity.RUMMonth
	for _, sc := range []costScenario{
		{"idle", 0, 60, 1, false},
		{"100k_views_a_month", 100e3, 240, 1, false},
		{"1M_views_a_month", 1e6, 240, 1, false},
		// The same, the window's beacons spread over five invocations, as five pollers of the
		// event source may gather them: five log entries a window instead of one.
		{"1M_views_a_month_5_pollers", 1e6, 240, 5, false},
		{"100M_views_a_month", 100e6, 40, 1, false},
		// A single-page app's visits: four views a beacon.
		{"1M_views_a_month_spa", 1e6, 240, 1, true},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for range b.N {
				month := simulateCost(b, sc)
				if sc.viewsPerMonth > 0 && sc.pollers == 1 && !sc.spa {
					months = append(months, month)
				}
			}
		})
	}
	if file := os.Getenv("OPENVITALS_RUM_COST_FILE"); file != "" && !testing.Short() {
		body, err := json.MarshalIndent(months, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(file, append(body, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// simSender is the aggregator's queue as the simulation plays it: the stand-in's queue delays
// nothing, so it remembers when each message the queue would deliver (a new deduplication ID)
// was first sent, on the simulated clock, and the simulation receives it flushDelay later.
type simSender struct {
	*queue.Queue
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]bool
	due  []time.Time
}

func (s *simSender) SendGroups(ctx context.Context, msgs []queue.GroupMessage) []error {
	errs := s.Queue.SendGroups(ctx, msgs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range msgs {
		if errs[i] == nil && !s.seen[m.DedupID] {
			s.seen[m.DedupID] = true
			s.due = append(s.due, s.now().Add(flushDelay))
		}
	}
	return errs
}

func (s *simSender) Delay(context.Context) (time.Duration, error) { return flushDelay, nil }

// dueBy takes the messages due by t.
func (s *simSender) dueBy(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < len(s.due) && !s.due[n].After(t) {
		n++
	}
	s.due = s.due[n:]
	return n
}

func simulateCost(b *testing.B, sc costScenario) capacity.RUMMonth {
	ctx := context.Background()
	clients := awstest.Clients(b)
	st, site := benchWebsite(b)
	m := awsmeter.New()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mclients := awstest.Metered(clients, m)
	mst, msqs := store.New(mclients.DynamoDB, st.Table()), mclients.SQS
	s3url := awstest.S3Server(b)
	plain := rumstore.New(st, awstest.BucketAt(b, s3url), 400*24*time.Hour, quiet)
	metered := rumstore.New(mst, awstest.BucketAt(b, s3url, m.S3), 400*24*time.Hour, quiet)
	fifo := awstest.FIFOQueue(b, clients, service.RUMQueueSettings)
	out, err := queue.Open(ctx, msqs, fifo.URL())
	if err != nil {
		b.Fatal(err)
	}
	// The website's limit is raised for the largest traffic, as an operator does.
	if err := st.SetAccountLimits(ctx, site.Account, map[string]int{string(quota.BeaconsPerDay): 10_000_000}); err != nil {
		b.Fatal(err)
	}
	day := "20261115"
	t0 := time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	clock := t0
	now := func() time.Time { return clock }
	sender := &simSender{Queue: out, now: now, seen: map[string]bool{}}
	rb := rumworker.NewRebatcherWith(metered, mst, sender, func(string) string { return "XX" }, quiet)
	rumworker.SetRebatcherClock(rb, now)
	agg := rumworker.NewAggregatorWith(mst, metered, quota.NewKeeper(mst, time.Now), quiet, func(string) string { return "XX" })
	rumworker.SetAggregatorClock(agg, now)

	perSecond := sc.viewsPerMonth / 30 / daySeconds
	windows, half := sc.windows, perSecond*daySeconds/2
	if testing.Short() {
		windows, half = 6, min(half, 2000)
	}
	rng := rand.New(rand.NewPCG(11, 11))
	fillDay(b, st, plain, site, day, int(half), rng)
	m.Reset() // what making the bucket and the queue's URL cost

	carry := 0.0
	views, compactions := 0, 0
	for w := range windows {
		clock = t0.Add(time.Duration(w*windowSeconds) * time.Second)
		carry += perSecond * windowSeconds
		n := int(carry)
		carry -= float64(n)
		views += n
		// collect: one message per invocation (a beacon: one view, or a visit's views), each a
		// request of the function URL.
		var bodies []string
		for i := 0; i < n; {
			visit := []rum.View{rumworker.BenchView(rng, day, 1000, 50)}
			if sc.spa {
				visit = rumworker.SPAVisit(rng, day, 1000, 50)
			}
			for j := range visit {
				visit[j].ID = rum.NewViewID(clock.Add(time.Duration(i+j) * time.Second * windowSeconds / time.Duration(max(n, 1))))
			}
			i += len(visit)
			body, err := json.Marshal(rum.Batch{ID: visit[0].ID, Account: site.Account, Website: site.ID, Views: visit})
			if err != nil {
				b.Fatal(err)
			}
			bodies = append(bodies, string(body))
		}
		ev, beacons := awstest.SQSEvent(bodies...), len(bodies)
		for i := range ev.Records { // SQS's message IDs are unique, across windows too
			ev.Records[i].MessageId = fmt.Sprintf("m%d-%d", w, i)
		}
		m.Requests(0, beacons)
		m.Billed("rum (collect)", collectMemoryMB, time.Duration(beacons*collectMillis)*time.Millisecond, beacons)
		m.SQSRequests(false, beacons, "SendMessage (collect)")
		if n > 0 {
			// The event source receives and deletes beacon messages ten at a time.
			m.SQSRequests(false, (beacons+9)/10, "ReceiveMessage (event source)")
			m.SQSRequests(false, (beacons+9)/10, "DeleteMessageBatch (event source)")
			pollers := max(sc.pollers, 1)
			for p := range pollers {
				var part events.SQSEvent
				for i := p; i < len(ev.Records); i += pollers {
					part.Records = append(part.Records, ev.Records[i])
				}
				if len(part.Records) == 0 {
					continue
				}
				m.Invoke("rum-batcher", batcherMemoryMB, func() {
					if resp, err := rb.HandleSQS(ctx, part); err != nil || len(resp.BatchItemFailures) > 0 {
						b.Fatalf("rebatch: %v %v", err, resp.BatchItemFailures)
					}
				})
			}
		}
		if due := sender.dueBy(clock); due > 0 {
			compactions += due
			receiveMetered(b, msqs, fifo.URL(), due, func(ev events.SQSEvent) {
				m.Invoke("rum-aggregator", aggregatorMemoryMB, func() {
					if resp, err := agg.HandleSQS(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
						b.Fatalf("fold: %v %v", err, resp.BatchItemFailures)
					}
				})
			})
		}
	}
	u := m.Usage()
	bill := u.Cost(awsmeter.ListPrices)
	perMonth := bill.Scale(float64(daySeconds) / float64(windows*windowSeconds) * 30)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d windows of %d s, %d views metered (%.1f a window), %d compactions\n", sc.name, windows, windowSeconds,
		views, float64(views)/float64(windows), compactions)
	u.Table(&sb, awsmeter.ListPrices)
	fmt.Fprintf(&sb, "  a month: $%.2f (DynamoDB writes $%.2f, reads $%.2f, S3 $%.2f, SQS $%.2f, Lambda $%.2f + $%.2f, API Gateway $%.2f)\n",
		perMonth.Total(), perMonth.DynamoDBWrites, perMonth.DynamoDBReads, perMonth.S3Requests, perMonth.SQS, perMonth.LambdaRequests, perMonth.LambdaCompute, perMonth.APIGateway)
	// Storage: the day's object now holds half a day and the windows; a month of them is kept
	// for each month of retention.
	days, err := st.RUMDays(ctx, site.Account, site.ID, []string{day}, true)
	if err != nil {
		b.Fatal(err)
	}
	dayBytes := 0.0
	if held := half + float64(views); held > 0 {
		dayBytes = float64(days[day].Size) * perSecond * daySeconds / held
	}
	monthGB := dayBytes * 30 / 1e9
	fmt.Fprintf(&sb, "  storage: %.1f MB a day, %.2f GB a month of data: $%.4f a month for each month kept\n", dayBytes/1e6, monthGB,
		monthGB*awsmeter.ListPrices.S3GBMonth)
	if sc.viewsPerMonth > 0 {
		fmt.Fprintf(&sb, "  per million views: $%.2f\n", perMonth.Total()*1e6/sc.viewsPerMonth)
		b.ReportMetric(perMonth.Total()*1e6/sc.viewsPerMonth, "$/M_views")
	}
	// Printed rather than logged: a benchmark's log is cut short.
	fmt.Print(sb.String())
	b.ReportMetric(perMonth.Total(), "$/month")
	scale := float64(daySeconds) / float64(windows*windowSeconds) * 30
	return capacity.RUMMonth{ViewsPerMonth: sc.viewsPerMonth, Bill: perMonth, WriteUnits: u.WriteUnits * scale, ReadUnits: u.ReadUnits * scale, StoredGB: monthGB}
}

// fillDay stores n views of day as the aggregator leaves them in the day's object: the running
// totals and the daily segment and attribution tables; and the month's index.
func fillDay(b testing.TB, st *store.Store, rums *rumstore.Store, site model.Website, day string, n int, rng *rand.Rand) {
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
	sess := rums.Session(site.Account, site.ID)
	if _, _, _, err := totals.Store(ctx, sess, day); err != nil {
		b.Fatal(err)
	}
	if _, _, err := daily.Store(ctx, sess); err != nil {
		b.Fatal(err)
	}
	if err := sess.Commit(ctx, nil); err != nil {
		b.Fatal(err)
	}
	if err := st.PutRUMIndex(ctx, site.Account, site.ID, model.RUMIndex{Month: day[:6], Days: []string{day}}, time.Time{}); err != nil {
		b.Fatal(err)
	}
}

// receiveMetered receives n messages of the queue, ten at most at a time, as the event source
// does, hands each batch to handle and deletes it.
func receiveMetered(b testing.TB, client *sqs.Client, url string, n int, handle func(events.SQSEvent)) {
	ctx := context.Background()
	for n > 0 {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: int32(min(n, 10)), WaitTimeSeconds: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			b.Fatalf("%d messages of the aggregator's queue never came", n)
		}
		n -= len(out.Messages)
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
