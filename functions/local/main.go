// Command local runs all of openvitals in one process for development: the whole REST API on
// OPENVITALS_ADDR, the purge worker polling its queue, and an in-process S3 stand-in, over
// DynamoDB Local and the SQS stand-in that `make run` starts.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/fieldcollect"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/runworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, log); err != nil {
		log.Error("openvitals stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	setDefault("AWS_REGION", "us-east-1")
	setDefault("AWS_ACCESS_KEY_ID", "test")
	setDefault("AWS_SECRET_ACCESS_KEY", "test")
	setDefault("AWS_EC2_METADATA_DISABLED", "true")
	if os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
		addr, err := serveS3(ctx, envOr("OPENVITALS_S3_ADDR", "127.0.0.1:9090"), log)
		if err != nil {
			return err
		}
		os.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
	}

	cfg := service.ConfigFromEnv()
	clients, err := service.NewClients(ctx)
	if err != nil {
		return err
	}
	if err := service.Provision(ctx, cfg, clients); err != nil {
		return fmt.Errorf("create table, queues and bucket (are the stand-ins running? use make run): %w", err)
	}
	svc, err := service.New(cfg, clients, log)
	if err != nil {
		return err
	}
	if err := provisionKeys(ctx, svc); err != nil {
		return err
	}

	purgeQueue, err := queue.Open(ctx, clients.SQS, cfg.PurgeQueue)
	if err != nil {
		return err
	}
	go purgeQueue.Poll(ctx, 10, svc.Purger.HandleSQS, log)
	go svc.BeaconQueue.Poll(ctx, 10, rum.NewRebatcher(svc.RUMQueue, log).HandleSQS, log)
	go svc.RUMQueue.Poll(ctx, 10, rum.NewAggregator(svc.Store, log, geo.Country).HandleSQS, log)
	go sweepPurges(ctx, svc)
	// Field data, one website at a time as the collector function takes them; without
	// OPENVITALS_CRUX_API_KEY only search analytics are collected.
	collector, err := fieldcollect.FromEnv(ctx, svc)
	if err != nil {
		return fmt.Errorf("field collector: %w", err)
	}
	go svc.FieldQueue.Poll(ctx, 1, collector.HandleSQS, log)

	// Audits run one at a time: two Lighthouse runs at once skew each other's timings.
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	worker, runner, err := auditworker.FromEnv(svc, root)
	if err != nil {
		return fmt.Errorf("audit worker: %w", err)
	}
	defer runner.Close()
	runs, err := runworker.FromEnv(svc)
	if err != nil {
		return fmt.Errorf("multistep worker: %w", err)
	}
	// One browser job at a time: a multistep run beside a Lighthouse run skews both.
	var browserMu sync.Mutex
	oneAtATime := func(h queue.BatchHandler) queue.BatchHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			browserMu.Lock()
			defer browserMu.Unlock()
			return h(ctx, ev)
		}
	}
	var workers sync.WaitGroup
	workers.Add(2)
	go func() { defer workers.Done(); svc.AuditQueue.Poll(ctx, 1, oneAtATime(worker.HandleSQS), log) }()
	go func() { defer workers.Done(); svc.MultistepQueue.Poll(ctx, 1, oneAtATime(runs.HandleSQS), log) }()
	defer workers.Wait()
	hour, err := dailyHour()
	if err != nil {
		return err
	}
	go runDaily(ctx, svc, hour)

	addr := envOr("OPENVITALS_ADDR", "127.0.0.1:8080")
	srv := &http.Server{Addr: addr, Handler: logRequests(svc.API.Handler(), log), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Info("openvitals is serving", "url", "http://"+ln.Addr().String(), "table", cfg.Table, "bucket", cfg.Bucket)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// provisionKeys creates the accounts and keys of OPENVITALS_KEYS or, when it is unset, the
// account "local" with a fresh admin key, printed once.
func provisionKeys(ctx context.Context, svc *service.Service) error {
	spec := os.Getenv("OPENVITALS_KEYS")
	if spec == "" {
		g := apikey.Grant{Account: "local", Role: "admin", Key: apikey.Generate()}
		if err := apikey.Provision(ctx, svc.Store, g, "make run"); err != nil {
			return err
		}
		fmt.Printf("\nAccount %q, admin API key (shown once):\n\n    %s\n\n", g.Account, g.Key)
		return nil
	}
	grants, err := apikey.ParseGrants(spec)
	if err != nil {
		return fmt.Errorf("OPENVITALS_KEYS: %w", err)
	}
	for _, g := range grants {
		if err := apikey.Provision(ctx, svc.Store, g, "OPENVITALS_KEYS"); err != nil {
			return err
		}
	}
	svc.Log.Info("API keys from OPENVITALS_KEYS are ready", "keys", len(grants))
	return nil
}

// sweepPurges queues again, at start and then every ten minutes, the purges whose message was
// lost (in AWS the daily scheduler does this).
func sweepPurges(ctx context.Context, svc *service.Service) {
	for {
		if n, err := purge.Sweep(ctx, svc.Store, svc.PurgeQueue, 5*time.Minute); err != nil {
			svc.Log.Error("sweep pending purges", "err", err)
		} else if n > 0 {
			svc.Log.Info("queued pending purges again", "purges", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Minute):
		}
	}
}

// dailyHour reads OPENVITALS_DAILY_HOUR, the UTC hour of the daily audits (default 3).
func dailyHour() (int, error) {
	v := envOr("OPENVITALS_DAILY_HOUR", "3")
	h, err := strconv.Atoi(v)
	if err != nil || h < 0 || h > 23 {
		return 0, fmt.Errorf("OPENVITALS_DAILY_HOUR=%q: want 0 to 23", v)
	}
	return h, nil
}

// runDaily plays EventBridge's daily rule: once a minute it checks the clock, and in the daily
// hour it invokes the scheduler's handler (which queues nothing twice the same day).
func runDaily(ctx context.Context, svc *service.Service, hour int) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	lastDay := ""
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			now = now.UTC()
			if now.Hour() != hour || now.Format("20060102") == lastDay {
				continue
			}
			lastDay = now.Format("20060102")
			res, err := svc.Daily(ctx, events.CloudWatchEvent{Source: "openvitals.local", DetailType: "Scheduled Event", Time: now})
			if err != nil {
				svc.Log.Error("daily audits", "err", err)
				continue
			}
			svc.Log.Info("daily audits queued", "day", res.Day, "audits", res.Queued, "fieldCollections", res.FieldQueued)
		}
	}
}

// serveS3 runs the in-process S3 stand-in (gofakes3, in memory) and returns its address.
func serveS3(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("S3 stand-in: %w", err)
	}
	srv := &http.Server{Handler: gofakes3.New(s3mem.New()).Server(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	log.Info("S3 stand-in (gofakes3, in memory) is serving", "url", "http://"+ln.Addr().String())
	return ln.Addr().String(), nil
}

func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "ms", time.Since(start).Milliseconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func setDefault(name, value string) {
	if os.Getenv(name) == "" {
		os.Setenv(name, value)
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
