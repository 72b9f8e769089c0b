package auditworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// Secrets of the profile in the tests below: none may appear in a log, an answer of the API or
// a stored report.
const (
	secretHeader   = "hdr-5ecret-7f3a"
	secretCookie   = "cookie-5ecret-91bd"
	secretBasic    = "basic-5ecret-c2e0"
	secretPassword = "login-5ecret-d4e8"
	// secretPlan is the value a select step chooses: an option's value of the login form.
	secretPlan = "plan-5ecret-a6b1"
	// loginSession is the session cookie's value the login obtains.
	loginSession = "session-token-1"
)

// loginSite is a website with a login form and a private page: an anonymous request for the
// private page is redirected to the login, whose form sets a session cookie for the right
// password. The private page loads an image of its own host, an image of its host on another
// port (another origin) and a script of a second host (localhost, a third party); the servers
// record what each request carried (the third party's with its URI in X-URI).
type loginSite struct {
	host string // host:port of the website
	// thirdParty is the third party's host:port; other the origin of the website's host on
	// another port.
	thirdParty, other string
	mu                sync.Mutex
	own               []http.Header // the website's requests' headers
	// third are the third party's requests' headers; otherPort those of the other origin.
	third, otherPort []http.Header
}

// privateBulk makes the private page much larger than the login page.
var privateBulk = strings.Repeat("<p>Private figures of the signed-in user.</p>\n", 3000)

