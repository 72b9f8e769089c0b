// Package local runs all of openvitals in one process for development: the whole REST API on
// OPENVITALS_ADDR, every worker polling its queue as Lambda's event source mappings would,
// clocks standing in for the daily and sweep EventBridge rules, and an in-process S3 stand-in,
// over DynamoDB Local and the SQS stand-in that `make run` starts. At start it queues again the
// series tests and multistep runs the run before left unfinished, whose messages went with the
// previous SQS stand-in. With OPENVITALS_DEMO=1 (make demo) it also serves a demo shop and fills
// the service with a website monitoring it (see demo.go). cmd/local is its main; tests start it
// through internal/testing/localtest.
package local

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	bolt "go.etcd.io/bbolt"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/apifn"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/standin"
)

// Run starts the local service and serves until ctx ends or a part fails. Each step below
// returns what undoes it, deferred here in the order the parts must stop.
func Run(ctx context.Context, log *slog.Logger) error {
	setDefault("AWS_REGION", "us-east-1")
	setDefault("AWS_ACCESS_KEY_ID", "test")
	setDefault("AWS_SECRET_ACCESS_KEY", "test")
	setDefault("AWS_EC2_METADATA_DISABLED", "true")
	// The API's port first: a port in use is told at once, not after the stand-ins and workers
	// have started (connections made before Serve wait in the backlog).
	addr := envOr("OPENVITALS_ADDR", "127.0.0.1:8080")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("the API's address (OPENVITALS_ADDR): %w", err)
	}
	defer ln.Close()
	// Cancelled on any return, before the workers are waited for: an error after they started
	// stops them instead of waiting on them for ever.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	demoMode, err := demoFromEnv()
	if err != nil {
		return err
	}
	var shop *demoshop.Shop
	shopHost := ""
	if demoMode {
		var stopShop func()
		if shop, shopHost, stopShop, err = serveDemoShop(); err != nil {
			return err
		}
		defer stopShop()
	}
	dataDir, err := prepareDataDir()
	if err != nil {
		return err
	}
	stopStandins, err := startStandins(ctx, dataDir, log)
	if err != nil {
		return err
	}
	defer stopStandins() // after the workers (deferred later) have stopped
	svc, err := newService(ctx, ln.Addr().String(), log)
	if err != nil {
		return err
	}
	admin, err := provisionKeys(ctx, svc)
	if err != nil {
		return err
	}
	if demoMode && admin.Key == "" {
		return errors.New("the demo needs an admin key it knows: one made now, kept in OPENVITALS_DATA_DIR, or one of OPENVITALS_KEYS")
	}
	stopWorkers, err := startWorkers(ctx, svc)
	if err != nil {
		return err
	}
	defer stopWorkers()
	defer cancel() // runs before stopWorkers
	if err := startClocks(ctx, svc, schedulefn.New(svc), log); err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	var d *demo
	if demoMode {
		d = &demo{api: demoAPI{base: base, key: admin.Key}, admin: admin, account: admin.Account,
			store: svc.Store, objects: svc.Objects, beacons: rum.NewCollector(svc.Queues.Beacon), shop: shop, host: shopHost, log: log}
	}
	return serve(ctx, cancel, ln, svc, admin, d, dataDir)
}

// serveDemoShop sets the defaults the demo needs and serves the demo shop on
// OPENVITALS_DEMO_ADDR; it returns the shop, its host and what stops it.
func serveDemoShop() (*demoshop.Shop, string, func(), error) {
	// The shop is on this host: the workers may audit it over plain HTTP. One Lighthouse
	// run an audit keeps the seeding near two minutes.
	setDefault("OPENVITALS_TARGET_SCHEME", "http")
	setDefault("OPENVITALS_ALLOW_PRIVATE_TARGETS", "true")
	setDefault("OPENVITALS_AUDIT_RUNS", "1")
	shop, err := demoshop.New()
	if err != nil {
		return nil, "", nil, err
	}
	host, stopShop, err := shop.Serve(envOr("OPENVITALS_DEMO_ADDR", "127.0.0.1:8081"))
	if err != nil {
		return nil, "", nil, err
	}
	return shop, host, stopShop, nil
}

// prepareDataDir creates OPENVITALS_DATA_DIR, when set, and keeps the credentials key in it;
// it returns the directory ("" when the data is kept in memory).
func prepareDataDir() (string, error) {
	dataDir := os.Getenv("OPENVITALS_DATA_DIR")
	if dataDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", err
	}
	return dataDir, keepCredentialsKey(dataDir)
}

