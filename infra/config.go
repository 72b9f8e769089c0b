package main

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// openvitalsStackProps configures the stack. Each field left unset is read from the CDK
// context (the context* keys), else takes its default.
type openvitalsStackProps struct {
	awscdk.StackProps

	// FunctionsDir holds one sub-directory per function with its Linux arm64 `bootstrap`,
	// as `make build` writes them. A relative path is relative to infra/. Default
	// defaultFunctionsDir.
	FunctionsDir string
	// RoutesFile is the API's route table (see routeTable). A relative path is relative to
	// infra/. Default defaultRoutesFile.
	RoutesFile string
	// DailyHourUTC is the UTC hour (0 to 23) of the daily audits. Default defaultDailyHourUTC.
	DailyHourUTC *int
	// MultistepHourUTC and UXHourUTC are the UTC hours of the daily multistep runs and
	// user-experience data collection. Default: DailyHourUTC.
	MultistepHourUTC *int
	UXHourUTC        *int
	// AuditsPerDay is how many audits (pages times devices) a day's schedule holds, and
	// AuditSeconds how long one takes: with AuditWindowHours, the hours a day's audits may
	// take, they give the audit workers that run at once (see auditWorkers). Defaults
	// defaultAuditsPerDay, defaultAuditSeconds and defaultAuditWindowHours.
	AuditsPerDay, AuditSeconds, AuditWindowHours *int
	// AuditMemoryMB is the audit worker's memory (minAuditMemoryMB to maxAuditMemoryMB), and so
	// its CPU share: less costs less a second and measures desktop loads less steadily.
	// Default defaultAuditMemoryMB.
	AuditMemoryMB *int
	// AuditMaxConcurrency caps the audit workers that run at once, one audit each (2 to
	// 1000): a day that needs more leaves a backlog, which an alarm reports. Default
	// defaultAuditMaxConcurrency.
	AuditMaxConcurrency *int
	// MultistepMaxConcurrency is how many multistep runs may play at once, one per worker
	// (2 to 1000). Default defaultMultistepMaxConcurrency.
	MultistepMaxConcurrency *int
	// ReportRetentionDays is how long S3 keeps a report or screenshot (minReportRetentionDays
	// to 3650). Default defaultReportRetentionDays.
	ReportRetentionDays *int
	// ExportRetentionDays is how long the export bucket keeps the daily Parquet exports (1 to
	// 3650). Default defaultExportRetentionDays.
	ExportRetentionDays *int
	// APIThrottleRate and APIThrottleBurst limit each route of the API (requests per second,
	// 1 to maxThrottleRate and maxThrottleBurst). Defaults defaultAPIThrottleRate and
	// defaultAPIThrottleBurst.
	APIThrottleRate, APIThrottleBurst *int
	// RUMThrottleRate and RUMThrottleBurst limit each public RUM route. Defaults
	// defaultRUMThrottleRate and defaultRUMThrottleBurst.
	RUMThrottleRate, RUMThrottleBurst *int
	// RUMRetentionDays is how long real-user data is kept (minRUMRetentionDays to 3650).
	// Default defaultRUMRetentionDays.
	RUMRetentionDays *int
	// RUMMaxConcurrency is the reserved concurrency of the RUM function, which caps its
	// function URL (0 to 1000; 0 reserves none). Default 0.
	RUMMaxConcurrency *int
	// TrustViewerCountry makes the RUM function take a beacon's country from the
	// CloudFront-Viewer-Country header: set it only when CloudFront is in front of the API.
	// Default false.
	TrustViewerCountry *bool
	// AlarmEmail, when set, is subscribed to the alarm topic.
	AlarmEmail string
	// EmailFrom is the address email channels send from: an SES identity (the address or its
	// domain) verified in the stack's region. Unset, email channels fail with a message
	// saying so, and the notifier gets no SES permission.
	EmailFrom string
}

