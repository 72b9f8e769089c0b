package service

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
)

// Config is what the functions read from the environment (docs/configuration.md lists every
// variable).
type Config struct {
	Table  string // OPENVITALS_TABLE
	Bucket string // OPENVITALS_BUCKET
	// RUMBucket is OPENVITALS_RUM_BUCKET: the bucket of real-user data (each website's day
	// objects and large log entries), apart from the reports' so that it keeps its own
	// retention.
	RUMBucket string
	// ExportBucket is OPENVITALS_EXPORT_BUCKET: the bucket the daily Parquet exports go to
	// (internal/export), apart from the others so that it keeps its own retention and the
	// Glue tables read nothing else.
	ExportBucket string
	// RUMRetention is OPENVITALS_RUM_RETENTION_DAYS: how long real-user data is kept (31 to
	// 3650 days, default 400); the stack expires the RUM bucket's objects after as many days.
	RUMRetention time.Duration
	// ReportRetentionDays is OPENVITALS_REPORT_RETENTION_DAYS and ExportRetentionDays
	// OPENVITALS_EXPORT_RETENTION_DAYS: after how many days the stack's lifecycle rules expire
	// reports (and every object of the report bucket) and exports (defaults 90 and 731), the
	// most a website may keep them (model.Bounds).
	ReportRetentionDays, ExportRetentionDays int
	// The queues, each a name (looked up) or a URL (as CDK passes them).
	PurgeQueue     string // OPENVITALS_PURGE_QUEUE: deletions to purge
	AuditQueue     string // OPENVITALS_AUDIT_QUEUE: lab audits, one page and device a message
	MultistepQueue string // OPENVITALS_MULTISTEP_QUEUE: multistep runs
	// FanoutQueue is OPENVITALS_FANOUT_QUEUE: the daily fan-out, one message per daily job,
	// page of the websites listing and website.
	FanoutQueue string
	// UXQueue is OPENVITALS_UX_QUEUE: the daily collections of user-experience data (CrUX
	// records and search analytics), one message per website.
	UXQueue string
	// BeaconQueue is OPENVITALS_BEACON_QUEUE: the standard queue collect sends page views to.
	BeaconQueue string
	// RUMQueue is OPENVITALS_RUM_QUEUE: the FIFO queue (name ends in .fifo) the rebatcher sends
	// page views to, per website, for the aggregator.
	RUMQueue string
	// NotifyQueue is OPENVITALS_NOTIFY_QUEUE: events to deliver to the websites' channels.
	NotifyQueue string
	// EmailFrom is OPENVITALS_EMAIL_FROM: the address (a verified SES identity) email channels
	// send from; "" leaves email channels failing with a message saying so.
	EmailFrom string
	// APIURL is OPENVITALS_API_URL: the API's base URL, for the links in notifications.
	APIURL string
	// DashboardURL is OPENVITALS_DASHBOARD_URL: the dashboard's address, which the links people
	// open in notifications lead to (its views'); by default the API's own /app/.
	DashboardURL string
	// RUMURL is OPENVITALS_RUM_URL: the deployment's RUM entry (the rum function's URL), which
	// the dashboard names in the snippet it shows; "" names the API's own origin.
	RUMURL string
	// TrustViewerCountry is OPENVITALS_TRUST_VIEWER_COUNTRY: take a beacon's country from the
	// CloudFront-Viewer-Country header (true only where CloudFront sets it).
	TrustViewerCountry bool
	// AllowPrivateTargets is OPENVITALS_ALLOW_PRIVATE_TARGETS: lets the workers and their
	// browser reach loopback and private addresses, and a website's domain be an IP address
	// with a port (local use and tests only).
	AllowPrivateTargets bool
	// TargetScheme is OPENVITALS_TARGET_SCHEME: "https", or "http" for local use and tests.
	TargetScheme string
	// AuditRuns is OPENVITALS_AUDIT_RUNS: Lighthouse runs per audit, 1 to 9 (default 3).
	AuditRuns int
	// CrUXEndpoint and SearchConsoleEndpoint are OPENVITALS_CRUX_ENDPOINT and
	// OPENVITALS_SEARCH_CONSOLE_ENDPOINT: the Google APIs' base URLs ("" for Google's own).
	CrUXEndpoint, SearchConsoleEndpoint string
	// PurgeSettle is OPENVITALS_PURGE_SETTLE_SECONDS: how long after a deletion its purge passes
	// again, to remove what a worker busy with the deleted website at that moment stores later.
	// The stack sets it from its longest function timeout; default 16 minutes.
	PurgeSettle time.Duration
	// CrUXQueriesPerMinute is OPENVITALS_CRUX_QUERIES_PER_MINUTE: how many Chrome UX Report
	// queries this process may make a minute, 1 to CrUXQuota (default CrUXQuota, for one
	// process alone). The stack divides the quota among the ux workers that may run at once.
	CrUXQueriesPerMinute int
}

