// Package service reads openvitals' configuration from the environment and builds the clients
// every function shares: the table, the bucket, the queues, the credentials keyring and the
// secrets. It is the composition root: the Lambda mains (Handler) and the local programs all
// start here, so that the code that runs locally is the code that runs in AWS. Each deployed
// part is built from a Service by a package of its own beneath this one (apifn, schedulefn,
// browserworkersfn for the two workers that drive Chromium, and one <worker>fn for each other
// worker package), so that a function links only its own part; no other package under
// internal/ imports the service, and the parts take what they need explicitly.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/store"
)

// Queues are the opened queues of every pipeline.
type Queues struct {
	Purge, Audit, Multistep, Fanout, UX, Beacon, RUM, Notify *queue.Queue
}

// Service is the configuration and the clients built from it: the table, the bucket, the
// queues, the credentials keyring and the secrets.
type Service struct {
	// AWS is the loaded AWS configuration (see awsclient.Clients.AWS).
	AWS     aws.Config
	Config  Config
	Log     *slog.Logger
	Store   *store.Store
	Objects *blobstore.Bucket
	// Exports is the bucket of the daily Parquet exports (internal/export).
	Exports *blobstore.Bucket
	// RUM keeps the websites' real-user data: their logs and day objects.
	RUM    *rumstore.Store
	Queues Queues
	// Credentials seals and opens the integration credentials stored in the table.
	Credentials *seal.Keyring
	secrets     *secretsmanager.Client
}

// New builds the service over existing resources (Provision creates them locally). Given queue
// URLs, as CDK gives the functions, it makes no network call, so a cold start pays only for
// building clients.
func New(cfg Config, clients awsclient.Clients, log *slog.Logger) (*Service, error) {
	svc := &Service{
		Config: cfg, Log: log,
		Store:       store.New(clients.DynamoDB, cfg.Table),
		Objects:     blobstore.New(clients.S3, cfg.Bucket),
		Exports:     blobstore.New(clients.S3, cfg.ExportBucket),
		Credentials: seal.NewKeyring(credentialsKey(clients.SecretsManager, log)),
		AWS:         clients.AWS,
		secrets:     clients.SecretsManager,
	}
	svc.RUM = rumstore.New(svc.Store, blobstore.New(clients.S3, cfg.RUMBucket), cfg.RUMRetention, log)
	for _, q := range QueueVars() {
		opened, err := queue.Open(context.Background(), clients.SQS, q.Name(cfg))
		if err != nil {
			return nil, err
		}
		*q.opened(&svc.Queues) = opened
	}
	return svc, nil
}

// FromEnv builds the service from the environment; every Lambda main starts with it, naming
// its function (its directory under functions/). In Lambda a variable the function needs that
// is missing or malformed fails the start, naming the variable (RequireFor).
func FromEnv(ctx context.Context, function string) (*Service, error) {
	fn, err := FunctionNamed(function)
	if err != nil {
		return nil, err
	}
	if err := RequireFor(fn); err != nil {
		return nil, err
	}
	cfg, err := ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	clients, err := awsclient.New(ctx)
	if err != nil {
		return nil, err
	}
	return New(cfg, clients, slog.New(slog.NewJSONHandler(os.Stderr, nil)))
}

// Provision creates the table, queues and buckets the configuration names, where they do not
// exist yet. The local service and tests use it; in AWS the CDK stack owns these resources.
func Provision(ctx context.Context, cfg Config, clients awsclient.Clients) error {
	if err := store.New(clients.DynamoDB, cfg.Table).CreateTable(ctx); err != nil {
		return err
	}
	for _, q := range QueueVars() {
		if _, err := queue.Create(ctx, clients.SQS, q.Name(cfg), q.Settings); err != nil {
			return err
		}
	}
	if err := blobstore.New(clients.S3, cfg.Bucket).Create(ctx); err != nil {
		return err
	}
	if err := blobstore.New(clients.S3, cfg.RUMBucket).Create(ctx); err != nil {
		return err
	}
	return blobstore.New(clients.S3, cfg.ExportBucket).Create(ctx)
}

// The local queues' settings. (In AWS the visibility must be six times the consumer's Lambda
// timeout; the CDK stack sets it.)
var (
	// PurgeQueueSettings: a purge takes seconds.
	PurgeQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: queue.MaxReceives}
	// AuditQueueSettings: an audit of 3 Lighthouse runs takes about a minute here, so a
	// message stays hidden for 5 minutes before a retry. A day's audits may wait behind a
	// backlog: the queue keeps them as long as SQS can, as the stack's does.
	AuditQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: queue.MaxReceives, Retention: queue.MaxRetention}
	// FanoutQueueSettings: a message of the daily fan-out takes seconds; its worker holds its
	// claims for at most fanout.DefaultLease (1 minute) here, so a message delivered again
	// after the visibility timeout finds them free to take over. Kept as long as the audits
	// it queues, so that a stalled fan-out can be redriven.
	FanoutQueueSettings = queue.Settings{VisibilityTimeout: 2 * time.Minute, MaxReceives: queue.MaxReceives, Retention: queue.MaxRetention}
	// MultistepQueueSettings: a run takes at most 3 minutes.
	MultistepQueueSettings = queue.Settings{VisibilityTimeout: 5 * time.Minute, MaxReceives: queue.MaxReceives}
	// UXQueueSettings: a website of a hundred pages takes about a minute and a half of CrUX
	// queries at 150 a minute, and up to 15 minutes when the API keeps answering 429.
	UXQueueSettings = queue.Settings{VisibilityTimeout: 15 * time.Minute, MaxReceives: queue.MaxReceives}
	// BeaconQueueSettings: appending a batch to the websites' logs takes milliseconds.
	BeaconQueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives}
	// RUMQueueSettings: a compaction takes seconds. Locally the queue delays nothing, so that
	// real users' views show at once; the stack delays each message (see the rebatcher).
	RUMQueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives}
	// NotifyQueueSettings: a delivery takes at most 10 seconds a channel; retries are new
	// messages, so a visibility timeout only covers a worker that stopped.
	NotifyQueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: queue.MaxReceives}
)

// CrUXAPIKey returns the Chrome UX Report API key: OPENVITALS_CRUX_API_KEY, or in AWS the
// secret OPENVITALS_CRUX_API_KEY_SECRET names; "" when there is none (CrUX is then skipped).
func (s *Service) CrUXAPIKey(ctx context.Context) (string, error) {
	return secret(ctx, s.secrets, EnvCrUXAPIKey, EnvCrUXAPIKeySecret)
}

// secret returns the value of the environment variable valueEnv or, when it is empty, the
// string of the Secrets Manager secret (ARN or name) in the variable secretEnv; "" when
// neither is set. In AWS the values live in Secrets Manager; locally and in tests, in the
// environment.
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
// 32 bytes. Outside Lambda, without either, it makes a key for this process (make run keeps
// one in its data directory instead: internal/local).
func credentialsKey(sm *secretsmanager.Client, log *slog.Logger) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		v, err := secret(ctx, sm, EnvCredentialsKey, EnvCredentialsKeySecret)
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
		if InLambda() {
			return nil, errors.New("neither OPENVITALS_CREDENTIALS_KEY nor OPENVITALS_CREDENTIALS_KEY_SECRET is set")
		}
		log.Warn("OPENVITALS_CREDENTIALS_KEY is not set: integration credentials are sealed under a key made for this process, and those stored will not open after a restart")
		return seal.GenerateKey(), nil
	}
}