// Context keys (`cdk deploy -c dailyHourUtc=5`, or "context" in cdk.json) that configure the
// stack when openvitalsStackProps leaves the matching field unset.
const (
	contextFunctionsDir = "functionsDir"
	contextDailyHourUTC = "dailyHourUtc"
	// contextMultistepHourUTC and contextUXHourUTC: the UTC hours of the daily multistep runs
	// and user-experience data collection (default: dailyHourUtc).
	contextMultistepHourUTC    = "multistepHourUtc"
	contextUXHourUTC           = "uxHourUtc"
	contextAuditMaxConcurrency = "auditMaxConcurrency"
	// contextAuditsPerDay, contextAuditSeconds and contextAuditWindowHours: the audits a day
	// holds, the seconds one takes and the hours a day's may take, which size the audit
	// workers (see auditWorkers).
	contextAuditsPerDay     = "auditsPerDay"
	contextAuditSeconds     = "auditSeconds"
	contextAuditWindowHours = "auditWindowHours"
	// contextAuditMemoryMB: the audit worker's memory.
	contextAuditMemoryMB = "auditMemoryMB"
	// contextMultistepMaxConcurrency: how many multistep runs may play at once.
	contextMultistepMaxConcurrency = "multistepMaxConcurrency"
	// contextReportRetentionDays: after how many days S3 deletes a report or screenshot.
	contextReportRetentionDays = "reportRetentionDays"
	// contextExportRetentionDays: after how many days S3 deletes an export.
	contextExportRetentionDays = "exportRetentionDays"
	// contextAPIThrottleRate and contextAPIThrottleBurst: requests per second (steady, and
	// burst) each route of the API accepts before answering 429.
	contextAPIThrottleRate  = "apiThrottleRate"
	contextAPIThrottleBurst = "apiThrottleBurst"
	// contextRUMThrottleRate and contextRUMThrottleBurst: the same for each public RUM route
	// (the snippet and the beacons), which carry one request per page view of every site.
	contextRUMThrottleRate  = "rumThrottleRate"
	contextRUMThrottleBurst = "rumThrottleBurst"
	// contextRUMRetentionDays: after how many days real-user data is deleted.
	contextRUMRetentionDays = "rumRetentionDays"
	// contextRUMMaxConcurrency: the RUM function's reserved concurrency, which caps the public
	// function URL beacons reach it by (0: none reserved).
	contextRUMMaxConcurrency = "rumMaxConcurrency"
	// contextTrustViewerCountry: "true" when CloudFront is in front of the API and sets
	// CloudFront-Viewer-Country; otherwise a client could claim any country with that header.
	contextTrustViewerCountry = "trustViewerCountry"
	// contextAlarmEmail: an address subscribed to the alarm topic (it must confirm by mail).
	contextAlarmEmail = "alarmEmail"
	// contextEmailFrom: the address (a verified SES identity) email channels send from.
	contextEmailFrom = "emailFrom"
)

// Defaults of the settings above.
const (
	// defaultFunctionsDir is where `make build` writes <function>/bootstrap, relative to infra/
	// (the directory the CDK app and its tests run in).
	defaultFunctionsDir = "../dist"
	// defaultRoutesFile is the route table the main module keeps generated, relative to infra/.
	defaultRoutesFile = "../internal/api/routes.json"
	// defaultDailyHourUTC is the UTC hour of the daily audits.
	defaultDailyHourUTC = 3
	// defaultAuditsPerDay: 100 websites of 50 pages, both devices.
	defaultAuditsPerDay = 10000
	// defaultAuditSeconds: new websites are measured by applied throttling, whose audit of
	// three Lighthouse runs takes about 57 s on desktop and 73 s on mobile (BENCHMARKS.md,
	// BenchmarkAuditMethod: three runs' timing.total and the audit's own work); simulated
	// audits take 28 s (BenchmarkAuditThroughput), so a deployment of older websites may set
	// less.
	defaultAuditSeconds = 70
	// defaultAuditWindowHours leaves a day's last 4 hours for retries before the next day's
	// audits are queued.
	defaultAuditWindowHours = 20
	// defaultAuditMaxConcurrency caps the audit workers below the 1,000 concurrent executions
	// an account has by default (a new account may have 10 until it asks), which every other
	// function shares: raise it with the account's quota.
	defaultAuditMaxConcurrency = 100
	// minEventSourceConcurrency and maxEventSourceConcurrency are what an SQS event source's
	// maximum concurrency may be.
	minEventSourceConcurrency = 2
	maxEventSourceConcurrency = 1000
	// defaultMultistepMaxConcurrency is how many multistep workers may run at once: each plays
	// one journey at a time.
	defaultMultistepMaxConcurrency = 2
	// defaultReportRetentionDays: the API reads only the reports of the last 30 days (the
	// latest audit of a page); three months leave time to look into an old audit by hand.
	defaultReportRetentionDays = 90
	// minReportRetentionDays keeps every report the API may still serve.
	minReportRetentionDays = 31
	// defaultExportRetentionDays: two years and a day, as long as the table keeps the history.
	defaultExportRetentionDays = 731
	// defaultAPIThrottleRate and defaultAPIThrottleBurst suit scripts and dashboards calling
	// with API keys; API Gateway applies them to each route separately.
	defaultAPIThrottleRate  = 50
	defaultAPIThrottleBurst = 100
	// defaultRUMThrottleRate and defaultRUMThrottleBurst: 500 beacons a second is about 43
	// million page views a day across every monitored site.
	defaultRUMThrottleRate  = 500
	defaultRUMThrottleBurst = 1000
	// defaultRUMRetentionDays keeps 13 months, so that a year can be compared with the one
	// before; the segment reports read at most 400 days. minRUMRetentionDays keeps a month's
	// running totals while the month lasts (the main module's service.MinRUMRetentionDays).
	defaultRUMRetentionDays = 400
	minRUMRetentionDays     = 31
	// maxThrottleRate and maxThrottleBurst are API Gateway's default account quotas per
	// region; a higher setting could never take effect.
	maxThrottleRate  = 10000
	maxThrottleBurst = 5000
)