// startStandins starts the in-process S3 and SES stand-ins, each unless the environment
// points the SDK at another, and returns what stops them.
func startStandins(ctx context.Context, dataDir string, log *slog.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if os.Getenv("AWS_ENDPOINT_URL_S3") == "" {
		addr, stopS3, err := serveS3(envOr("OPENVITALS_S3_ADDR", "127.0.0.1:9090"), dataDir, log)
		if err != nil {
			return nil, err
		}
		stops = append(stops, stopS3)
		os.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
	}
	if os.Getenv("AWS_ENDPOINT_URL_SESV2") == "" {
		ses, err := startSES(ctx)
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, ses.Stop)
		os.Setenv("AWS_ENDPOINT_URL_SESV2", ses.URL)
		setDefault("OPENVITALS_EMAIL_FROM", "openvitals@localhost")
		log.Info("the SES stand-in keeps the email channels' messages", "mailbox", ses.URL+"/store")
	}
	return stop, nil
}

// newService reads the configuration, creates the table, queues and bucket it names and builds
// the service, whose links lead to apiAddr unless the environment says otherwise.
func newService(ctx context.Context, apiAddr string, log *slog.Logger) (*service.Service, error) {
	cfg, err := service.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	// Links in notifications lead to this service: the API where it listens, the dashboard
	// under it, unless set otherwise.
	if os.Getenv(service.EnvAPIURL) == "" {
		cfg.APIURL = "http://" + apiAddr
		if os.Getenv(service.EnvDashboardURL) == "" {
			cfg.DashboardURL = cfg.APIURL + "/app/"
		}
	}
	clients, err := awsclient.New(ctx)
	if err != nil {
		return nil, err
	}
	if err := service.Provision(ctx, cfg, clients); err != nil {
		return nil, fmt.Errorf("create table, queues and bucket (are the stand-ins running? use make run): %w", err)
	}
	return service.New(cfg, clients, log)
}

// startClocks starts what EventBridge's rules do in AWS: the purge sweep, and sched's daily
// fan-out and sweep of overdue work, after queueing again what the run before left unfinished.
func startClocks(ctx context.Context, svc *service.Service, sched *schedule.Scheduler, log *slog.Logger) error {
	go sweepPurges(ctx, svc)
	hour, err := dailyHour()
	if err != nil {
		return err
	}
	// The SQS stand-in keeps its messages in memory, and make run starts a new one: what the
	// run before queued and did not finish is queued again (a message still there from a
	// stand-in that outlived it is then left unplayed, so nothing runs twice).
	if _, err := sched.Requeue(ctx, time.Now().UTC()); err != nil {
		log.Error("queue unfinished work again", "err", err)
	}
	go runDaily(ctx, sched, hour, log)
	go runSweeps(ctx, sched, log)
	return nil
}

// serve serves the API on ln until ctx ends; with the demo (d not nil) it seeds it once the
// API serves, and a demo that cannot be made stops the service (cancel) with its error.
func serve(ctx context.Context, cancel context.CancelFunc, ln net.Listener, svc *service.Service, admin adminKey, d *demo, dataDir string) error {
	base := "http://" + ln.Addr().String()
	handler := apifn.New(svc).Handler()
	if d != nil {
		// The demo's visits' beacons are recorded as collect takes them, to be replayed.
		handler = d.visits.record(handler)
	}
	srv := &http.Server{Addr: ln.Addr().String(), Handler: logRequests(handler, svc.Log), ReadHeaderTimeout: 10 * time.Second}
	svc.Log.Info("openvitals is serving", "url", base, "table", svc.Config.Table, "bucket", svc.Config.Bucket)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	// The demo is seeded through the API, so once it serves. It says how to sign in once it
	// is ready.
	demoErr := make(chan error, 1)
	if d != nil {
		seeded := make(chan struct{})
		go func() {
			defer close(seeded)
			if err := d.ready(ctx, dataDir); err != nil && ctx.Err() == nil {
				demoErr <- err
				cancel()
			}
		}()
		defer func() { cancel(); <-seeded }() // nothing of the demo outlives run
	} else {
		announce(os.Stdout, base, admin)
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	select {
	case err := <-demoErr:
		return err
	default:
		return nil
	}
}

// LogLevel reads OPENVITALS_LOG_LEVEL: debug, info (the default), warn or error. Request
// lines are debug: a local service's log says what the service did, not every click.
func LogLevel() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(envOr("OPENVITALS_LOG_LEVEL", "info"))); err != nil {
		return l, fmt.Errorf("OPENVITALS_LOG_LEVEL=%q: want debug, info, warn or error", os.Getenv("OPENVITALS_LOG_LEVEL"))
	}
	return l, nil
}

