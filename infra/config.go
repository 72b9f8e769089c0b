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
	"slices"
	"strconv"
	"strings"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Context keys (`cdk deploy -c dailyHourUtc=5`, or "context" in cdk.json) that configure the
// stack when OpenvitalsStackProps leaves the matching field unset.
const (
	ContextFunctionsDir = "functionsDir"
	ContextDailyHourUTC = "dailyHourUtc"
	// ContextMultistepHourUTC and ContextFieldHourUTC: the UTC hours of the daily multistep
	// runs and field-data collection (default: dailyHourUtc).
	ContextMultistepHourUTC    = "multistepHourUtc"
	ContextFieldHourUTC        = "fieldHourUtc"
	ContextAuditMaxConcurrency = "auditMaxConcurrency"
	// ContextMultistepMaxConcurrency: how many multistep runs may play at once.
	ContextMultistepMaxConcurrency = "multistepMaxConcurrency"
	// ContextReportRetentionDays: after how many days S3 deletes a report or screenshot.
	ContextReportRetentionDays = "reportRetentionDays"
	// ContextAPIThrottleRate and ContextAPIThrottleBurst: requests per second (steady, and
	// burst) each route of the API accepts before answering 429.
	ContextAPIThrottleRate  = "apiThrottleRate"
	ContextAPIThrottleBurst = "apiThrottleBurst"
	// ContextRUMThrottleRate and ContextRUMThrottleBurst: the same for each public RUM route
	// (the snippet and the beacons), which carry one request per page view of every site.
	ContextRUMThrottleRate  = "rumThrottleRate"
	ContextRUMThrottleBurst = "rumThrottleBurst"
	// ContextTrustViewerCountry: "true" when CloudFront is in front of the API and sets
	// CloudFront-Viewer-Country; otherwise a client could claim any country with that header.
	ContextTrustViewerCountry = "trustViewerCountry"
	// ContextAlarmEmail: an address subscribed to the alarm topic (it must confirm by mail).
	ContextAlarmEmail = "alarmEmail"
)

// Defaults of the settings above.
const (
	// DefaultFunctionsDir is where `make build` writes <function>/bootstrap, relative to infra/
	// (the directory the CDK app and its tests run in).
	DefaultFunctionsDir = "../dist"
	// DefaultDailyHourUTC is the UTC hour of the daily audits.
	DefaultDailyHourUTC = 3
	// DefaultAuditMaxConcurrency is how many audit workers may run at once: each audits one
	// page at a time. 2 is the smallest maximum an SQS event source accepts.
	DefaultAuditMaxConcurrency = 2
	// DefaultMultistepMaxConcurrency is how many multistep workers may run at once: each plays
	// one journey at a time.
	DefaultMultistepMaxConcurrency = 2
	// DefaultReportRetentionDays: the API reads only the reports of the last 30 days (the
	// latest audit of a page); three months leave time to look into an old audit by hand.
	DefaultReportRetentionDays = 90
	// MinReportRetentionDays keeps every report the API may still serve.
	MinReportRetentionDays = 31
	// DefaultAPIThrottleRate and DefaultAPIThrottleBurst suit scripts and dashboards calling
	// with API keys; API Gateway applies them to each route separately.
	DefaultAPIThrottleRate  = 50
	DefaultAPIThrottleBurst = 100
	// DefaultRUMThrottleRate and DefaultRUMThrottleBurst: 500 beacons a second is about 43
	// million page views a day across every monitored site.
	DefaultRUMThrottleRate  = 500
	DefaultRUMThrottleBurst = 1000
	// MaxThrottleRate and MaxThrottleBurst are API Gateway's default account quotas per
	// region; a higher setting could never take effect.
	MaxThrottleRate  = 10000
	MaxThrottleBurst = 5000
)

// BrowserImageDir is the browser workers' image directory (its Dockerfile), relative to infra/.
const BrowserImageDir = "../layers/browser"

// goFunctions are the zip-packaged Go functions, by directory name under the functions
// directory (and under functions/ in the repository).
var goFunctions = []string{
	"websites", "pages", "budgets", "multistep", "lab", "field", // API groups with API keys
	"rum",                                                              // the public RUM snippet and beacon collection
	"scheduler",                                                        // the daily schedule
	"purge-worker", "rum-batcher", "rum-aggregator", "field-collector", // queue consumers
}

// The functions whose binaries go into the browser image (both into the same one).
const (
	AuditWorkerFunction     = "audit-worker"
	MultistepWorkerFunction = "multistep-worker"
)

// browserFunctions are the functions of the browser image, in the order their binaries are
// hashed into its asset.
var browserFunctions = []string{AuditWorkerFunction, MultistepWorkerFunction}

// allFunctions returns every function's directory name: the zip-packaged ones, then the
// browser image's.
func allFunctions() []string {
	return append(slices.Clone(goFunctions), browserFunctions...)
}