// settings are the stack's resolved and validated configuration.
type settings struct {
	stackProps awscdk.StackProps
	// functionsDir is absolute, and holds <function>/bootstrap for every function.
	functionsDir string
	// routes are the API's endpoints, checked against the groups api.go declares.
	routes              routeTable
	dailyHourUTC        int
	multistepHourUTC    int
	uxHourUTC           int
	auditsPerDay        int
	auditSeconds        int
	auditWindowHours    int
	auditMaxConcurrency int
	auditMemoryMB       int
	// auditWorkersNeeded is how many audit workers the day's audits need (auditWorkers), and
	// auditConcurrency how many run at once: as many, within 2 and auditMaxConcurrency.
	auditWorkersNeeded, auditConcurrency int
	multistepMaxConcurrency              int
	reportRetentionDays                  int
	exportRetentionDays                  int
	exportTables                         []exportTable
	rumRetentionDays                     int
	rumMaxConcurrency                    int
	apiThrottle, rumThrottle             throttle
	trustViewerCountry                   bool
	// alarmEmail is "" for no subscription.
	alarmEmail string
	// emailFrom is "" when email channels are not configured.
	emailFrom string
	// browserBinariesHash names the SHA-256 of each binary in the browser image: the image's
	// build contexts hold them but are not hashed by CDK, so a new build of either must
	// change the image asset's hash.
	browserBinariesHash string
}

// throttle is a steady rate (requests per second) and a burst API Gateway allows a route.
type throttle struct{ rate, burst int }

// resolveSettings reads props, then the context of scope, then the defaults, and checks them.
func resolveSettings(scope constructs.Construct, props *openvitalsStackProps) (settings, error) {
	var p openvitalsStackProps
	if props != nil {
		p = *props
	}
	s := settings{stackProps: p.StackProps}
	var err error
	if s.functionsDir, err = resolveFunctionsDir(scope, p.FunctionsDir); err != nil {
		return s, err
	}
	routesFile := p.RoutesFile
	if routesFile == "" {
		routesFile = defaultRoutesFile
	}
	if s.routes, err = loadRouteTable(routesFile); err != nil {
		return s, err
	}
	if err := resolveNumbers(scope, p, &s); err != nil {
		return s, err
	}
	if s.trustViewerCountry, err = boolSetting(scope, p.TrustViewerCountry, contextTrustViewerCountry, false); err != nil {
		return s, err
	}
	if s.alarmEmail, err = emailSetting(scope, p.AlarmEmail, contextAlarmEmail); err != nil {
		return s, err
	}
	if s.emailFrom, err = emailSetting(scope, p.EmailFrom, contextEmailFrom); err != nil {
		return s, err
	}
	s.browserBinariesHash, err = browserBinariesHash(s.functionsDir)
	return s, err
}

// resolveFunctionsDir returns the absolute functions directory: prop, else the context, else the
// default.
func resolveFunctionsDir(scope constructs.Construct, prop string) (string, error) {
	dir := prop
	if dir == "" {
		switch v := scope.Node().TryGetContext(jsii.String(contextFunctionsDir)).(type) {
		case nil:
			dir = defaultFunctionsDir
		case string:
			dir = v
		default:
			return "", fmt.Errorf("context %s=%v: want a directory path", contextFunctionsDir, v)
		}
	}
	return filepath.Abs(dir)
}

