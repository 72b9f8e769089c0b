package service

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/queue"
)

// Anything but a true value keeps the production policy, so a typo fails safe.
func TestAllowPrivateTargets(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "1": true, "": false, "false": false, "yes": false} {
		t.Setenv("OPENVITALS_ALLOW_PRIVATE_TARGETS", value)
		cfg, err := ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.AllowPrivateTargets != want {
			t.Errorf("OPENVITALS_ALLOW_PRIVATE_TARGETS=%q: %v, want %v", value, cfg.AllowPrivateTargets, want)
		}
	}
}

func TestConfigRefusesBadValues(t *testing.T) {
	for name, value := range map[string]string{
		"OPENVITALS_AUDIT_RUNS": "0", "OPENVITALS_TARGET_SCHEME": "ftp",
		EnvCrUXQueriesPerMinute: "151", EnvPurgeSettle: "soon", EnvRUMRetentionDays: "30",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			if _, err := ConfigFromEnv(); err == nil {
				t.Errorf("%s=%q accepted", name, value)
			}
		})
	}
	t.Setenv("OPENVITALS_AUDIT_RUNS", "5")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.AuditRuns != 5 || cfg.TargetScheme != "https" || cfg.UXQueue != "openvitals-ux" || cfg.CrUXQueriesPerMinute != CrUXQuota ||
		cfg.RUMRetention != 400*24*time.Hour || cfg.RUMBucket != "openvitals-rum" {
		t.Errorf("defaults and OPENVITALS_AUDIT_RUNS=5: %+v, %v", cfg, err)
	}
}

// Every queue of Config and Queues is declared in QueueVars, once, and ResourceEnv hands the
// table, the bucket and each queue to ConfigFromEnv.
func TestQueueVarsCoverEveryQueue(t *testing.T) {
	vars := QueueVars()
	cfgQueues := 0
	for f := range reflect.TypeFor[Config]().Fields() {
		if strings.HasSuffix(f.Name, "Queue") {
			cfgQueues++
		}
	}
	if n := reflect.TypeFor[Queues]().NumField(); n != len(vars) || cfgQueues != len(vars) {
		t.Fatalf("QueueVars declares %d queues; Queues has %d, Config %d", len(vars), n, cfgQueues)
	}
	var cfg Config
	var qs Queues
	opened := map[**queue.Queue]bool{}
	for i, q := range vars {
		q.Set(&cfg, fmt.Sprintf("queue-%d", i))
		opened[q.opened(&qs)] = true
	}
	if len(opened) != len(vars) {
		t.Errorf("QueueVars open %d distinct Queues fields, want %d", len(opened), len(vars))
	}
	cfg.Table, cfg.Bucket, cfg.RUMBucket = "table-x", "bucket-x", "rum-bucket-x"
	for _, kv := range cfg.ResourceEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got.Table != "table-x" || got.Bucket != "bucket-x" || got.RUMBucket != "rum-bucket-x" {
		t.Errorf("table %q, buckets %q and %q read back", got.Table, got.Bucket, got.RUMBucket)
	}
	for i, q := range vars {
		if name := q.Name(got); name != fmt.Sprintf("queue-%d", i) {
			t.Errorf("%s read back as %q", q.Env, name)
		}
	}
}
