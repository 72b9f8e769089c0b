package lambdatest_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/lambdatest"
)

// startFailure starts a built function under the fake Runtime API with cfg, sends it one
// event, and returns the lines of its output naming what stopped its start: it must exit
// before answering.
func startFailure(t *testing.T, name string, cfg lambdatest.Config) []string {
	t.Helper()
	fn := lambdatest.Start(t, lambdatest.Build(t, name), lambdatest.New(t), cfg)
	// Only a guard against a function that starts after all and waits for events.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := fn.Invoke(ctx, []byte(`{}`)); err == nil {
		t.Fatalf("%s started without its configuration and answered %s", name, out)
	}
	<-fn.Exited()
	var lines []string
	for _, l := range strings.Split(fn.Output(), "\n") {
		if strings.Contains(l, "cannot start in Lambda") {
			lines = append(lines, l)
		}
	}
	return lines
}

var notSet = regexp.MustCompile(`(OPENVITALS_[A-Z_]+) is not set`)

// TestStartNamesEveryMissingVariable starts each function with none of its configuration, as
// Lambda would run it: it must fail at start with one line naming exactly the variables
// service.Functions says it needs, which ties each main to its entry there (the deployment
// rehearsal compares the same list with what the stack deploys).
func TestStartNamesEveryMissingVariable(t *testing.T) {
	for _, name := range lambdatest.Functions(t) {
		t.Run(name, func(t *testing.T) {
			fn, err := service.FunctionNamed(name)
			if err != nil {
				t.Fatal(err)
			}
			lines := startFailure(t, name, lambdatest.Config{})
			if len(lines) != 1 {
				t.Fatalf("%d lines about the start, want one: %q", len(lines), lines)
			}
			var named []string
			for _, m := range notSet.FindAllStringSubmatch(lines[0], -1) {
				named = append(named, m[1])
			}
			slices.Sort(named)
			if !slices.Equal(named, fn.Required()) {
				t.Errorf("start failed naming %v, want %v:\n%s", named, fn.Required(), lines[0])
			}
		})
	}
}

// TestMissingVariableFailsTheStart: with its whole configuration but one variable, as a stack
// that forgot it would deploy it, the notifier fails at start with one line naming that
// variable, instead of running on a local default.
func TestMissingVariableFailsTheStart(t *testing.T) {
	e, _, _ := newEnv(t)
	cfg := e.config
	cfg.Env = slices.DeleteFunc(slices.Clone(cfg.Env), func(kv string) bool { return strings.HasPrefix(kv, service.EnvAPIURL+"=") })
	lines := startFailure(t, "notifier", cfg)
	want := "function notifier cannot start in Lambda: " + service.EnvAPIURL + " is not set"
	if len(lines) != 1 || !strings.HasSuffix(lines[0], want) {
		t.Errorf("start failure %q, want one line ending %q", lines, want)
	}

	// A malformed value is named too: a queue's name where the stack passes URLs.
	cfg = e.config
	cfg.Env = append(slices.Clone(cfg.Env), service.EnvAuditQueue+"=openvitals-audit")
	lines = startFailure(t, "notifier", cfg)
	if len(lines) != 1 || !strings.Contains(lines[0], service.EnvAuditQueue+`="openvitals-audit"`) {
		t.Errorf("start failure %q, want one line naming %s", lines, service.EnvAuditQueue)
	}
}
