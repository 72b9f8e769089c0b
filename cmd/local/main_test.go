package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/contract"
	"github.com/openvitals/openvitals/internal/store"
)

// TestLocalService starts the whole local service as `make run` does, with keys from
// OPENVITALS_KEYS, and uses it over HTTP: the API answers, and a deletion is purged by the
// in-process worker through the SQS stand-in.
func TestLocalService(t *testing.T) {
	clients := awstest.Clients(t)
	name := awstest.Name(t)
	t.Setenv("OPENVITALS_TABLE", name)
	t.Setenv("OPENVITALS_PURGE_QUEUE", name)
	t.Setenv("OPENVITALS_BUCKET", "bucket-"+name)
	t.Setenv("OPENVITALS_KEYS", "acme:admin:acme-admin-key-123456,acme:viewer:acme-viewer-key-123456")
	t.Setenv("OPENVITALS_ADDR", freeAddr(t))
	t.Setenv("OPENVITALS_S3_ADDR", "127.0.0.1:0")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	// A purge's last pass comes 2 s after the deletion here, not after the stack's 16 minutes.
	t.Setenv("OPENVITALS_PURGE_SETTLE_SECONDS", "2")
	st := store.New(clients.DynamoDB, name)
	t.Cleanup(func() { _ = st.DeleteTable(context.Background()) })

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- run(ctx, awstest.Log(t)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("service stopped with %v", err)
		}
	})

	base := "http://" + getenv(t, "OPENVITALS_ADDR")
	waitUntilServing(t, base, stopped)
	call := func(method, path, key, body string, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var buf strings.Builder
		_, _ = io.Copy(&buf, res.Body)
		contract.Check(t, req, res.StatusCode, res.Header, []byte(buf.String()))
		if res.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, buf.String())
		}
		return []byte(buf.String())
	}

	var w struct{ ID string }
	if err := json.Unmarshal(call("POST", "/account/websites", "acme-admin-key-123456", `{"domain":"example.com"}`, 201), &w); err != nil {
		t.Fatal(err)
	}
	call("POST", "/"+w.ID+"/settings/pages", "acme-viewer-key-123456", `[{"url":"/"}]`, 200)
	call("DELETE", "/"+w.ID, "acme-viewer-key-123456", "", 403)
	call("DELETE", "/"+w.ID, "acme-admin-key-123456", "", 204)

	// The in-process purge worker removes the page left in the website's partition.
	deadline := time.Now().Add(60 * time.Second) // a bound for a stuck worker, not a speed check
	for {
		n, err := st.CountItems(ctx, store.PurgeJob{Account: "acme", Website: w.ID})
		pending, err2 := st.PendingPurges(ctx)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if n == 0 && len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d items and %d purges left after 60 s", n, len(pending))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func getenv(t *testing.T, name string) string {
	v, ok := os.LookupEnv(name)
	if !ok {
		t.Fatalf("%s unset", name)
	}
	return v
}

func waitUntilServing(t *testing.T, base string, stopped <-chan error) {
	for i := 0; i < 600; i++ {
		select {
		case err := <-stopped:
			t.Fatalf("service stopped while starting: %v", err)
		default:
		}
		if res, err := http.Get(base + "/openapi.json"); err == nil {
			res.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("service did not start within 30 s")
}