// demoFromEnv reads OPENVITALS_DEMO: whether to serve the demo (make demo).
func demoFromEnv() (bool, error) {
	v := os.Getenv("OPENVITALS_DEMO")
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("OPENVITALS_DEMO=%q: want 1 or 0", v)
	}
	return on, nil
}

// startSES starts the SES v2 stand-in on OPENVITALS_SES_PORT (default 8005; 0 for any free
// port).
func startSES(ctx context.Context) (*standin.SES, error) {
	port, err := strconv.Atoi(envOr("OPENVITALS_SES_PORT", "8005"))
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("OPENVITALS_SES_PORT=%q: want a port", os.Getenv("OPENVITALS_SES_PORT"))
	}
	root, err := standin.Root()
	if err != nil {
		return nil, err
	}
	return standin.StartSES(ctx, root, port)
}

// adminKey is an admin grant whose key the local service knows, for its closing lines and
// the demo.
type adminKey struct {
	apikey.Grant
	made bool   // made at this start
	file string // where the key is kept; "" for a key of OPENVITALS_KEYS or one kept nowhere
}

// provisionKeys creates the accounts and keys of OPENVITALS_KEYS or, when it is unset, the
// account "local" with a fresh admin key, kept in the data directory. It returns an admin
// grant whose key it knows, for the demo: the first admin of OPENVITALS_KEYS, else local's key
// made now or kept in the data directory; its Key is "" when it knows none.
func provisionKeys(ctx context.Context, svc *service.Service) (adminKey, error) {
	spec := os.Getenv("OPENVITALS_KEYS")
	if spec == "" {
		local := adminKey{Grant: apikey.Grant{Account: "local", Role: model.RoleAdmin}}
		dataDir := os.Getenv("OPENVITALS_DATA_DIR")
		keyFile := filepath.Join(dataDir, "local-admin-key")
		// Data kept from an earlier run (OPENVITALS_DATA_DIR) keeps its keys: make a key once.
		exists, err := svc.Store.AccountExists(ctx, "local")
		if err != nil {
			return local, err
		}
		if exists {
			if dataDir != "" {
				if b, err := os.ReadFile(keyFile); err == nil {
					local.Key, local.file = strings.TrimSpace(string(b)), keyFile
				}
			}
			return local, nil
		}
		local.Key, local.made = apikey.Generate(), true
		if err := apikey.Provision(ctx, svc.Store, local.Grant, "make run"); err != nil {
			return local, err
		}
		// Beside the data it opens, for the README's tour and scripts (local use only).
		if dataDir != "" {
			if err := os.WriteFile(keyFile, []byte(local.Key+"\n"), 0o600); err != nil {
				return local, err
			}
			local.file = keyFile
		}
		return local, nil
	}
	grants, err := apikey.ParseGrants(spec)
	if err != nil {
		return adminKey{}, fmt.Errorf("OPENVITALS_KEYS: %w", err)
	}
	var admin adminKey
	for _, g := range grants {
		if err := apikey.Provision(ctx, svc.Store, g, "OPENVITALS_KEYS"); err != nil {
			return admin, err
		}
		if g.Role == model.RoleAdmin && admin.Key == "" {
			admin.Grant = g
		}
	}
	svc.Log.Info("API keys from OPENVITALS_KEYS are ready", "keys", len(grants))
	return admin, nil
}

// announce writes the lines a person starts from, after the log of the start: the dashboard's
// address and the admin key to sign in with, and where that key is kept.
func announce(w io.Writer, base string, k adminKey) {
	fmt.Fprintf(w, "\nopenvitals is serving %s: open the dashboard at %s/app/\n", base, base)
	switch {
	case k.Key == "" && os.Getenv("OPENVITALS_KEYS") != "":
		fmt.Fprintf(w, "Sign in with a key of OPENVITALS_KEYS.\n\n")
	case k.Key == "":
		fmt.Fprintf(w, "Account %q exists; its admin key is kept nowhere here (make keys makes another, make reset starts over).\n\n", k.Account)
	default:
		how := "from OPENVITALS_KEYS"
		switch {
		case k.made && k.file != "":
			how = "made now, kept in " + k.file
		case k.made:
			how = "made now, kept nowhere: the data is in memory"
		case k.file != "":
			how = "made on the first start, kept in " + k.file
		}
		fmt.Fprintf(w, "Account %q, %s API key (%s):\n\n    %s\n\n", k.Account, k.Role, how, k.Key)
	}
}

