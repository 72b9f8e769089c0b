package rumstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awsmeter"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

const (
	account = "acme"
	website = "w1"
	day     = "20261120"
)

func cell(dim, metric string, shard int, daily bool) model.RUMCell {
	return model.RUMCell{Day: day, Dim: dim, Metric: metric, Shard: shard, Daily: daily}
}

// A report reads a day's pointer and then only the tables it asks for, by range: a small
// table of a large day costs a small read; tables far apart are separate ranges, tables next
// to each other one.
func TestReportsReadOnlyTheirTables(t *testing.T) {
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	url := awstest.S3Server(t)
	rums := rumstore.New(st, awstest.BucketAt(t, url), 400*24*time.Hour, awstest.Log(t))
	sess := rums.Session(account, website)
	big := bytes.Repeat([]byte{7}, 1<<20)
	tables := map[model.RUMCell][]byte{
		cell("p", "_n", 0, false): []byte("views of shard 0"), cell("p", "_n", 1, false): []byte("views of shard 1"),
		cell("p", "lcp", 0, false): big, cell("p", "zz", 0, false): []byte("a custom variable's table"),
	}
	for c, data := range tables {
		if err := sess.PutTable(ctx, c, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Commit(ctx, []string{"e1"}); err != nil {
		t.Fatal(err)
	}

	m := awsmeter.New()
	reader := rumstore.New(st, awstest.BucketAt(t, url, m.S3), 400*24*time.Hour, awstest.Log(t))
	want := []model.RUMCell{cell("p", "_n", 0, false), cell("p", "_n", 1, false), cell("p", "zz", 0, false), cell("c", "lcp", 0, false)}
	got, err := reader.RUMTables(ctx, account, website, want, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d tables read, want the 3 stored (the fourth never was)", len(got))
	}
	for _, c := range want[:3] {
		if !bytes.Equal(got[c].Data, tables[c]) {
			t.Errorf("%v: %q, want %q", c, got[c].Data, tables[c])
		}
	}
	u := m.Usage()
	// The two shards of p/_n lie together; p/zz lies after the megabyte of p/lcp.
	if u.S3Reads != 2 || u.S3BytesOut > 1000 {
		t.Errorf("%d GETs of %d bytes in all, want 2 ranges of the tables' few bytes", u.S3Reads, u.S3BytesOut)
	}
}

// Each commit writes a new generation and points the day at it if the pointer still names
// the generation the session read: a second writer fails instead of losing the first's fold.
// The generation before the previous one is removed (a report may still read the previous).
func TestCommitIsConditionalAndKeepsThePreviousGeneration(t *testing.T) {
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	bucket := awstest.Bucket(t)
	rums := rumstore.New(st, bucket, 400*24*time.Hour, awstest.Log(t))
	put := func(sess *rumstore.Session, data string) error {
		if err := sess.PutTable(ctx, cell("p", "_n", 0, false), []byte(data)); err != nil {
			t.Fatal(err)
		}
		return sess.Commit(ctx, nil)
	}
	for i := range 3 {
		if err := put(rums.Session(account, website), strings.Repeat("x", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := bucket.Keys(ctx, blobstore.WebsitePrefix(account, website))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || !strings.Contains(keys[0], "/0000000002-") || !strings.Contains(keys[1], "/0000000003-") {
		t.Errorf("objects %v, want generations 2 and 3", keys)
	}
	a, b := rums.Session(account, website), rums.Session(account, website)
	for _, s := range []*rumstore.Session{a, b} {
		if _, err := s.Tables(ctx, []model.RUMCell{cell("p", "_n", 0, false)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := put(a, "a"); err != nil {
		t.Fatal(err)
	}
	if err := put(b, "b"); err == nil {
		t.Fatal("a second writer's commit over the first's succeeded")
	}
	got, err := rums.RUMTables(ctx, account, website, []model.RUMCell{cell("p", "_n", 0, false)}, true)
	if err != nil || string(got[cell("p", "_n", 0, false)].Data) != "a" {
		t.Errorf("table %q (%v), want the first writer's", got[cell("p", "_n", 0, false)].Data, err)
	}
}

// Log entries up to 4 KB stay in the table, larger ones go to S3; both read back in key order
// with their data. Once folded they are not read again, but an entry written late with a key
// from before the compaction started still is.
func TestLogEntriesAndTheirMark(t *testing.T) {
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	bucket := awstest.Bucket(t)
	rums := rumstore.New(st, bucket, 400*24*time.Hour, awstest.Log(t))
	t0 := time.Now()
	small, large := []byte("small entry"), bytes.Repeat([]byte{1}, 5000)
	entries := []model.RUMChunk{
		{Account: account, Website: website, Key: rumstore.LogKey(t0, "a"), Views: 1, Data: small},
		{Account: account, Website: website, Key: rumstore.LogKey(t0.Add(time.Millisecond), "b"), Views: 40, Data: large},
	}
	if err := rums.Append(ctx, entries); err != nil {
		t.Fatal(err)
	}
	keys, _ := bucket.Keys(ctx, blobstore.WebsitePrefix(account, website))
	if len(keys) != 1 {
		t.Errorf("objects %v, want the large entry's only", keys)
	}
	got, mark, err := rums.Pending(ctx, account, website)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0].Data, small) || !bytes.Equal(got[1].Data, large) || got[1].Views != 40 {
		t.Fatalf("pending %d entries (%v), want both with their data in order", len(got), err)
	}
	if err := rums.Folded(ctx, account, website, mark, got, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if keys, _ := bucket.Keys(ctx, blobstore.WebsitePrefix(account, website)); len(keys) != 0 {
		t.Errorf("objects %v after the fold, want none", keys)
	}
	// Written after the compaction read the log, with a key from before it started.
	lateEntry := model.RUMChunk{Account: account, Website: website, Key: rumstore.LogKey(t0.Add(500*time.Millisecond), "c"), Views: 2, Data: small}
	if err := rums.Append(ctx, []model.RUMChunk{lateEntry}); err != nil {
		t.Fatal(err)
	}
	got, _, err = rums.Pending(ctx, account, website)
	if err != nil || len(got) != 1 || got[0].Key != lateEntry.Key {
		t.Fatalf("pending %+v (%v), want only the late entry", got, err)
	}
}

// Deleting a website's objects removes its days and log entries, and only its.
func TestDeleteWebsite(t *testing.T) {
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	bucket := awstest.Bucket(t)
	rums := rumstore.New(st, bucket, 400*24*time.Hour, awstest.Log(t))
	for _, w := range []string{website, "w2"} {
		sess := rums.Session(account, w)
		if err := sess.PutTable(ctx, cell("p", "_n", 0, false), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := sess.Commit(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := rums.DeleteWebsite(ctx, account, website); err != nil || n != 1 {
		t.Fatalf("deleted %d (%v), want the one day", n, err)
	}
	if keys, _ := bucket.Keys(ctx, ""); len(keys) != 1 || !strings.Contains(keys[0], "/w2/") {
		t.Errorf("objects %v, want w2's only", keys)
	}
}
