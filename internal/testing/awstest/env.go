package awstest

import (
	"bytes"
	"compress/gzip"
	"log/slog"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Env is a test's own resources on the stand-ins, made by one call: the clients, a store over a
// table of its own and a log into the test's output, which nearly every test of stored data
// opens with. Its methods add what only some tests need (queues, buckets, websites), each
// removed when the test ends.
type Env struct {
	Clients awsclient.Clients
	Store   *store.Store
	Log     *slog.Logger
	t       testing.TB
}

// NewEnv returns the test's clients, a store over a new table and a log into its output.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	clients := Clients(t)
	return &Env{Clients: clients, Store: Store(t, clients), Log: Log(t), t: t}
}

// QueueSettings are those of a test's queue when the service's own do not matter: a message
// received comes back after a minute, three times before it goes to the dead-letter queue.
var QueueSettings = queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3}

// Queue returns a new queue with settings s (see Queue).
func (e *Env) Queue(s queue.Settings) *queue.Queue {
	e.t.Helper()
	return Queue(e.t, e.Clients, s)
}

// FIFOQueue returns a new FIFO queue with settings s (see FIFOQueue).
func (e *Env) FIFOQueue(s queue.Settings) *queue.Queue {
	e.t.Helper()
	return FIFOQueue(e.t, e.Clients, s)
}

// Bucket returns a bucket on an in-memory S3 server of its own (see Bucket).
func (e *Env) Bucket() *blobstore.Bucket {
	e.t.Helper()
	return Bucket(e.t)
}

// Website stores w with pages in the env's store and returns them as read back (see Website).
func (e *Env) Website(w model.Website, pages ...model.Page) (model.Website, []model.Page) {
	e.t.Helper()
	return Website(e.t, e.Store, w, pages)
}

// Acme is the test website of the account acme at domain, named after its domain.
func Acme(domain string) model.Website {
	return model.Website{Account: "acme", Domain: domain, DisplayName: domain}
}

// Gzipped is b gzipped, as the buckets keep reports, diagnostics and HARs.
func Gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
