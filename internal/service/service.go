// Package service reads openvitals' configuration from the environment and builds the clients
// and components every function shares. Lambda mains and the local service both start here,
// so that the code that runs locally is the code that runs in AWS.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/fieldqueue"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/seal"
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
	// FieldQueue is OPENVITALS_FIELD_QUEUE: the queue of daily field-data collections, one
	// message per website, a name or URL.
	FieldQueue string
	// BeaconQueue is OPENVITALS_BEACON_QUEUE: the standard queue collect sends page views to,
	// a name or URL.
	BeaconQueue string
	// RUMQueue is OPENVITALS_RUM_QUEUE: the FIFO queue (name ends in .fifo) the rebatcher sends
	// page views to, per website, for the aggregator; a name or URL.
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
		FieldQueue:     env("OPENVITALS_FIELD_QUEUE", "openvitals-field"),
		BeaconQueue:    env("OPENVITALS_BEACON_QUEUE", "openvitals-beacons"),
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
	// SecretsManager reads the secrets of AWS deployments (the CrUX API key, the credentials
	// key); locally the same values come from environment variables.
	SecretsManager *secretsmanager.Client
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
		SecretsManager: secretsmanager.NewFromConfig(cfg),
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
	// FieldQueue carries the daily field-data collections; FieldScheduler queues them.
	FieldQueue     *queue.Queue
	FieldScheduler *fieldqueue.Scheduler
	// Credentials seals and opens the integration credentials stored in the table.
	Credentials *seal.Keyring
	secrets     *secretsmanager.Client
	// BeaconQueue carries page views from collect to the rebatcher, RUMQueue from the
	// rebatcher to the aggregator.
	BeaconQueue *queue.Queue
	RUMQueue    *queue.Queue
	API         *api.Server
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
	fq, err := queue.Open(context.Background(), clients.SQS, cfg.FieldQueue)
	if err != nil {
		return nil, err
	}
	credentials := seal.NewKeyring(credentialsKey(clients.SecretsManager, log))
	rq, err := queue.Open(context.Background(), clients.SQS, cfg.RUMQueue)
	if err != nil {
		return nil, err
	}
	bq, err := queue.Open(context.Background(), clients.SQS, cfg.BeaconQueue)
	if err != nil {
		return nil, err
	}
	return &Service{
		Config: cfg, Log: log, Store: st, Objects: objects, PurgeQueue: pq,
		Purger:     purge.NewWorker(st, objects, log),
		AuditQueue: aq, Scheduler: sched, MultistepQueue: mq, Runs: runs, RUMQueue: rq, BeaconQueue: bq,
		FieldQueue: fq, FieldScheduler: fieldqueue.NewScheduler(st, fq, log),
		Credentials: credentials, secrets: clients.SecretsManager,
		API: api.New(api.Deps{Store: st, Purger: pq, Auditor: sched, Runner: runs, Reports: objects, Log: log, Credentials: credentials,
			AllowLocalTargets: AllowsLocalTargets(),
			Beacons:           rum.NewCollector(bq), Field: rum.NewReader(st),
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
	if _, err := queue.Create(ctx, clients.SQS, cfg.FieldQueue, FieldQueueSettings); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.RUMQueue, RUMQueueSettings); err != nil {
		return err
	}
	if _, err := queue.Create(ctx, clients.SQS, cfg.BeaconQueue, BeaconQueueSettings); err != nil {
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

// FieldQueueSettings are the local field queue's: a website of a hundred pages takes about a
// minute and a half of CrUX queries at 150 a minute, and up to 15 minutes when the API keeps
// answering 429, so a message stays hidden for 15 minutes before a retry.
var FieldQueueSettings = queue.Settings{VisibilityTimeout: 15 * time.Minute, MaxReceives: fieldqueue.MaxAttempts}

// BeaconQueueSettings are the local beacon queue's: a regrouping takes milliseconds.
var BeaconQueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3}

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

// DailyResult is what the daily handler queued: the audits, and the field-data collections.
type DailyResult struct {
	audit.DailyResult
	FieldQueued int              `json:"fieldQueued"`
	FieldJobs   []fieldqueue.Job `json:"fieldJobs,omitempty"`
}

// The daily jobs an event may ask for. AWS runs each from a rule of its own (at an hour of its
// own); an event naming none, as the local clock and make daily send, runs all three.
const (
	JobAudits    = "audits"
	JobMultistep = "multistep"
	JobField     = "field"
)

// dailyJobs reads the jobs an event's detail names: {"jobs": ["audits", ...]}.
func dailyJobs(ev events.CloudWatchEvent) (map[string]bool, error) {
	var detail struct {
		Jobs []string `json:"jobs"`
	}
	if len(ev.Detail) > 0 {
		if err := json.Unmarshal(ev.Detail, &detail); err != nil {
			return nil, fmt.Errorf("daily event detail: %w", err)
		}
	}
	jobs := map[string]bool{}
	for _, j := range detail.Jobs {
		if j != JobAudits && j != JobMultistep && j != JobField {
			return nil, fmt.Errorf("daily event: unknown job %q", j)
		}
		jobs[j] = true
	}
	if len(jobs) == 0 {
		jobs = map[string]bool{JobAudits: true, JobMultistep: true, JobField: true}
	}
	return jobs, nil
}

// Daily is the scheduler function's handler, invoked by the daily EventBridge rules (and by
// make daily and the local clock): it queues the day's audits, multistep runs and field-data
// collections (those the event names; all when it names none), then queues again the purges
// whose message was lost more than 15 minutes ago.
func (s *Service) Daily(ctx context.Context, ev events.CloudWatchEvent) (DailyResult, error) {
	jobs, err := dailyJobs(ev)
	if err != nil {
		return DailyResult{}, err
	}
	var res DailyResult
	if jobs[JobAudits] {
		res.DailyResult, err = s.Scheduler.HandleEvent(ctx, ev)
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	if jobs[JobMultistep] {
		if _, rerr := s.Runs.Daily(ctx, at); rerr != nil && err == nil {
			err = rerr
		}
	}
	if jobs[JobField] {
		fjobs, ferr := s.FieldScheduler.Daily(ctx, at)
		res.FieldQueued, res.FieldJobs = len(fjobs), fjobs
		if ferr != nil && err == nil {
			err = ferr
		}
	}
	if n, serr := purge.Sweep(ctx, s.Store, s.PurgeQueue, 15*time.Minute); serr != nil {
		s.Log.ErrorContext(ctx, "sweep pending purges", "err", serr)
	} else if n > 0 {
		s.Log.InfoContext(ctx, "queued pending purges again", "purges", n)
	}
	return res, err
}

// Secret returns the value of the environment variable valueEnv or, when it is empty, the
// string of the Secrets Manager secret (ARN or name) in the variable secretEnv; "" when
// neither is set. In AWS the values live in Secrets Manager; locally and in tests, in the
// environment.
func (s *Service) Secret(ctx context.Context, valueEnv, secretEnv string) (string, error) {
	return secret(ctx, s.secrets, valueEnv, secretEnv)
}

func secret(ctx context.Context, sm *secretsmanager.Client, valueEnv, secretEnv string) (string, error) {
	if v := strings.TrimSpace(os.Getenv(valueEnv)); v != "" {
		return v, nil
	}
	id := os.Getenv(secretEnv)
	if id == "" {
		return "", nil
	}
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("read secret %s (%s): %w", id, secretEnv, err)
	}
	return strings.TrimSpace(aws.ToString(out.SecretString)), nil
}

// credentialsKey loads the key that seals integration credentials, on first use:
// OPENVITALS_CREDENTIALS_KEY, or the secret OPENVITALS_CREDENTIALS_KEY_SECRET names, base64 of
// 32 bytes. Outside Lambda, without either, it makes a key for this process: the local table
// lives in memory anyway.
func credentialsKey(sm *secretsmanager.Client, log *slog.Logger) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		v, err := secret(ctx, sm, "OPENVITALS_CREDENTIALS_KEY", "OPENVITALS_CREDENTIALS_KEY_SECRET")
		if err != nil {
			return nil, err
		}
		if v != "" {
			key, err := seal.ParseKey(v)
			if err != nil {
				return nil, fmt.Errorf("OPENVITALS_CREDENTIALS_KEY: %w", err)
			}
			return key, nil
		}
		if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" {
			return nil, errors.New("neither OPENVITALS_CREDENTIALS_KEY nor OPENVITALS_CREDENTIALS_KEY_SECRET is set")
		}
		log.Warn("OPENVITALS_CREDENTIALS_KEY is not set: integration credentials are sealed under a key made for this process, and those stored will not open after a restart")
		return seal.GenerateKey(), nil
	}
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
