package service

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
)

// lambdaEnv sets, for one test, what a function the stack deploys gets: Lambda's own
// variables and every variable of Required, well formed.
func lambdaEnv(t *testing.T, f Function) {
	t.Helper()
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "OpenvitalsStack-Function")
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{
		EnvTable: "OpenvitalsStack-StorageTable-1ABC", EnvBucket: "openvitalsstack-storagebucket-1abc",
		EnvRUMBucket: "openvitalsstack-storagerumbucket-1abc", EnvRUMRetentionDays: "400",
		EnvExportBucket: "openvitalsstack-exportsbucket-1abc", EnvReportRetentionDays: "90", EnvExportRetentionDays: "731",
		EnvAPIURL: "https://abc.execute-api.us-east-1.amazonaws.com", EnvPurgeSettle: "960", EnvCrUXQueriesPerMinute: "75",
		EnvCrUXAPIKeySecret:     "arn:aws:secretsmanager:us-east-1:123456789012:secret:CruxApiKey-AbCdEf",
		EnvCredentialsKeySecret: "arn:aws:secretsmanager:us-east-1:123456789012:secret:CredentialsKey-AbCdEf",
		EnvChromiumBin:          exe, EnvNode: exe, EnvLighthouseRunner: exe,
	}
	for _, name := range f.Required() {
		v, ok := good[name]
		if !ok {
			v = "https://sqs.us-east-1.amazonaws.com/123456789012/OpenvitalsStack-Queue-1ABC"
			if name == EnvRUMQueue {
				v += ".fifo"
			}
		}
		t.Setenv(name, v)
	}
}

// In Lambda, every variable a function needs must be there and well formed; the error names
// each one that is not, on one line.
func TestRequireFor(t *testing.T) {
	notifier, err := FunctionNamed("notifier")
	if err != nil {
		t.Fatal(err)
	}
	lambdaEnv(t, notifier)
	if err := RequireFor(notifier); err != nil {
		t.Fatalf("complete configuration refused: %v", err)
	}

	t.Setenv(EnvAPIURL, "")
	t.Setenv(EnvAuditQueue, "openvitals-audit")
	t.Setenv(EnvRUMQueue, "https://sqs.us-east-1.amazonaws.com/123456789012/rum")
	err = RequireFor(notifier)
	if err == nil {
		t.Fatal("missing and malformed variables accepted")
	}
	msg := err.Error()
	for _, want := range []string{"notifier", EnvAPIURL + " is not set", EnvAuditQueue + `="openvitals-audit"`, EnvRUMQueue + "="} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, EnvTable) {
		t.Errorf("error %q: want one line naming only the bad variables", msg)
	}

	// A value in place of a secret's name will do (local use and tests).
	t.Setenv(EnvAPIURL, "https://api.example.com")
	t.Setenv(EnvAuditQueue, "https://sqs.us-east-1.amazonaws.com/123456789012/audit")
	t.Setenv(EnvRUMQueue, "https://sqs.us-east-1.amazonaws.com/123456789012/rum.fifo")
	t.Setenv(EnvCredentialsKeySecret, "")
	t.Setenv(EnvCredentialsKey, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	if err := RequireFor(notifier); err != nil {
		t.Errorf("credentials key given as a value: %v", err)
	}

	// Outside Lambda the local defaults apply.
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "")
	t.Setenv(EnvTable, "")
	if err := RequireFor(notifier); err != nil {
		t.Errorf("outside Lambda: %v", err)
	}
}

func TestRequireForChecksPaths(t *testing.T) {
	worker, err := FunctionNamed("audit-worker")
	if err != nil {
		t.Fatal(err)
	}
	lambdaEnv(t, worker)
	t.Setenv(EnvNode, "node")
	t.Setenv(EnvChromiumBin, filepath.Join(t.TempDir(), "chromium"))
	err = RequireFor(worker)
	if err == nil || !strings.Contains(err.Error(), EnvNode+`="node": want an absolute path`) || !strings.Contains(err.Error(), EnvChromiumBin) {
		t.Errorf("relative and missing paths: %v", err)
	}
}

// service.Functions are the directories of functions/, each with its own main.
func TestFunctionsAreTheFunctionDirectories(t *testing.T) {
	mains, err := filepath.Glob(filepath.Join("..", "..", "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs, declared []string
	for _, m := range mains {
		dirs = append(dirs, filepath.Base(filepath.Dir(m)))
	}
	for _, f := range Functions {
		declared = append(declared, f.Name)
	}
	slices.Sort(dirs)
	slices.Sort(declared)
	if !slices.Equal(dirs, declared) {
		t.Errorf("service.Functions %v, functions/ holds %v", declared, dirs)
	}
	if _, err := FunctionNamed("nonesuch"); err == nil {
		t.Error("an unknown function has requirements")
	}
}

// The browser's and Lighthouse's variables are declared in their own packages too.
func TestBrowserVariablesAreTheBrowserPackages(t *testing.T) {
	for mine, theirs := range map[string]string{
		EnvChromiumBin: browser.EnvChromiumBin, EnvNode: lighthouse.EnvNode, EnvLighthouseRunner: lighthouse.EnvRunnerScript,
	} {
		if mine != theirs {
			t.Errorf("service names %s, its reader %s", mine, theirs)
		}
	}
}