func newLoginSite(t *testing.T) *loginSite {
	t.Helper()
	s := &loginSite{}
	third := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := r.Header.Clone()
		h.Set("X-URI", r.URL.RequestURI())
		s.third = append(s.third, h)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(w, "window.thirdParty = true;\n")
	}))
	t.Cleanup(third.Close)
	_, thirdPort, _ := net.SplitHostPort(third.Listener.Addr().String())
	s.thirdParty = "localhost:" + thirdPort
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.otherPort = append(s.otherPort, r.Header.Clone())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = io.WriteString(w, `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`)
	}))
	t.Cleanup(other.Close)
	s.other = other.URL

	const session = loginSession
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Sign in", `<form method="post" action="/login"><input id="user" name="user"><input id="password" name="password" type="password">`+
			`<select id="plan" name="plan"><option value="basic">Basic</option><option value="`+secretPlan+`">Gold</option></select><button id="submit">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("user") == "alice" && r.FormValue("password") == secretPassword {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: session, Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/private", http.StatusSeeOther)
			return
		}
		page(w, "Sign in", `<p id="wrong">Wrong user or password.</p>`)
	})
	mux.HandleFunc("GET /private", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != session {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		page(w, "Private dashboard", `<h1 id="welcome">Welcome, Alice</h1><img src="/own.png" width="10" height="10" alt="">`+
			`<img src="`+other.URL+`/other.png" width="10" height="10" alt="">`+
			`<script src="http://localhost:`+thirdPort+`/tp.js"></script>`+privateBulk)
	})
	mux.HandleFunc("GET /own.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = io.WriteString(w, `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`)
	})
	// A public page with a render-blocking stylesheet and an image: what the network changes.
	mux.HandleFunc("GET /public", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Public", `<link rel="stylesheet" href="/style.css"><h1>Public</h1><p>`+strings.Repeat("Some text. ", 2000)+`</p>`)
	})
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = io.WriteString(w, "h1 { color: #123; }\n"+strings.Repeat("/* padding */\n", 4000))
	})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		h := r.Header.Clone()
		h.Set("X-Path", r.URL.Path)
		s.own = append(s.own, h)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(site.Close)
	s.host = site.Listener.Addr().String()
	return s
}

// requests returns copies of what the website's and the third party's servers recorded.
func (s *loginSite) requests() (own, third []http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.own...), append([]http.Header(nil), s.third...)
}

// otherOriginRequests returns a copy of what the server of the website's host on another port
// recorded.
func (s *loginSite) otherOriginRequests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.otherPort...)
}

// profileWorker is a worker of e's that opens profiles' secrets, records events, and logs,
// at debug level, into the returned buffer too.
func profileWorker(e *e2e) (*auditworker.Worker, *awstest.Output) {
	bin, err := browser.LookBin()
	if err != nil {
		e.t.Fatal(err)
	}
	logs := &awstest.Output{}
	log := awstest.LogAt(e.t, slog.LevelDebug, logs)
	return auditworker.NewWorker(auditworker.WorkerConfig{
		Runs: 1, Scheme: "http", Secrets: e.keys, Events: e.events,
		Browser: browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: true}, TempRoot: e.temp, Log: log},
	}, e.store, e.objects, e.runner, log), logs
}

// loginProfile is a profile's body: headers, a cookie, basic authentication and the login
// steps, typing password and selecting plan.
func loginProfile(name, page, password string) string {
	return loginProfileWith(name, page, password, secretPlan)
}

func loginProfileWith(name, page, password, plan string) string {
	b, _ := json.Marshal(map[string]any{"name": name,
		"pages":     []map[string]string{{"page": page, "device": "desktop"}},
		"headers":   []map[string]string{{"name": "X-Token", "value": secretHeader}},
		"cookies":   []map[string]string{{"name": "consent", "value": secretCookie}},
		"basicAuth": map[string]string{"user": "ci", "password": secretBasic},
		"login": []map[string]any{
			{"type": "navigate", "target": "/login"},
			{"type": "type", "target": "#user", "value": "alice"},
			{"type": "type", "target": "#password", "value": password},
			{"type": "select", "target": "#plan", "value": plan},
			{"type": "click", "target": "#submit", "waitForNavigation": true},
			{"type": "waitForSelector", "target": "#welcome"},
		}})
	return string(b)
}

// storedReport is the report stored at key, decompressed as artifact reads it for the API.
func storedReport(t testing.TB, objects *blobstore.Bucket, key string) []byte {
	t.Helper()
	return plain(t)(artifact.New(objects).Report(context.Background(), key))
}

// storedHTML is the HTML report of the report stored at key, decompressed.
func storedHTML(t testing.TB, objects *blobstore.Bucket, key string) []byte {
	t.Helper()
	return plain(t)(artifact.New(objects).HTML(context.Background(), artifact.HTMLKey(key)))
}

// plain returns a stored document's read's decompressed bytes, failing the test on an error.
func plain(t testing.TB) func(artifact.Document, error) []byte {
	return func(doc artifact.Document, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, err := doc.Plain()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestProfileLogin audits a private page with a profile of login steps, headers, a cookie and
// basic authentication, in real Chromium and Lighthouse: the audit measures the private page
// (not the login page it redirects anonymous visits to), the website's requests carry the
// headers, cookie and credentials and the third party's none, the result names the profile,
// and no secret appears in the logs, the API's answers or the stored reports. With a wrong
// password the audit fails at once, its lastError naming the failed step.
func TestProfileLogin(t *testing.T) {
	e := newE2E(t, true)
	site := newLoginSite(t)
	worker, logs := profileWorker(e)
	ctx := context.Background()

	var ws struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+site.host+`","method":"simulated"}`, 201, &ws)
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/settings/pages", `[{"url":"/private","alias":"Private"}]`, 200, &pages)
	private := pages[0].ID
	// The website's host on another port is named, so it gets the headers and credentials too.
	var body map[string]any
	if err := json.Unmarshal([]byte(loginProfile("Signed in", private, secretPassword)), &body); err != nil {
		t.Fatal(err)
	}
	body["origins"] = []string{site.other}
	named, _ := json.Marshal(body)
	var prof struct{ ID, Name string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/profiles", string(named), 201, &prof)

	job := audit.Job{Account: "acme", Website: ws.ID, Page: private, Device: "desktop", Queued: time.Now().UTC()}
	if err := worker.Audit(ctx, job, 1); err != nil {
		t.Fatal(err)
	}
	w, err := e.store.Website(ctx, "acme", ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	day := model.Day(time.Now())
	results, err := e.store.LabResults(ctx, w, private, "desktop", day, day)
	if err != nil || len(results) != 1 {
		t.Fatalf("results %+v, %v", results, err)
	}
	res := results[0]
	if res.ProfileID != prof.ID || res.ProfileName != "Signed in" {
		t.Errorf("the result names profile %q %q, want %s Signed in", res.ProfileID, res.ProfileName, prof.ID)
	}
	shown := e.pageDetail(ws.ID, private, "desktop")
	if shown.Profile.ID != prof.ID || shown.Profile.Name != "Signed in" {
		t.Errorf("the page detail shows profile %+v, want %s Signed in", shown.Profile, prof.ID)
	}
	// The private page was measured: its document, over 100 KB, and its final URL; the login
	// page is under 1 KB.
	if res.Metrics["bytes_doc"] < 100_000 {
		t.Errorf("document bytes %.0f: the login page was measured, not the private page", res.Metrics["bytes_doc"])
	}
	report := storedReport(t, e.objects, res.ReportKey)
	var lhr struct {
		FinalDisplayedURL string `json:"finalDisplayedUrl"`
		Audits            map[string]struct {
			Score *float64 `json:"score"`
		} `json:"audits"`
	}
	if err := json.Unmarshal(report, &lhr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(lhr.FinalDisplayedURL, "/private") {
		t.Errorf("Lighthouse ended on %s, want the private page", lhr.FinalDisplayedURL)
	}
	if !bytes.Contains(report, []byte("Welcome, Alice")) && !bytes.Contains(report, []byte("Private figures")) {
		// The report's DOM snippets (largest contentful paint element, text nodes) are of the page audited.
		t.Log("the report holds no text of the private page (no snippet of it was reported)")
	}

	// Headers, cookie and credentials: on the website's requests after the login, never on
	// the third party's.
	own, third := site.requests()
	var ownPrivate, ownImage int
	for _, h := range own {
		carries := h.Get("X-Token") == secretHeader && strings.Contains(h.Get("Cookie"), "consent="+secretCookie) && strings.HasPrefix(h.Get("Authorization"), "Basic ")
		switch {
		case h.Get("X-Path") == "/private" && carries && strings.Contains(h.Get("Cookie"), "session="):
			ownPrivate++
		case h.Get("X-Path") == "/own.png" && carries:
			ownImage++
		}
	}
	t.Logf("the website's requests with the profile's headers, cookies and credentials: %d of /private, %d of /own.png; the third party's: %d", ownPrivate, ownImage, len(third))
	if ownPrivate == 0 || ownImage == 0 {
		t.Errorf("the website's requests with the headers, cookies and credentials: %d of /private, %d of /own.png; want some of each", ownPrivate, ownImage)
	}
	if len(third) == 0 {
		t.Error("the third party's script was never requested")
	}
	otherCarries := 0
	for _, h := range site.otherOriginRequests() {
		if h.Get("X-Token") == secretHeader && strings.HasPrefix(h.Get("Authorization"), "Basic ") {
			otherCarries++
		}
	}
	if otherCarries == 0 {
		t.Error("the origin the profile names got no request with its headers and credentials")
	}
	for _, h := range third {
		if h.Get("X-Token") != "" || h.Get("Authorization") != "" || h.Get("Cookie") != "" {
			t.Errorf("the third party got the profile's headers or cookies: %v", h)
		}
	}

	// A wrong password: the audit ends at once, naming the failed step (numbered from 1).
	var pages2 []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/settings/pages", `[{"url":"/private?again","alias":"Private again"}]`, 200, &pages2)
	e.api.Call(e.t, "POST", "/"+ws.ID+"/profiles", loginProfile("Wrong", pages2[0].ID, "wrong-password"), 201, nil)
	job2 := audit.Job{Account: "acme", Website: ws.ID, Page: pages2[0].ID, Device: "desktop", Queued: time.Now().UTC()}
	err = worker.Audit(ctx, job2, 1)
	if err == nil {
		t.Fatal("the audit with a wrong password passed")
	}
	detail := e.pageDetail(ws.ID, pages2[0].ID, "desktop")
	if !strings.HasPrefix(detail.LastError.Message, "login step 6 (waitForSelector #welcome) failed: ") {
		t.Errorf("lastError %q, want it to name login step 6", detail.LastError.Message)
	}
	if results, _ := e.store.LabResults(ctx, w, pages2[0].ID, "desktop", day, day); len(results) != 0 {
		t.Errorf("a failed login stored a result: %+v", results)
	}

	// No secret in the logs, the API's answers or the stored reports.
	var answers bytes.Buffer
	for _, path := range []string{"/" + ws.ID + "/profiles", "/" + ws.ID + "/profiles/" + prof.ID, "/" + ws.ID + "/pages/" + private + "?device=desktop",
		"/" + ws.ID + "/pages/" + pages2[0].ID + "?device=desktop", "/" + ws.ID + "/events", "/" + ws.ID + "/annotations"} {
		var raw json.RawMessage
		e.api.Call(e.t, "GET", path, "", 200, &raw)
		answers.Write(raw)
	}
	html := storedHTML(t, e.objects, res.ReportKey)
	for _, secret := range []string{secretHeader, secretCookie, secretBasic, secretPassword, secretPlan} {
		for where, text := range map[string]string{"the logs": logs.String(), "the API's answers": answers.String(),
			"the JSON report": string(report), "the HTML report": string(html)} {
			if strings.Contains(text, secret) {
				t.Errorf("%s hold the secret %q", where, secret)
			}
		}
	}
	if !strings.Contains(logs.String(), "audit finished") {
		t.Error("the logs were not captured")
	}
	e.checkNothingLeft()
}

// TestProfileNetwork audits a page without a profile, then with a default profile of a slow
// network (Lighthouse's regular 3G preset and a slower CPU): the simulated metrics grow, and
// the second result names the profile.
func TestProfileNetwork(t *testing.T) {
	e := newE2E(t, true)
	site := newLoginSite(t)
	worker, _ := profileWorker(e)
	ctx := context.Background()

	var ws struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+site.host+`","method":"simulated"}`, 201, &ws)
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/settings/pages", `[{"url":"/public"}]`, 200, &pages)
	w, err := e.store.Website(ctx, "acme", ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	measure := func() model.LabResult {
		t.Helper()
		job := audit.Job{Account: "acme", Website: ws.ID, Page: pages[0].ID, Device: "desktop", Queued: time.Now().UTC()}
		if err := worker.Audit(ctx, job, 1); err != nil {
			t.Fatal(err)
		}
		day := model.Day(time.Now())
		results, err := e.store.LabResults(ctx, w, pages[0].ID, "desktop", day, day)
		if err != nil || len(results) != 1 {
			t.Fatalf("results %+v, %v", results, err)
		}
		return results[0]
	}
	plain := measure()
	var prof struct{ ID string }
	e.api.Call(e.t, "POST", "/"+ws.ID+"/profiles", `{"name":"Slow 3G","default":true,"network":{"preset":"mobileRegular3G","cpuSlowdown":6}}`, 201, &prof)
	slow := measure()

	t.Logf("desktop: FCP %.0f ms, LCP %.0f ms, SI %.0f ms; slow 3G: FCP %.0f ms, LCP %.0f ms, SI %.0f ms",
		plain.Metrics["fcp"], plain.Metrics["lcp"], plain.Metrics["speed_index"], slow.Metrics["fcp"], slow.Metrics["lcp"], slow.Metrics["speed_index"])
	if plain.ProfileID != "" || slow.ProfileID != prof.ID || slow.ProfileName != "Slow 3G" {
		t.Errorf("profiles of the results: %q then %q %q, want none then %s", plain.ProfileID, slow.ProfileID, slow.ProfileName, prof.ID)
	}
	for _, m := range []string{"fcp", "lcp"} {
		// 300 ms round trips instead of 40 ms: the document and its stylesheet take several more.
		if slow.Metrics[m] < plain.Metrics[m]+500 {
			t.Errorf("%s %.0f ms on slow 3G, %.0f ms on the desktop's network: want it at least 500 ms slower", m, slow.Metrics[m], plain.Metrics[m])
		}
	}
	if slow.Metrics["performance_score"] >= plain.Metrics["performance_score"] && plain.Metrics["performance_score"] < 100 {
		t.Errorf("performance score %.2f on slow 3G, %.2f without: want it lower", slow.Metrics["performance_score"], plain.Metrics["performance_score"])
	}
}
