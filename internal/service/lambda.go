package service

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The environment variables of the configuration, each named once here; the CDK stack sets
// the same names (the deployment rehearsal reads them back and compares them with Required).
const (
	EnvTable          = "OPENVITALS_TABLE"
	EnvBucket         = "OPENVITALS_BUCKET"
	EnvRUMBucket      = "OPENVITALS_RUM_BUCKET"
	EnvExportBucket   = "OPENVITALS_EXPORT_BUCKET"
	EnvPurgeQueue     = "OPENVITALS_PURGE_QUEUE"
	EnvAuditQueue     = "OPENVITALS_AUDIT_QUEUE"
	EnvMultistepQueue = "OPENVITALS_MULTISTEP_QUEUE"
	EnvFanoutQueue    = "OPENVITALS_FANOUT_QUEUE"
	EnvUXQueue        = "OPENVITALS_UX_QUEUE"
	EnvBeaconQueue    = "OPENVITALS_BEACON_QUEUE"
	EnvRUMQueue       = "OPENVITALS_RUM_QUEUE"
	EnvNotifyQueue    = "OPENVITALS_NOTIFY_QUEUE"
	EnvAPIURL         = "OPENVITALS_API_URL"
	// EnvDashboardURL is the dashboard's address for the links in notifications; the API's
	// /app/ when unset (the stack serves the dashboard there).
	EnvDashboardURL = "OPENVITALS_DASHBOARD_URL"
	EnvPurgeSettle  = "OPENVITALS_PURGE_SETTLE_SECONDS"
	// EnvRUMRetentionDays is how long real-user data is kept: the aggregator sets its items'
	// expiry from it, the stack the RUM bucket's.
	EnvRUMRetentionDays = "OPENVITALS_RUM_RETENTION_DAYS"
	// EnvReportRetentionDays and EnvExportRetentionDays are the days the stack's lifecycle
	// rules keep reports and exports: the most a website's retention may be.
	EnvReportRetentionDays = "OPENVITALS_REPORT_RETENTION_DAYS"
	EnvExportRetentionDays = "OPENVITALS_EXPORT_RETENTION_DAYS"
	// EnvCrUXQueriesPerMinute is how many Chrome UX Report queries one ux worker may make a
	// minute: the API's quota shared by the workers that may run at once.
	EnvCrUXQueriesPerMinute = "OPENVITALS_CRUX_QUERIES_PER_MINUTE"
	// EnvCrUXAPIKeySecret and EnvCredentialsKeySecret name Secrets Manager secrets (ARNs in
	// AWS); EnvCrUXAPIKey and EnvCredentialsKey carry the values themselves instead (local use
	// and tests), and stand in for them.
	EnvCrUXAPIKeySecret     = "OPENVITALS_CRUX_API_KEY_SECRET"
	EnvCrUXAPIKey           = "OPENVITALS_CRUX_API_KEY"
	EnvCredentialsKeySecret = "OPENVITALS_CREDENTIALS_KEY_SECRET"
	EnvCredentialsKey       = "OPENVITALS_CREDENTIALS_KEY"
	// EnvChromiumBin, EnvNode and EnvLighthouseRunner are the browser image's paths, read by
	// internal/browser (EnvChromiumBin) and internal/lighthouse (EnvNode, EnvRunnerScript),
	// which the functions without a browser must not link; a test keeps the names equal.
	EnvChromiumBin      = "OPENVITALS_CHROMIUM_BIN"
	EnvNode             = "OPENVITALS_NODE"
	EnvLighthouseRunner = "OPENVITALS_LIGHTHOUSE_RUNNER"
)

// InLambda reports whether this process runs as a Lambda function: Lambda sets
// AWS_LAMBDA_FUNCTION_NAME and AWS_LAMBDA_RUNTIME_API in every function's environment. There
// the configuration is strict (RequireFor): no setting falls back to a local default.
func InLambda() bool {
	return os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" || os.Getenv("AWS_LAMBDA_RUNTIME_API") != ""
}

// Function is one function of functions/ as far as its configuration goes.
type Function struct {
	// Name is its directory under functions/.
	Name string
	// Needs are the variables it needs in Lambda beyond Shared.
	Needs []string
	// Consumes is the variable naming the queue whose event source invokes it ("" for none).
	Consumes string
}

// Shared are the variables every function needs in Lambda: New opens the table, the bucket
// and every queue at start.
var Shared = sharedVars()

func sharedVars() []string {
	vars := []string{EnvTable, EnvBucket, EnvRUMBucket, EnvExportBucket}
	for _, q := range QueueVars() {
		vars = append(vars, q.Env)
	}
	return vars
}

