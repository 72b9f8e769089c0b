package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestLocalService starts the whole local service as `make run` does, with keys from
// OPENVITALS_KEYS, and uses it over HTTP: the API answers, and a deletion is purged by the
// in-process worker through the SQS stand-in.
func TestLocalService(t *testing.T) {
	d := startService(t, 1, false)
	st, ctx := d.st, context.Background()
	call := func(method, path, key, body string, want int) []byte {
		t.Helper()
		return apitest.Client{Base: d.base, Key: key}.Call(t, method, path, body, want, nil).Body
	}

	var w struct{ ID string }
	if err := json.Unmarshal(call("POST", "/account/websites", dashAdminKey, `{"domain":"example.com"}`, 201), &w); err != nil {
		t.Fatal(err)
	}
	call("POST", "/"+w.ID+"/settings/pages", dashViewerKey, `[{"url":"/"}]`, 200)
	call("DELETE", "/"+w.ID, dashViewerKey, "", 403)
	call("DELETE", "/"+w.ID, dashAdminKey, "", 204)

	// The in-process purge worker removes the page left in the website's partition.
	deadline := time.Now().Add(60 * time.Second) // a bound for a stuck worker, not a speed check
	for {
		n, err := st.CountItems(ctx, model.PurgeJob{Account: "acme", Website: w.ID})
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

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func getenv(t testing.TB, name string) string {
	v, ok := os.LookupEnv(name)
	if !ok {
		t.Fatalf("%s unset", name)
	}
	return v
}

func waitUntilServing(t testing.TB, base string, stopped <-chan error) {
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

// TestRestartKeepsDataAndKey starts the local service as `make run` does without
// OPENVITALS_KEYS, stops it and starts it again over the same data directory: the admin key
// made on the first start still works (none is made again), the website made with it is still
// there, and so are the S3 stand-in's objects and the credentials key. (make run used to keep
// all of it in memory; DynamoDB Local's own files are the walkthrough's to test, as this test's
// table lives in the test stand-in.)
func TestRestartKeepsDataAndKey(t *testing.T) {
	clients := awstest.Clients(t)
	name := awstest.Name(t)
	data := t.TempDir()
	t.Setenv(service.EnvTable, name)
	for _, q := range service.QueueVars() {
		t.Setenv(q.Env, name+"-"+strings.TrimPrefix(q.Default, "openvitals-"))
	}
	t.Setenv(service.EnvBucket, "bucket-"+name)
	t.Setenv("OPENVITALS_KEYS", "")
	t.Setenv("OPENVITALS_DATA_DIR", data)
	t.Setenv("OPENVITALS_S3_ADDR", "127.0.0.1:0")
	t.Setenv("OPENVITALS_SES_PORT", "0")
	t.Setenv("AWS_ENDPOINT_URL_SESV2", "")
	st := store.New(clients.DynamoDB, name)
	t.Cleanup(func() { _ = st.DeleteTable(context.Background()) })

	// start runs the service until stop is called; every start has a new API and S3 address,
	// and no key or endpoint from the previous one.
	start := func() (base string, stop func()) {
		t.Setenv("OPENVITALS_ADDR", freeAddr(t))
		t.Setenv("AWS_ENDPOINT_URL_S3", "")
		t.Setenv("OPENVITALS_CREDENTIALS_KEY", "")
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan error, 1)
		go func() { stopped <- run(ctx, awstest.Log(t)) }()
		base = "http://" + getenv(t, "OPENVITALS_ADDR")
		waitUntilServing(t, base, stopped)
		return base, func() {
			cancel()
			if err := <-stopped; err != nil {
				t.Errorf("service stopped with %v", err)
			}
		}
	}
	call := func(base, method, path, key, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	object := &s3.PutObjectInput{Bucket: aws.String("bucket-" + name), Key: aws.String("kept"), Body: strings.NewReader("report")}

	base, stop := start()
	keyFile, err := os.ReadFile(filepath.Join(data, "local-admin-key"))
	if err != nil {
		t.Fatalf("the first start wrote no key file: %v", err)
	}
	key := strings.TrimSpace(string(keyFile))
	code, body := call(base, "POST", "/account/websites", key, `{"domain":"example.com"}`)
	var w struct{ ID string }
	if err := json.Unmarshal([]byte(body), &w); code != 201 || err != nil {
		t.Fatalf("create website: %d %s", code, body)
	}
	s3c := s3Client(t)
	if _, err := s3c.PutObject(context.Background(), object); err != nil {
		t.Fatal(err)
	}
	credentialsKey := os.Getenv("OPENVITALS_CREDENTIALS_KEY")
	stop()

	base, stop = start()
	defer stop()
	if code, body := call(base, "GET", "/"+w.ID+"/settings/pages", key, ""); code != 200 {
		t.Errorf("after the restart, the website with the first key: %d %s", code, body)
	}
	if again, _ := os.ReadFile(filepath.Join(data, "local-admin-key")); string(again) != string(keyFile) {
		t.Errorf("the restart made another key")
	}
	got, err := s3Client(t).GetObject(context.Background(), &s3.GetObjectInput{Bucket: object.Bucket, Key: object.Key})
	if err != nil {
		t.Fatalf("the S3 object did not outlive the restart: %v", err)
	}
	defer got.Body.Close()
	if b, _ := io.ReadAll(got.Body); string(b) != "report" {
		t.Errorf("object %q after the restart", b)
	}
	if k := os.Getenv("OPENVITALS_CREDENTIALS_KEY"); k == "" || k != credentialsKey {
		t.Errorf("credentials key %q after the restart, want the first one %q", k, credentialsKey)
	}
}

// s3Client connects to the S3 stand-in the running service serves.
func s3Client(t *testing.T) *s3.Client {
	c, err := awsclient.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.S3
}
