// Package awstest gives tests their own resources on the local AWS stand-ins that `make test`
// starts: a fresh DynamoDB table, SQS queue or S3 bucket per test, removed afterwards. There are
// no mocks: tests talk to DynamoDB Local, the SQS stand-in and gofakes3 over the wire. NewEnv
// makes the clients, table and log most tests open with in one call; Table reads and writes
// that table past the store, as DynamoDB holds it. Beside them: logs into the test's output
// (Log, LogAt) and Output, what a logger or a process writes from several goroutines.
package awstest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/standin"
	"github.com/openvitals/openvitals/internal/store"
)

// Clients returns clients for the stand-ins. It fails the test, rather than skipping it, when
// the stand-ins are not configured, and refuses any endpoint that is not on loopback, so a
// test can neither pass vacuously nor touch a real AWS account.
func Clients(t testing.TB) awsclient.Clients {
	t.Helper()
	for _, v := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"} {
		u, err := url.Parse(os.Getenv(v))
		if err != nil || u.Host == "" {
			t.Fatalf("%s is not set: run the tests with `make test`, which starts the local stand-ins", v)
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" {
			t.Fatalf("%s=%s is not a local stand-in; tests never use real AWS", v, u)
		}
	}
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	c, err := awsclient.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Via returns a copy of clients whose DynamoDB and SQS clients send their requests through
// transport: one that counts them, slows them or fails them as a test asks.
func Via(clients awsclient.Clients, transport http.RoundTripper) awsclient.Clients {
	via := &http.Client{Transport: transport}
	clients.DynamoDB = dynamodb.New(clients.DynamoDB.Options(), func(o *dynamodb.Options) { o.HTTPClient = via })
	clients.SQS = sqs.New(clients.SQS.Options(), func(o *sqs.Options) { o.HTTPClient = via })
	return clients
}

// Metered returns a copy of clients whose DynamoDB and SQS requests meter counts, as AWS
// would bill them.
func Metered(clients awsclient.Clients, meter *awsmeter.Meter) awsclient.Clients {
	clients.DynamoDB = dynamodb.New(clients.DynamoDB.Options(), meter.DynamoDB)
	clients.SQS = sqs.New(clients.SQS.Options(), meter.SQS)
	return clients
}

// Name returns a name unique to this test run, usable for tables, queues and buckets.
func Name(t testing.TB) string {
	n := strings.ToLower(strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(t.Name()))
	if len(n) > 40 {
		n = n[:40]
	}
	return strings.Trim(n, "-") + "-" + model.NewID()
}

// Store returns a store over a new table of its own, deleted when the test ends.
func Store(t testing.TB, clients awsclient.Clients) *store.Store {
	t.Helper()
	st := store.New(clients.DynamoDB, Name(t))
	if err := st.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background()) })
	return st
}

// Queue returns a new queue (with its dead-letter queue), deleted when the test ends.
func Queue(t testing.TB, clients awsclient.Clients, s queue.Settings) *queue.Queue {
	t.Helper()
	name := Name(t)
	q, err := queue.Create(context.Background(), clients.SQS, name, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{name, name + "-dlq"} {
			if out, err := clients.SQS.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(n)}); err == nil {
				_, _ = clients.SQS.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
			}
		}
	})
	return q
}

// FIFOQueue returns a new FIFO queue (with its FIFO dead-letter queue), deleted when the test
// ends.
func FIFOQueue(t testing.TB, clients awsclient.Clients, s queue.Settings) *queue.Queue {
	t.Helper()
	name := Name(t)
	name = name[:min(len(name), 70)] + ".fifo"
	q, err := queue.Create(context.Background(), clients.SQS, name, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{name, strings.TrimSuffix(name, ".fifo") + "-dlq.fifo"} {
			if out, err := clients.SQS.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(n)}); err == nil {
				_, _ = clients.SQS.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
			}
		}
	})
	return q
}

// Queues returns a function that creates a queue of the test's own (with its dead-letter
// queue, FIFO when fifo) with settings s, deleted when the test ends, and returns its URL: what
// service.Config.NameQueues takes, to name each queue the service declares by URL, as the stack
// names them.
func Queues(t testing.TB, clients awsclient.Clients) func(s queue.Settings, fifo bool) string {
	return func(s queue.Settings, fifo bool) string {
		t.Helper()
		if fifo {
			return FIFOQueue(t, clients, s).URL()
		}
		return Queue(t, clients, s).URL()
	}
}

// SQSEvent is what the event source mapping hands a function for messages of bodies, their IDs
// m0, m1, ... in order.
func SQSEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m" + strconv.Itoa(i), Body: b})
	}
	return ev
}