// The range of OPENVITALS_RUM_RETENTION_DAYS: at least a month, so that a month's running
// totals outlive it.
const (
	MinRUMRetentionDays = 31
	MaxRUMRetentionDays = 3650
)

// MaxRetentionDays is the most OPENVITALS_REPORT_RETENTION_DAYS and
// OPENVITALS_EXPORT_RETENTION_DAYS may be (their defaults are model's).
const MaxRetentionDays = 3650

// days reads a number of days from name, least to MaxRetentionDays.
func days(name string, fallback, least int) (int, error) {
	v := env(name, strconv.Itoa(fallback))
	n, err := strconv.Atoi(v)
	if err != nil || n < least || n > MaxRetentionDays {
		return 0, fmt.Errorf("%s=%q: want %d to %d", name, v, least, MaxRetentionDays)
	}
	return n, nil
}

// RetentionBounds are the least, default and most days a website may keep each kind of its
// data in this deployment.
func (c Config) RetentionBounds() model.RetentionBounds {
	return model.Bounds(c.ReportRetentionDays, int(c.RUMRetention/(24*time.Hour)), c.ExportRetentionDays)
}

// CrUXQuota is the Chrome UX Report API's quota: 150 queries a minute for each API key.
const CrUXQuota = 150

// ConfigFromEnv reads Config, with the defaults the local service uses. In Lambda, FromEnv
// first makes sure (RequireFor) that no setting its function needs is left to them.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Table:                 env(EnvTable, "openvitals"),
		Bucket:                env(EnvBucket, "openvitals"),
		RUMBucket:             env(EnvRUMBucket, "openvitals-rum"),
		ExportBucket:          env(EnvExportBucket, "openvitals-exports"),
		EmailFrom:             os.Getenv("OPENVITALS_EMAIL_FROM"),
		APIURL:                env(EnvAPIURL, "http://127.0.0.1:8080"),
		DashboardURL:          os.Getenv(EnvDashboardURL),
		TrustViewerCountry:    flag("OPENVITALS_TRUST_VIEWER_COUNTRY"),
		RUMURL:                os.Getenv("OPENVITALS_RUM_URL"),
		AllowPrivateTargets:   flag("OPENVITALS_ALLOW_PRIVATE_TARGETS"),
		TargetScheme:          env("OPENVITALS_TARGET_SCHEME", "https"),
		CrUXEndpoint:          os.Getenv("OPENVITALS_CRUX_ENDPOINT"),
		SearchConsoleEndpoint: os.Getenv("OPENVITALS_SEARCH_CONSOLE_ENDPOINT"),
	}
	for _, q := range QueueVars() {
		q.Set(&cfg, env(q.Env, q.Default))
	}
	if cfg.TargetScheme != "https" && cfg.TargetScheme != "http" {
		return cfg, fmt.Errorf("OPENVITALS_TARGET_SCHEME=%q: want https or http", cfg.TargetScheme)
	}
	runs := env("OPENVITALS_AUDIT_RUNS", "3")
	n, err := strconv.Atoi(runs)
	if err != nil || n < 1 || n > 9 {
		return cfg, fmt.Errorf("OPENVITALS_AUDIT_RUNS=%q: want 1 to 9", runs)
	}
	cfg.AuditRuns = n
	settle := env(EnvPurgeSettle, "960")
	secs, err := strconv.Atoi(settle)
	if err != nil || secs < 0 || secs > 24*3600 {
		return cfg, fmt.Errorf("%s=%q: want 0 to 86400", EnvPurgeSettle, settle)
	}
	cfg.PurgeSettle = time.Duration(secs) * time.Second
	retention := env(EnvRUMRetentionDays, strconv.Itoa(model.DefaultRUMRetentionDays))
	rumDays, err := strconv.Atoi(retention)
	if err != nil || rumDays < MinRUMRetentionDays || rumDays > MaxRUMRetentionDays {
		return cfg, fmt.Errorf("%s=%q: want %d to %d", EnvRUMRetentionDays, retention, MinRUMRetentionDays, MaxRUMRetentionDays)
	}
	cfg.RUMRetention = time.Duration(rumDays) * 24 * time.Hour
	if cfg.ReportRetentionDays, err = days(EnvReportRetentionDays, model.DefaultReportRetentionDays, model.MinReportRetentionDays); err != nil {
		return cfg, err
	}
	if cfg.ExportRetentionDays, err = days(EnvExportRetentionDays, model.DefaultExportRetentionDays, model.MinRetentionDays); err != nil {
		return cfg, err
	}
	qpm := env(EnvCrUXQueriesPerMinute, strconv.Itoa(CrUXQuota))
	if cfg.CrUXQueriesPerMinute, err = strconv.Atoi(qpm); err != nil || cfg.CrUXQueriesPerMinute < 1 || cfg.CrUXQueriesPerMinute > CrUXQuota {
		return cfg, fmt.Errorf("%s=%q: want 1 to %d", EnvCrUXQueriesPerMinute, qpm, CrUXQuota)
	}
	if cfg.DashboardURL == "" {
		cfg.DashboardURL = strings.TrimRight(cfg.APIURL, "/") + "/app/"
	}
	if u, err := url.Parse(cfg.DashboardURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return cfg, fmt.Errorf("%s=%q: want the dashboard's absolute URL (https://example.com/app/)", EnvDashboardURL, cfg.DashboardURL)
	}
	return cfg, nil
}