// sweepPurges queues again, at start and then every ten minutes, the purges whose message was
// lost (in AWS the daily scheduler does this).
func sweepPurges(ctx context.Context, svc *service.Service) {
	for {
		if n, err := purge.Sweep(ctx, svc.Store, purge.NewQueue(svc.Queues.Purge), svc.Config.PurgeSettle+5*time.Minute); err != nil {
			if ctx.Err() != nil {
				return // stopping: not an error worth a line
			}
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

// runDaily plays EventBridge's daily rules: once a minute it checks the clock, and in the daily
// hour it invokes the scheduler's handler with an event naming no job, so all of them run
// (each queues nothing twice the same day).
func runDaily(ctx context.Context, sched *schedule.Scheduler, hour int, log *slog.Logger) {
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
			res, err := sched.Handle(ctx, events.CloudWatchEvent{Source: "openvitals.local", DetailType: "Scheduled Event", Time: now})
			if err != nil {
				log.Error("daily schedule", "err", err)
				continue
			}
			log.Info("daily fan-out started", "day", res.Day, "jobs", res.Fanouts)
		}
	}
}

// sweepEvery is how often the local sweep clock runs, as the stack's sweep rule does in AWS:
// well within the shortest deadline of overdue work (the audit queue's, 15 minutes).
const sweepEvery = time.Minute

// runSweeps plays the stack's sweep rule: every sweepEvery it invokes the scheduler's handler
// with an event naming only the sweep, which ends or queues again the overdue work.
func runSweeps(ctx context.Context, sched *schedule.Scheduler, log *slog.Logger) {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	detail := json.RawMessage(`{"jobs":["` + schedule.JobSweep + `"]}`)
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			ev := events.CloudWatchEvent{Source: "openvitals.local", DetailType: "Scheduled Event", Time: now.UTC(), Detail: detail}
			if _, err := sched.Handle(ctx, ev); err != nil && ctx.Err() == nil {
				log.Error("sweep overdue work", "err", err)
			}
		}
	}
}

// keepCredentialsKey gives the process a credentials key kept in dataDir when none is
// configured, so that Search Console credentials stored in the kept table still open after a
// restart (the service would otherwise make a key per process).
func keepCredentialsKey(dataDir string) error {
	if os.Getenv("OPENVITALS_CREDENTIALS_KEY") != "" || os.Getenv("OPENVITALS_CREDENTIALS_KEY_SECRET") != "" {
		return nil
	}
	file := filepath.Join(dataDir, "credentials-key")
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		b = []byte(base64.StdEncoding.EncodeToString(seal.GenerateKey()) + "\n")
		err = os.WriteFile(file, b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("credentials key: %w", err)
	}
	if _, err := seal.ParseKey(string(b)); err != nil {
		return fmt.Errorf("%s: %w (delete it to make another; credentials stored under it will not open)", file, err)
	}
	return os.Setenv("OPENVITALS_CREDENTIALS_KEY", strings.TrimSpace(string(b)))
}

// serveS3 runs the in-process S3 stand-in (gofakes3) and returns its address and a function
// that stops it. Its objects are kept in dataDir/s3.bolt when dataDir is set (make run:
// .run/data), else in memory.
func serveS3(addr, dataDir string, log *slog.Logger) (string, func(), error) {
	var backend gofakes3.Backend = s3mem.New()
	where, closeDB := "in memory", func() {}
	if dataDir != "" {
		where = filepath.Join(dataDir, "s3.bolt")
		// bbolt locks its file: a timeout, rather than waiting for ever behind another process.
		db, err := bolt.Open(where, 0o600, &bolt.Options{Timeout: 10 * time.Second})
		if err != nil {
			return "", nil, fmt.Errorf("S3 stand-in: %s: %w (does another make run use this data directory?)", where, err)
		}
		backend, closeDB = s3bolt.New(db), func() { _ = db.Close() }
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		closeDB()
		return "", nil, fmt.Errorf("S3 stand-in: %w", err)
	}
	srv := &http.Server{Handler: gofakes3.New(backend).Server(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("S3 stand-in (gofakes3) is serving", "url", "http://"+ln.Addr().String(), "objects", where)
	return ln.Addr().String(), func() { _ = srv.Close(); closeDB() }, nil
}

func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "ms", time.Since(start).Milliseconds())
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