// resolveNumbers sets the numeric settings of s, each checked against its range.
func resolveNumbers(scope constructs.Construct, p openvitalsStackProps, s *settings) error {
	var err error
	if s.dailyHourUTC, err = intSetting(scope, p.DailyHourUTC, contextDailyHourUTC, defaultDailyHourUTC, 0, 23); err != nil {
		return err
	}
	if s.multistepHourUTC, err = intSetting(scope, p.MultistepHourUTC, contextMultistepHourUTC, s.dailyHourUTC, 0, 23); err != nil {
		return err
	}
	if s.uxHourUTC, err = intSetting(scope, p.UXHourUTC, contextUXHourUTC, s.dailyHourUTC, 0, 23); err != nil {
		return err
	}
	// Lambda's SQS event sources accept a maximum concurrency of 2 to 1000.
	if s.auditMaxConcurrency, err = intSetting(scope, p.AuditMaxConcurrency, contextAuditMaxConcurrency, defaultAuditMaxConcurrency,
		minEventSourceConcurrency, maxEventSourceConcurrency); err != nil {
		return err
	}
	if s.auditsPerDay, err = intSetting(scope, p.AuditsPerDay, contextAuditsPerDay, defaultAuditsPerDay, 1, 1e9); err != nil {
		return err
	}
	// An audit takes at most the worker's timeout.
	if s.auditSeconds, err = intSetting(scope, p.AuditSeconds, contextAuditSeconds, defaultAuditSeconds, 1, auditWorkerTimeoutMinutes*60); err != nil {
		return err
	}
	if s.auditWindowHours, err = intSetting(scope, p.AuditWindowHours, contextAuditWindowHours, defaultAuditWindowHours, 1, 24); err != nil {
		return err
	}
	if s.auditMemoryMB, err = intSetting(scope, p.AuditMemoryMB, contextAuditMemoryMB, defaultAuditMemoryMB, minAuditMemoryMB, maxAuditMemoryMB); err != nil {
		return err
	}
	s.auditWorkersNeeded = auditWorkers(s.auditsPerDay, s.auditSeconds, s.auditWindowHours)
	s.auditConcurrency = min(max(s.auditWorkersNeeded, minEventSourceConcurrency), s.auditMaxConcurrency)
	if s.multistepMaxConcurrency, err = intSetting(scope, p.MultistepMaxConcurrency, contextMultistepMaxConcurrency, defaultMultistepMaxConcurrency, 2, 1000); err != nil {
		return err
	}
	if s.reportRetentionDays, err = intSetting(scope, p.ReportRetentionDays, contextReportRetentionDays, defaultReportRetentionDays, minReportRetentionDays, 3650); err != nil {
		return err
	}
	if s.exportRetentionDays, err = intSetting(scope, p.ExportRetentionDays, contextExportRetentionDays, defaultExportRetentionDays, 1, 3650); err != nil {
		return err
	}
	if s.exportTables, err = loadExportTables(defaultTablesFile); err != nil {
		return err
	}
	if s.rumRetentionDays, err = intSetting(scope, p.RUMRetentionDays, contextRUMRetentionDays, defaultRUMRetentionDays, minRUMRetentionDays, 3650); err != nil {
		return err
	}
	if s.rumMaxConcurrency, err = intSetting(scope, p.RUMMaxConcurrency, contextRUMMaxConcurrency, 0, 0, 1000); err != nil {
		return err
	}
	for _, t := range []struct {
		dst               *throttle
		rate, burst       *int
		rateKey, burstKey string
		defRate, defBurst int
	}{
		{&s.apiThrottle, p.APIThrottleRate, p.APIThrottleBurst, contextAPIThrottleRate, contextAPIThrottleBurst, defaultAPIThrottleRate, defaultAPIThrottleBurst},
		{&s.rumThrottle, p.RUMThrottleRate, p.RUMThrottleBurst, contextRUMThrottleRate, contextRUMThrottleBurst, defaultRUMThrottleRate, defaultRUMThrottleBurst},
	} {
		if t.dst.rate, err = intSetting(scope, t.rate, t.rateKey, t.defRate, 1, maxThrottleRate); err != nil {
			return err
		}
		if t.dst.burst, err = intSetting(scope, t.burst, t.burstKey, t.defBurst, 1, maxThrottleBurst); err != nil {
			return err
		}
	}
	return nil
}

// auditWorkers is how many audit workers, one audit at a time each, do perDay audits of
// seconds each within windowHours: the audit event source's maximum concurrency, unless
// auditMaxConcurrency caps it.
func auditWorkers(perDay, seconds, windowHours int) int {
	window := windowHours * 3600
	return (perDay*seconds + window - 1) / window
}

