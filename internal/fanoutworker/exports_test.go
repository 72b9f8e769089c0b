package fanoutworker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestExportAndRetentionJobs: a website's share of the exports job writes its Parquet files
// of the day before when its exports are on, and nothing when they are off; its share of the
// retention job queues its retention pass to the purge queue; each once a day.
func TestExportAndRetentionJobs(t *testing.T) {
	e := newEnv(t)
	bucket := awstest.Bucket(t)
	e.w.exports = export.New(e.st, bucket, rum.NewSegmentReader(awstest.RUM(t, e.st), e.st), bucket)
	on, _ := e.website("acme", "on.example", 2)
	off, _ := e.website("acme", "off.example", 2)
	if err := e.st.PutDataSettings(e.ctx, on, true, model.Retention{}); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC()
	day := today.Format(model.DayLayout)
	yesterday := today.AddDate(0, 0, -1).Format(model.DayLayout)
	for _, site := range []model.Website{on, off} {
		for range 2 { // a copy of the message does nothing more
			if err := e.w.Handle(e.ctx, fanout.Job{Day: day, Job: fanout.JobExports, Account: site.Account, Website: site.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys, err := bucket.Keys(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(export.Datasets) {
		t.Fatalf("exports written: %v; want the %d files of %s of the website that turned them on", keys, len(export.Datasets), yesterday)
	}
	for _, ds := range export.Datasets {
		if _, err := bucket.Get(e.ctx, export.Key(ds, on.ID, yesterday)); err != nil {
			t.Errorf("%s: %v", ds, err)
		}
	}

	for range 2 {
		if err := e.w.Handle(e.ctx, fanout.Job{Day: day, Job: fanout.JobRetention, Account: on.Account, Website: on.ID}); err != nil {
			t.Fatal(err)
		}
	}
	bodies := awstest.Receive(t, e.svc.Queues.Purge, 1)
	if len(bodies) != 1 {
		t.Fatalf("retention passes queued: %v, want one", bodies)
	}
	var job purge.Job
	if err := json.Unmarshal([]byte(bodies[0]), &job); err != nil || !job.Retention || job.Website != on.ID {
		t.Fatalf("retention message %s (%v)", bodies[0], err)
	}
}
