// Package service reads openvitals' configuration from the environment and builds the clients
// and components every function shares. Lambda mains and the local service both start here,
// so that the code that runs locally is the code that runs in AWS.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// Config is what the functions read from the environment.
type Config struct {
	Table      string // OPENVITALS_TABLE
	Bucket     string // OPENVITALS_BUCKET
	PurgeQueue string // OPENVITALS_PURGE_QUEUE: a queue name or URL
	AuditQueue string // OPENVITALS_AUDIT_QUEUE: a queue name or URL
	// MultistepQueue is OPENVITALS_MULTISTEP_QUEUE: a queue name or URL.
	MultistepQueue string
	// RUMQueue is OPENVITALS_RUM_QUEUE: the FIFO queue (name ends in .fifo) of real-user page
	// views, a name or URL.
	RUMQueue string
	// TrustViewerCountry is OPENVITALS_TRUST_VIEWER_COUNTRY: take a beacon's country from the
	// CloudFront-Viewer-Country header (true only where CloudFront sets it).
	TrustViewerCountry bool
}

// ConfigFromEnv reads Config, with the defaults the local service uses.
func ConfigFromEnv() Config {
	return Config{
		Table:          env("OPENVITALS_TABLE", "openvitals"),
		Bucket:         env("OPENVITALS_BUCKET", "openvitals"),
		PurgeQueue:     env("OPENVITALS_PURGE_QUEUE", "openvitals-purge"),
		AuditQueue:     env("OPENVITALS_AUDIT_QUEUE", "openvitals-audit"),
		MultistepQueue: env("OPENVITALS_MULTISTEP_QUEUE", "openvitals-multistep"),
		RUMQueue:       env("OPENVITALS_RUM_QUEUE", "openvitals-rum.fifo"),
		TrustViewerCountry: func() bool {
			v, err := strconv.ParseBool(os.Getenv("OPENVITALS_TRUST_VIEWER_COUNTRY"))
			return err == nil && v
		}(),
	}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// Clients are the AWS clients, configured from the SDK's own environment variables
// (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3, ...).
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client
}

// NewClients loads the AWS configuration and builds the clients.
func NewClients(ctx context.Context) (Clients, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS config: %w", err)
	}
	return Clients{
		DynamoDB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			// DynamoDB Local sends CRC32 headers that do not match some error bodies, which
			// only fills the log with warnings; AWS's own endpoint keeps the check.
			o.DisableValidateResponseChecksum = os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
		}),
		SQS: sqs.NewFromConfig(cfg),
		S3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			// S3 stand-ins (gofakes3, LocalStack) serve buckets by path, not by host name.
			o.UsePathStyle = os.Getenv("AWS_ENDPOINT_URL_S3") != ""
			// Checksums only where S3 requires them: stand-ins reject the newer trailers.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}),
	}, nil
}

// Service is openvitals' components, wired.
type Service struct {
	Config     Config
	Log        *slog.Logger
	Store      *store.Store
	Objects    *blobstore.Bucket
	PurgeQueue *purge.Queue
	Purger     *purge.Worker
	AuditQueue *queue.Queue
	Scheduler  *audit.Scheduler
	// MultistepQueue carries run messages; Runs records and queues runs.
	MultistepQueue *queue.Queue
	Runs           *multistep.Queue
	// RUMQueue carries page views from the collect endpoint to the aggregator.
	RUMQueue *queue.Queue
	API      *api.Server
}