// QueueVar is one of the service's queues as the configuration names it.
type QueueVar struct {
	// Env is the variable holding the queue's name or URL, e.g. OPENVITALS_NOTIFY_QUEUE.
	Env string
	// Default is the queue's name when Env is unset (the local service's); a FIFO queue's
	// ends in .fifo.
	Default string
	// Settings are the queue's settings where Provision creates it (locally and in tests; in
	// AWS the stack sets them).
	Settings queue.Settings
	field    func(*Config) *string
	opened   func(*Queues) **queue.Queue
}

// Name is the queue's name or URL in c.
func (q QueueVar) Name(c Config) string { return *q.field(&c) }

// Set names the queue in c (a name or a URL).
func (q QueueVar) Set(c *Config, nameOrURL string) { *q.field(c) = nameOrURL }

// FIFO tells whether the queue is a FIFO queue.
func (q QueueVar) FIFO() bool { return strings.HasSuffix(q.Default, ".fifo") }

// QueueVars declares every queue of the service once: ConfigFromEnv, New, Provision and
// Config.ResourceEnv derive from it, and so do the tests' fixtures, so that a queue added here
// reaches all of them.
func QueueVars() []QueueVar {
	return []QueueVar{
		{EnvPurgeQueue, "openvitals-purge", PurgeQueueSettings,
			func(c *Config) *string { return &c.PurgeQueue }, func(q *Queues) **queue.Queue { return &q.Purge }},
		{EnvAuditQueue, "openvitals-audit", AuditQueueSettings,
			func(c *Config) *string { return &c.AuditQueue }, func(q *Queues) **queue.Queue { return &q.Audit }},
		{EnvMultistepQueue, "openvitals-multistep", MultistepQueueSettings,
			func(c *Config) *string { return &c.MultistepQueue }, func(q *Queues) **queue.Queue { return &q.Multistep }},
		{EnvFanoutQueue, "openvitals-fanout", FanoutQueueSettings,
			func(c *Config) *string { return &c.FanoutQueue }, func(q *Queues) **queue.Queue { return &q.Fanout }},
		{EnvUXQueue, "openvitals-ux", UXQueueSettings,
			func(c *Config) *string { return &c.UXQueue }, func(q *Queues) **queue.Queue { return &q.UX }},
		{EnvBeaconQueue, "openvitals-beacons", BeaconQueueSettings,
			func(c *Config) *string { return &c.BeaconQueue }, func(q *Queues) **queue.Queue { return &q.Beacon }},
		{EnvRUMQueue, "openvitals-rum.fifo", RUMQueueSettings,
			func(c *Config) *string { return &c.RUMQueue }, func(q *Queues) **queue.Queue { return &q.RUM }},
		{EnvNotifyQueue, "openvitals-notify", NotifyQueueSettings,
			func(c *Config) *string { return &c.NotifyQueue }, func(q *Queues) **queue.Queue { return &q.Notify }},
	}
}

// NameQueues names every queue of c by the URL create returns for the queue's settings and
// kind: tests give each test queues of its own (awstest.Queues).
func (c *Config) NameQueues(create func(s queue.Settings, fifo bool) (url string)) {
	for _, q := range QueueVars() {
		q.Set(c, create(q.Settings, q.FIFO()))
	}
}

// ResourceEnv is c's table, bucket and queues as the variables (KEY=value) ConfigFromEnv
// reads them from: what the stack gives a function.
func (c Config) ResourceEnv() []string {
	env := []string{EnvTable + "=" + c.Table, EnvBucket + "=" + c.Bucket, EnvRUMBucket + "=" + c.RUMBucket, EnvExportBucket + "=" + c.ExportBucket}
	for _, q := range QueueVars() {
		env = append(env, q.Env+"="+q.Name(c))
	}
	return env
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// flag reads a boolean variable; anything but a true value (true, 1, t...) is false.
func flag(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}
