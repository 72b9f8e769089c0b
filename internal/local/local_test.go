package local_test

import (
	"context"
	"io"
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
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// TestLocalService starts the whole local service as `make run` does, with keys from
// OPENVITALS_KEYS, and uses it over HTTP: the API answers, and a deletion is purged by the
// in-process worker through the SQS stand-in.
func TestLocalService(t *testing.T) {
	s := localtest.Start(t, 1, false)
	st, ctx := s.Store, context.Background()

	var w struct{ ID string }
	s.Call(t, "POST", "/account/websites", localtest.AdminKey, `{"domain":"example.com"}`, 201, &w)
	s.Call(t, "POST", "/"+w.ID+"/settings/pages", localtest.ViewerKey, `[{"url":"/"}]`, 200, nil)
	s.Call(t, "DELETE", "/"+w.ID, localtest.ViewerKey, "", 403, nil)
	s.Call(t, "DELETE", "/"+w.ID, localtest.AdminKey, "", 204, nil)

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

// TestRestartKeepsDataAndKey starts the local service as `make run` does without
// OPENVITALS_KEYS, stops it and starts it again over the same data directory: the admin key
// made on the first start still works (none is made again), the website made with it is still
// there, and so are the S3 stand-in's objects and the credentials key. (make run used to keep
// all of it in memory; DynamoDB Local's own files are the walkthrough's to test, as this test's
// table lives in the test stand-in.) Every start has a new S3 address, and no key or endpoint
// from the previous one.
func TestRestartKeepsDataAndKey(t *testing.T) {
	s := localtest.New(t, 1, false)
	t.Setenv("OPENVITALS_KEYS", "")
	object := &s3.PutObjectInput{Bucket: aws.String(os.Getenv(service.EnvBucket)), Key: aws.String("kept"), Body: strings.NewReader("report")}

	s.Start(t)
	keyFile, err := os.ReadFile(filepath.Join(s.Data, "local-admin-key"))
	if err != nil {
		t.Fatalf("the first start wrote no key file: %v", err)
	}
	key := strings.TrimSpace(string(keyFile))
	var w struct{ ID string }
	s.Call(t, "POST", "/account/websites", key, `{"domain":"example.com"}`, 201, &w)
	if _, err := s3Client(t).PutObject(context.Background(), object); err != nil {
		t.Fatal(err)
	}
	credentialsKey := os.Getenv("OPENVITALS_CREDENTIALS_KEY")
	s.Stop()

	s.Start(t)
	defer s.Stop()
	// After the restart, the website with the first key.
	s.Call(t, "GET", "/"+w.ID+"/settings/pages", key, "", 200, nil)
	if again, _ := os.ReadFile(filepath.Join(s.Data, "local-admin-key")); string(again) != string(keyFile) {
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
