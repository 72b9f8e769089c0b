package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type experimentOut struct {
	ID      string `json:"id"`
	Page    string `json:"page"`
	Device  string `json:"device"`
	Status  string `json:"status"`
	Changes struct {
		Block []string `json:"block"`
	} `json:"changes"`
	Metrics []compare.Metric `json:"metrics"`
}

// TestExperiments: an admin starts an experiment on a page (queued with its audit message),
// anyone of the account reads it, and a completed one answers its metrics beside its control's;
// an admin deletes it (its objects purged after it); bad input is 422 naming the fields, a
// viewer gets 403, another account 404.
func TestExperiments(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	pages := e.createPages(site.ID, "/")
	base := "/" + site.ID + "/experiments"
	body := map[string]any{"page": pages[0].ID, "device": "mobile", "changes": map[string]any{"block": []string{"*://cdn.example.net/*"}}}

	e.do("POST", base, apitest.ViewerKey, body).Want(t, 403)
	e.do("POST", base, apitest.OtherKey, body).Want(t, 404)
	e.do("POST", base, apitest.AdminKey, map[string]any{"page": "nope", "device": "tablet", "changes": map[string]any{
		"block": []string{""}, "delay": []map[string]any{{"pattern": "*", "ms": 0}}, "replace": []map[string]string{{"find": "", "with": "x"}}}}).
		Want(t, 422).Problem(t, "page", "device", "changes.block[0]", "changes.delay[0].ms", "changes.replace[0].find")
	e.do("POST", base, apitest.AdminKey, map[string]any{"page": pages[0].ID, "device": "mobile", "changes": map[string]any{}}).Want(t, 422).Problem(t, "changes")

	var x experimentOut
	e.do("POST", base, apitest.AdminKey, body).Want(t, 202).Decode(t, &x)
	if x.Status != "queued" || x.Page != pages[0].ID || len(x.Changes.Block) != 1 || x.Metrics != nil {
		t.Fatalf("created %+v", x)
	}
	msgs := awstest.Receive(t, e.audits, 1)
	if len(msgs) != 1 || !strings.Contains(msgs[0], `"experiment":"`+x.ID+`"`) {
		t.Errorf("audit queue %v, want one message naming the experiment", msgs)
	}
	if list := apitest.List[experimentOut](t, e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200)); len(list) != 1 || list[0].ID != x.ID {
		t.Errorf("list %+v", list)
	}

	// Completed (as the worker records it): its metrics beside its control's.
	ctx := context.Background()
	w := e.storedWebsite(site.ID)
	stored, err := e.store.Experiment(ctx, w, x.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	stored.Status, stored.Finished = model.RunCompleted, &now
	stored.Control = &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 450, "bytes_total": 300000}}
	stored.Measured = &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 20, "bytes_total": 120000}}
	if err := e.store.UpdateExperiment(ctx, w, stored); err != nil {
		t.Fatal(err)
	}
	var got experimentOut
	e.do("GET", base+"/"+x.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	found := false
	for _, m := range got.Metrics {
		if m.Name == "tbt" {
			found = m.Base != nil && *m.Base == 450 && m.Target != nil && *m.Target == 20 && m.Delta != nil && *m.Delta == -430
		}
	}
	if got.Status != "completed" || !found {
		t.Errorf("completed experiment %+v", got)
	}
	e.do("GET", base+"/"+x.ID, apitest.OtherKey, nil).Want(t, 404)
	e.do("GET", base+"/exp_nosuch", apitest.AdminKey, nil).Want(t, 404)

	// Deleted by an admin of the account only: then gone, and a purge of its objects queued.
	e.do("DELETE", base+"/"+x.ID, apitest.ViewerKey, nil).Want(t, 403)
	e.do("DELETE", base+"/"+x.ID, apitest.OtherKey, nil).Want(t, 404)
	e.do("DELETE", base+"/exp_nosuch", apitest.AdminKey, nil).Want(t, 404)
	e.do("GET", base+"/"+x.ID, apitest.ViewerKey, nil).Want(t, 200)
	e.deleted(t, base+"/"+x.ID)
	e.do("GET", base+"/"+x.ID, apitest.ViewerKey, nil).Want(t, 404)
	if list := apitest.List[experimentOut](t, e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200)); len(list) != 0 {
		t.Errorf("list after the deletion %+v", list)
	}
	if msgs := awstest.Receive(t, e.purges, 1); len(msgs) != 1 || !strings.Contains(msgs[0], `"experiment":"`+x.ID+`"`) {
		t.Errorf("purge queue %v, want one message naming the experiment", msgs)
	}
}