// Functions are the functions of functions/, each main starting the Handler (service.Handler,
// apifn.Handler) of its Name.
var Functions = []Function{
	{Name: "websites", Needs: []string{EnvCredentialsKeySecret, EnvRUMRetentionDays, EnvReportRetentionDays, EnvExportRetentionDays}},
	{Name: "pages"},
	{Name: "budgets"},
	{Name: "multistep"},
	{Name: "lab"},
	{Name: "field"},
	{Name: "rum"},
	{Name: "events", Needs: []string{EnvCredentialsKeySecret}},
	{Name: "web"},
	{Name: "scheduler", Needs: []string{EnvPurgeSettle}},
	{Name: "fanout-worker", Consumes: EnvFanoutQueue},
	{Name: "purge-worker", Needs: []string{EnvPurgeSettle, EnvRUMRetentionDays, EnvReportRetentionDays, EnvExportRetentionDays}, Consumes: EnvPurgeQueue},
	{Name: "audit-worker", Needs: []string{EnvChromiumBin, EnvNode, EnvLighthouseRunner}, Consumes: EnvAuditQueue},
	{Name: "multistep-worker", Needs: []string{EnvChromiumBin}, Consumes: EnvMultistepQueue},
	{Name: "ux-worker", Needs: []string{EnvCrUXAPIKeySecret, EnvCredentialsKeySecret, EnvCrUXQueriesPerMinute}, Consumes: EnvUXQueue},
	{Name: "rum-batcher", Consumes: EnvBeaconQueue},
	{Name: "rum-aggregator", Needs: []string{EnvRUMRetentionDays}, Consumes: EnvRUMQueue},
	{Name: "notifier", Needs: []string{EnvAPIURL, EnvCredentialsKeySecret}, Consumes: EnvNotifyQueue},
}

// FunctionNamed returns the function of functions/<name>.
func FunctionNamed(name string) (Function, error) {
	i := slices.IndexFunc(Functions, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, fmt.Errorf("no function %q in service.Functions", name)
	}
	return Functions[i], nil
}

// Required returns every variable f needs in Lambda, sorted.
func (f Function) Required() []string {
	req := slices.Concat(Shared, f.Needs)
	slices.Sort(req)
	return slices.Compact(req)
}

// standIns are the variables that may carry a value in place of a required secret's name.
var standIns = map[string]string{
	EnvCrUXAPIKeySecret:     EnvCrUXAPIKey,
	EnvCredentialsKeySecret: EnvCredentialsKey,
}

// RequireFor checks, in Lambda, that every variable f needs is set and well formed, and
// returns one error naming each one that is not (on one line: the function's start fails
// with it). Outside Lambda it returns nil: the local defaults apply.
func RequireFor(f Function) error {
	if !InLambda() {
		return nil
	}
	var problems []string
	for _, name := range f.Required() {
		v := os.Getenv(name)
		if v == "" {
			if alt := standIns[name]; alt != "" && os.Getenv(alt) != "" {
				continue
			}
			problems = append(problems, name+" is not set")
			continue
		}
		if err := checkValue(name, v); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%q: %v", name, v, err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("function %s cannot start in Lambda: %s", f.Name, strings.Join(problems, "; "))
}

var (
	tableName  = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
	bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
)

// checkValue says what is wrong with the value v of the required variable name, as Lambda
// gets it from the stack.
func checkValue(name, v string) error {
	if i := slices.IndexFunc(QueueVars(), func(q QueueVar) bool { return q.Env == name }); i >= 0 {
		// The stack passes URLs: a name would cost a lookup at every start.
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Count(strings.Trim(u.Path, "/"), "/") != 1 {
			return errors.New("want the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>)")
		}
		if fifo, want := strings.HasSuffix(u.Path, ".fifo"), QueueVars()[i].FIFO(); fifo != want {
			return fmt.Errorf("the queue is FIFO: %v, want %v", fifo, want)
		}
		return nil
	}
	switch name {
	case EnvTable:
		if !tableName.MatchString(v) {
			return errors.New("not a DynamoDB table name")
		}
	case EnvBucket, EnvRUMBucket, EnvExportBucket:
		if !bucketName.MatchString(v) {
			return errors.New("not an S3 bucket name")
		}
	case EnvAPIURL:
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return errors.New("want the API's absolute URL")
		}
	case EnvPurgeSettle, EnvCrUXQueriesPerMinute, EnvRUMRetentionDays, EnvReportRetentionDays, EnvExportRetentionDays:
		if _, err := strconv.Atoi(v); err != nil {
			return errors.New("want a whole number")
		}
	case EnvChromiumBin, EnvNode, EnvLighthouseRunner:
		if !filepath.IsAbs(v) {
			return errors.New("want an absolute path")
		}
		if fi, err := os.Stat(v); err != nil || fi.IsDir() {
			return errors.New("no such file")
		}
	}
	return nil
}