// New builds the service over existing resources (Provision creates them locally). Given a
// queue URL, as CDK gives the functions, it makes no network call, so a cold start pays only
// for building clients.
func New(cfg Config, clients Clients, log *slog.Logger) (*Service, error) {
	st := store.New(clients.DynamoDB, cfg.Table)
	objects := blobstore.New(clients.S3, cfg.Bucket)
	q, err := queue.Open(context.Background(), clients.SQS, cfg.PurgeQueue)
	if err != nil {
		return nil, err
	}
	pq := purge.NewQueue(q)
	aq, err := queue.Open(context.Background(), clients.SQS, cfg.AuditQueue)
	if err != nil {
		return nil, err
	}
	sched := audit.NewScheduler(st, aq, log)
	mq, err := queue.Open(context.Background(), clients.SQS, cfg.MultistepQueue)
	if err != nil {
		return nil, err
	}
	runs := multistep.NewQueue(st, mq, log)
	rq, err := queue.Open(context.Background(), clients.SQS, cfg.RUMQueue)
	if err != nil {
		return nil, err
	}
	return &Service{
		Config: cfg, Log: log, Store: st, Objects: objects, PurgeQueue: pq,
		Purger:     purge.NewWorker(st, objects, log),
		AuditQueue: aq, Scheduler: sched, MultistepQueue: mq, Runs: runs, RUMQueue: rq,
		API: api.New(api.Deps{Store: st, Purger: pq, Auditor: sched, Runner: runs, Reports: objects, Log: log,
			AllowLocalTargets: AllowsLocalTargets(),
			Beacons:           rum.NewCollector(rq), Field: rum.NewReader(st),
			TrustViewerCountry: cfg.TrustViewerCountry}),
	}, nil
}

// FromEnv builds the service from the environment; every Lambda main starts with it.
func FromEnv(ctx context.Context) (*Service, error) {
	clients, err := NewClients(ctx)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	return New(ConfigFromEnv(), clients, log)
}

// Provision creates the table, queues and bucket the configuration names, where they do not
// exist yet. The local service and tests use it; in AWS the CDK stack owns these resources.
func Provision(ctx context.Context, cfg Config, clients Clients) error {
	if err := store.New(clients.DynamoDB, cfg.Table).CreateTable(ctx); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.PurgeQueue, PurgeQueueSettings); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.AuditQueue, AuditQueueSettings); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.MultistepQueue, MultistepQueueSettings); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.RUMQueue, RUMQueueSettings); err != nil {
		return err
	}
	return blobstore.New(clients.S3, cfg.Bucket).Create(ctx)
}

// AuditQueueSettings are the local audit queue's: an audit of 3 Lighthouse runs takes about a
// minute here, so a message stays hidden for 5 minutes before a retry, and a page that fails
// three times goes to the dead-letter queue. (In AWS the visibility must exceed the worker's
// 15-minute timeout; the CDK stack sets it.)
var AuditQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: 3}

// MultistepQueueSettings are the local multistep queue's: a run takes at most 3 minutes.
var MultistepQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: 3}

// RUMQueueSettings are the local RUM queue's: a fold takes well under a second.
var RUMQueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3}

// PurgeQueueSettings match the purge queue of the CDK stack.
var PurgeQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: 3}

// AllowsLocalTargets tells whether OPENVITALS_ALLOW_PRIVATE_TARGETS opens loopback and private
// targets (local use and tests only); websites may then be IP addresses with a port.
func AllowsLocalTargets() bool {
	// Read here rather than through the browser package, which the API functions do not link.
	allow, err := strconv.ParseBool(os.Getenv("OPENVITALS_ALLOW_PRIVATE_TARGETS"))
	return err == nil && allow
}

// Daily is the scheduler function's handler, invoked by the daily EventBridge rule (and by
// make daily and the local clock): it queues the day's audits and multistep runs, then queues
// again the purges whose message was lost more than 15 minutes ago.
func (s *Service) Daily(ctx context.Context, ev events.CloudWatchEvent) (audit.DailyResult, error) {
	res, err := s.Scheduler.HandleEvent(ctx, ev)
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	if _, rerr := s.Runs.Daily(ctx, at); rerr != nil && err == nil {
		err = rerr
	}
	if n, serr := purge.Sweep(ctx, s.Store, s.PurgeQueue, 15*time.Minute); serr != nil {
		s.Log.ErrorContext(ctx, "sweep pending purges", "err", serr)
	} else if n > 0 {
		s.Log.InfoContext(ctx, "queued pending purges again", "purges", n)
	}
	return res, err
}

// TargetScheme reads OPENVITALS_TARGET_SCHEME: "https" (the default), or "http" for local use
// and tests.
func TargetScheme() (string, error) {
	scheme := env("OPENVITALS_TARGET_SCHEME", "https")
	if scheme != "https" && scheme != "http" {
		return "", fmt.Errorf("OPENVITALS_TARGET_SCHEME=%q: want https or http", scheme)
	}
	return scheme, nil
}