// settings are the stack's resolved and validated configuration.
type settings struct {
	// functionsDir is absolute, and holds <function>/bootstrap for every function.
	functionsDir             string
	dailyHourUTC             int
	multistepHourUTC         int
	fieldHourUTC             int
	auditMaxConcurrency      int
	multistepMaxConcurrency  int
	reportRetentionDays      int
	apiThrottle, rumThrottle throttle
	trustViewerCountry       bool
	// alarmEmail is "" for no subscription.
	alarmEmail string
	// browserBinariesHash names the SHA-256 of each binary in the browser image: the image's
	// build contexts hold them but are not hashed by CDK, so a new build of either must
	// change the image asset's hash.
	browserBinariesHash string
}

// throttle is a steady rate (requests per second) and a burst API Gateway allows a route.
type throttle struct{ rate, burst int }

// resolveSettings reads props, then the context of scope, then the defaults, and checks them.
func resolveSettings(scope constructs.Construct, props *OpenvitalsStackProps) (settings, error) {
	var p OpenvitalsStackProps
	if props != nil {
		p = *props
	}
	var s settings
	var err error

	dir := p.FunctionsDir
	if dir == "" {
		v := scope.Node().TryGetContext(jsii.String(ContextFunctionsDir))
		switch v := v.(type) {
		case nil:
			dir = DefaultFunctionsDir
		case string:
			dir = v
		default:
			return s, fmt.Errorf("context %s=%v: want a directory path", ContextFunctionsDir, v)
		}
	}
	if s.functionsDir, err = filepath.Abs(dir); err != nil {
		return s, err
	}

	if s.dailyHourUTC, err = intSetting(scope, p.DailyHourUTC, ContextDailyHourUTC, DefaultDailyHourUTC, 0, 23); err != nil {
		return s, err
	}
	if s.multistepHourUTC, err = intSetting(scope, p.MultistepHourUTC, ContextMultistepHourUTC, s.dailyHourUTC, 0, 23); err != nil {
		return s, err
	}
	if s.fieldHourUTC, err = intSetting(scope, p.FieldHourUTC, ContextFieldHourUTC, s.dailyHourUTC, 0, 23); err != nil {
		return s, err
	}
	// Lambda's SQS event sources accept a maximum concurrency of 2 to 1000.
	if s.auditMaxConcurrency, err = intSetting(scope, p.AuditMaxConcurrency, ContextAuditMaxConcurrency, DefaultAuditMaxConcurrency, 2, 1000); err != nil {
		return s, err
	}

	if s.multistepMaxConcurrency, err = intSetting(scope, p.MultistepMaxConcurrency, ContextMultistepMaxConcurrency, DefaultMultistepMaxConcurrency, 2, 1000); err != nil {
		return s, err
	}
	if s.reportRetentionDays, err = intSetting(scope, p.ReportRetentionDays, ContextReportRetentionDays, DefaultReportRetentionDays, MinReportRetentionDays, 3650); err != nil {
		return s, err
	}
	for _, t := range []struct {
		dst               *throttle
		rate, burst       *int
		rateKey, burstKey string
		defRate, defBurst int
	}{
		{&s.apiThrottle, p.APIThrottleRate, p.APIThrottleBurst, ContextAPIThrottleRate, ContextAPIThrottleBurst, DefaultAPIThrottleRate, DefaultAPIThrottleBurst},
		{&s.rumThrottle, p.RUMThrottleRate, p.RUMThrottleBurst, ContextRUMThrottleRate, ContextRUMThrottleBurst, DefaultRUMThrottleRate, DefaultRUMThrottleBurst},
	} {
		if t.dst.rate, err = intSetting(scope, t.rate, t.rateKey, t.defRate, 1, MaxThrottleRate); err != nil {
			return s, err
		}
		if t.dst.burst, err = intSetting(scope, t.burst, t.burstKey, t.defBurst, 1, MaxThrottleBurst); err != nil {
			return s, err
		}
	}
	if s.trustViewerCountry, err = boolSetting(scope, p.TrustViewerCountry, ContextTrustViewerCountry, false); err != nil {
		return s, err
	}
	s.alarmEmail = p.AlarmEmail
	if s.alarmEmail == "" {
		switch v := scope.Node().TryGetContext(jsii.String(ContextAlarmEmail)).(type) {
		case nil:
		case string:
			s.alarmEmail = strings.TrimSpace(v)
		default:
			return s, fmt.Errorf("context %s=%v: want an e-mail address", ContextAlarmEmail, v)
		}
	}
	if s.alarmEmail != "" {
		if _, err := mail.ParseAddress(s.alarmEmail); err != nil || strings.ContainsAny(s.alarmEmail, "<> ") {
			return s, fmt.Errorf("%s=%q: want a bare e-mail address (ops@example.com)", ContextAlarmEmail, s.alarmEmail)
		}
	}

	for _, fn := range allFunctions() {
		if err := checkBootstrap(filepath.Join(s.functionsDir, fn, "bootstrap")); err != nil {
			return s, err
		}
	}
	var hashes []string
	for _, fn := range browserFunctions {
		h, err := fileSHA256(filepath.Join(s.functionsDir, fn, "bootstrap"))
		if err != nil {
			return s, err
		}
		hashes = append(hashes, fn+" bootstrap sha256 "+h)
	}
	s.browserBinariesHash = strings.Join(hashes, "; ")
	return s, nil
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
		return fmt.Errorf("%w (run `make build` first, or point %s at the binaries)", err, ContextFunctionsDir)
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