// auditShortfall is the warning synthesis gives when the cap leaves the day's audits too few
// workers ("" when it does not): how long a day's audits would take, and that the backlog
// grows every day.
func (s settings) auditShortfall() string {
	if s.auditWorkersNeeded <= s.auditConcurrency {
		return ""
	}
	hours := float64(s.auditsPerDay) * float64(s.auditSeconds) / float64(s.auditConcurrency) / 3600
	return fmt.Sprintf("%d audits a day of %d s each need %d audit workers to finish within %d hours, but %s caps them at %d: "+
		"a day's audits take %.0f hours, the audit queue's backlog grows every day and its Age alarm fires. "+
		"Raise %s (and the account's Lambda concurrency quota), or audit fewer pages.",
		s.auditsPerDay, s.auditSeconds, s.auditWorkersNeeded, s.auditWindowHours, contextAuditMaxConcurrency, s.auditConcurrency,
		hours, contextAuditMaxConcurrency)
}

// emailSetting returns prop, else the context's address under contextKey, else "": a bare
// address (SNS and SES take nothing else).
func emailSetting(scope constructs.Construct, prop, contextKey string) (string, error) {
	email := prop
	if email == "" {
		switch v := scope.Node().TryGetContext(jsii.String(contextKey)).(type) {
		case nil:
		case string:
			email = strings.TrimSpace(v)
		default:
			return "", fmt.Errorf("context %s=%v: want an e-mail address", contextKey, v)
		}
	}
	if email != "" {
		if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") {
			return "", fmt.Errorf("%s=%q: want a bare e-mail address (ops@example.com)", contextKey, email)
		}
	}
	return email, nil
}

// browserBinariesHash checks the binaries of the browser image and names the SHA-256 of each,
// in the order of browserFunctions.
func browserBinariesHash(functionsDir string) (string, error) {
	var hashes []string
	for _, fn := range browserFunctions {
		path := filepath.Join(functionsDir, fn, "bootstrap")
		if err := checkBootstrap(path); err != nil {
			return "", err
		}
		h, err := fileSHA256(path)
		if err != nil {
			return "", err
		}
		hashes = append(hashes, fn+" bootstrap sha256 "+h)
	}
	return strings.Join(hashes, "; "), nil
}

// intSetting returns *prop if set, else the context value key (a number, or a string from
// `cdk -c key=value`), else def; the result must lie in [min, max].
func intSetting(scope constructs.Construct, prop *int, key string, def, min, max int) (int, error) {
	n, from := def, "default"
	switch {
	case prop != nil:
		n, from = *prop, "property"
	default:
		v := scope.Node().TryGetContext(jsii.String(key))
		from = "context"
		switch v := v.(type) {
		case nil:
			from = "default"
		case float64:
			if v != math.Trunc(v) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s %s=%v: want a whole number from %d to %d", from, key, v, min, max)
			}
			n = int(v)
		case int:
			n = v
		case string:
			i, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, fmt.Errorf("%s %s=%q: want a whole number from %d to %d", from, key, v, min, max)
			}
			n = i
		default:
			return 0, fmt.Errorf("%s %s=%v: want a whole number from %d to %d", from, key, v, min, max)
		}
	}
	if n < min || n > max {
		return 0, fmt.Errorf("%s %s=%d: want %d to %d", from, key, n, min, max)
	}
	return n, nil
}

// boolSetting returns *prop if set, else the context value key (a boolean, or "true" /
// "false" from `cdk -c key=value`), else def.
func boolSetting(scope constructs.Construct, prop *bool, key string, def bool) (bool, error) {
	if prop != nil {
		return *prop, nil
	}
	switch v := scope.Node().TryGetContext(jsii.String(key)).(type) {
	case nil:
		return def, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, fmt.Errorf("context %s=%q: want true or false", key, v)
		}
		return b, nil
	default:
		return false, fmt.Errorf("context %s=%v: want true or false", key, v)
	}
}

// checkBootstrap makes sure a function's binary exists and, when it is an ELF file (the tests
// use placeholders), that it was built for the architecture the stack deploys.
func checkBootstrap(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w (run `make build` first, or point %s at the binaries)", err, contextFunctionsDir)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || string(magic) != elf.ELFMAG {
		return nil // not an executable: a placeholder for synthesis
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if ef.Machine != elf.EM_AARCH64 {
		return fmt.Errorf("%s is built for %s, but the functions run on arm64: build with GOARCH=arm64 (make build)", path, ef.Machine)
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return errors.New(path + " is not an executable")
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