// Drain hands a queue's batches to handle, as the event source mapping would, until done says
// so (given how many messages were handled without failure), and returns the events handed
// over. It fails the test after ten seconds without progress.
func Drain(t testing.TB, q *queue.Queue, batchSize int, handle queue.BatchHandler, done func(handled int) bool) []events.SQSEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var mu sync.Mutex
	var seen []events.SQSEvent
	handled, last := 0, time.Now()
	go func() {
		defer close(stopped)
		q.Poll(ctx, batchSize, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			resp, err := handle(ctx, ev)
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, ev)
			if err == nil {
				handled += len(ev.Records) - len(resp.BatchItemFailures)
				last = time.Now()
			}
			return resp, err
		}, Log(t))
	}()
	defer func() { cancel(); <-stopped }()
	for {
		mu.Lock()
		n, quiet := handled, time.Since(last)
		mu.Unlock()
		if done(n) {
			mu.Lock()
			defer mu.Unlock()
			return append([]events.SQSEvent(nil), seen...)
		}
		if quiet > 10*time.Second {
			t.Fatalf("drained %d messages, then nothing for 10 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DrainAll hands a queue's batches to handle, concurrently from pollers pollers, as an event
// source mapping with that concurrency would, until the queue has held no message, waiting or
// in flight, for a second (its counts lag a little behind sends), and returns how many
// messages were handed over. A message that keeps failing leaves after its maximum receives.
// It fails the test after two minutes: a bound for being stuck, not a speed check.
func DrainAll(t testing.TB, q *queue.Queue, pollers, batchSize int, handle queue.BatchHandler) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	handed := 0
	var wg sync.WaitGroup
	for range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.Poll(ctx, batchSize, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				mu.Lock()
				handed += len(ev.Records)
				mu.Unlock()
				return handle(ctx, ev)
			}, Log(t))
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for empty := 0; empty < 4; {
		time.Sleep(250 * time.Millisecond)
		visible, inFlight, err := q.Depth(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if visible+inFlight == 0 {
			empty++
		} else {
			empty = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s still holds %d messages and %d in flight after two minutes", q.URL(), visible, inFlight)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return handed
}

// Bucket starts an in-memory gofakes3 server for the test and returns a bucket on it.
func Bucket(t testing.TB) *blobstore.Bucket {
	t.Helper()
	return BucketAt(t, S3Server(t))
}

// S3Server starts an in-memory gofakes3 server for the test and returns its URL.
func S3Server(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

// BucketAt returns the test's bucket on the gofakes3 server at url (made if it is not there),
// through a client of its own configured with opts too.
func BucketAt(t testing.TB, url string, opts ...func(*s3.Options)) *blobstore.Bucket {
	t.Helper()
	client := s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(url),
		UsePathStyle:               true,
		Credentials:                aws.AnonymousCredentials{},
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}, opts...)
	b := blobstore.New(client, "openvitals-test")
	if err := b.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// RUM returns the websites' real-user data over the store's table and a bucket of its own
// (gofakes3), kept 400 days.
func RUM(t testing.TB, st *store.Store) *rumstore.Store {
	t.Helper()
	return rumstore.New(st, Bucket(t), 400*24*time.Hour, Log(t))
}

// Leftovers returns what names a website anywhere: the keys ("PK|SK") of every item of a full
// table scan and every object of a whole-bucket listing that contain its ID. After its purge
// there must be none.
func Leftovers(t testing.TB, clients awsclient.Clients, st *store.Store, objects *blobstore.Bucket, website string) []string {
	t.Helper()
	ctx := context.Background()
	var left []string
	for _, k := range TableOf(t, clients, st).Keys() {
		if strings.Contains(k, website) {
			left = append(left, "item "+k)
		}
	}
	keys, err := objects.Keys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, website) {
			left = append(left, "object "+k)
		}
	}
	return left
}

// Log is a logger that writes into the test's output.
func Log(t testing.TB) *slog.Logger {
	return LogAt(t, slog.LevelInfo)
}

// LogAt is a logger that writes its records of level and above into the test's output and
// into each of also.
func LogAt(t testing.TB, level slog.Level, also ...io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.MultiWriter(append(also, testWriter{t})...), &slog.HandlerOptions{Level: level}))
}

// Output collects what is written to it from several goroutines at once: a logger's records, a
// process's stdout and stderr (which exec copies from two goroutines).
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write adds p to what was written.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Receive consumes a queue until want messages came and a second passed without more, or five
// seconds passed without any, and returns their bodies. (ApproximateNumberOfMessages lags behind
// batch sends, so counting means receiving.)
func Receive(t testing.TB, q *queue.Queue, want int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var mu sync.Mutex
	var bodies []string
	last := time.Now()
	go func() {
		defer close(done)
		q.Poll(ctx, 10, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ev.Records {
				bodies = append(bodies, m.Body)
			}
			last = time.Now()
			return events.SQSEventResponse{}, nil
		}, Log(t))
	}()
	defer func() { cancel(); <-done }()
	for {
		mu.Lock()
		n, quiet := len(bodies), time.Since(last)
		mu.Unlock()
		if n >= want && quiet > time.Second || quiet > 5*time.Second {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), bodies...)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SES starts an SES stand-in of the test's own (on a free port), stopped when the test ends.
func SES(t testing.TB) *standin.SES {
	t.Helper()
	root, err := standin.Root()
	if err != nil {
		t.Fatal(err)
	}
	ses, err := standin.StartSES(context.Background(), root, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ses.Stop)
	return ses
}

// Depth is how many messages q holds, visible or in flight.
func Depth(t testing.TB, q *queue.Queue) int {
	t.Helper()
	visible, inFlight, err := q.Depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return visible + inFlight
}

// Deadline is how long q's settings give a message's work before it counts as lost (see
// queue.Settings.Deadline), read from the queue as the sweeps read it.
func Deadline(t testing.TB, q *queue.Queue) time.Duration {
	t.Helper()
	s, err := q.Settings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Deadline()
}
