package uxworker_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGoogle answers as Google's APIs do, in their documented JSON formats: the CrUX API's
// records:queryRecord, Search Console's searchAnalytics.query, and the OAuth token endpoint
// that exchanges a service account's signed JWT for an access token. Tests reach it through
// the official clients with an endpoint option.
type fakeGoogle struct {
	t   *testing.T
	srv *httptest.Server
	// cruxKey is the API key the CrUX endpoint accepts.
	cruxKey string
	// pub and email are the service account whose signed JWTs the token endpoint accepts.
	pub   *rsa.PublicKey
	email string

	mu sync.Mutex
	// crux answers by "url formFactor": one answer per call, the last one repeating. A URL
	// without answers has no data (404).
	crux      map[string][]answer
	cruxCalls map[string]int
	// history answers records:queryHistoryRecord by "url formFactor" (or "origin formFactor"),
	// like crux; historyCalls counts the calls.
	history      map[string][]answer
	historyCalls map[string]int
	// search answers by property, like crux.
	search       map[string][]answer
	searchCalls  map[string]int
	searchBodies []map[string]any
	tokens       int
}

type answer struct {
	status int
	body   string
	header map[string]string
}

func newFakeGoogle(t *testing.T, cruxKey string, pub *rsa.PublicKey, email string) *fakeGoogle {
	f := &fakeGoogle{t: t, cruxKey: cruxKey, pub: pub, email: email,
		crux: map[string][]answer{}, cruxCalls: map[string]int{}, history: map[string][]answer{}, historyCalls: map[string]int{}, search: map[string][]answer{}, searchCalls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/records:queryRecord", f.queryRecord)
	mux.HandleFunc("POST /v1/records:queryHistoryRecord", f.queryHistoryRecord)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("POST /webmasters/v3/sites/", f.searchAnalytics)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGoogle) URL() string      { return f.srv.URL + "/" }
func (f *fakeGoogle) TokenURL() string { return f.srv.URL + "/token" }

func (f *fakeGoogle) next(answers map[string][]answer, calls map[string]int, key string) (answer, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls[key]++
	a, ok := answers[key]
	if !ok {
		return answer{}, false
	}
	return a[min(calls[key], len(a))-1], true
}

func write(w http.ResponseWriter, a answer) {
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func googleError(status int, reason, msg string) answer {
	return answer{status: status, body: fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q}}`, status, msg, reason)}
}

func (f *fakeGoogle) queryRecord(w http.ResponseWriter, r *http.Request) {
	var req struct {
		URL        string   `json:"url"`
		FormFactor string   `json:"formFactor"`
		Metrics    []string `json:"metrics"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.URL == "" || req.FormFactor == "" {
		write(w, googleError(400, "INVALID_ARGUMENT", "invalid request"))
		return
	}
	if r.URL.Query().Get("key") != f.cruxKey {
		f.mu.Lock()
		f.cruxCalls[req.URL+" "+req.FormFactor]++
		f.mu.Unlock()
		write(w, googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."))
		return
	}
	for _, m := range req.Metrics {
		if m == "first_input_delay" {
			write(w, googleError(400, "INVALID_ARGUMENT", "Invalid metric: first_input_delay"))
			return
		}
	}
	a, ok := f.next(f.crux, f.cruxCalls, req.URL+" "+req.FormFactor)
	if !ok {
		a = googleError(404, "NOT_FOUND", "chrome ux report data not found")
	}
	write(w, a)
}

// queryHistoryRecord answers the History API as the daily one: a known key, a URL or an origin
// and a form factor, at most 40 collection periods asked; 404 for a key without answers.
func (f *fakeGoogle) queryHistoryRecord(w http.ResponseWriter, r *http.Request) {
	var req struct {
		URL                   string   `json:"url"`
		Origin                string   `json:"origin"`
		FormFactor            string   `json:"formFactor"`
		Metrics               []string `json:"metrics"`
		CollectionPeriodCount int      `json:"collectionPeriodCount"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || (req.URL == "") == (req.Origin == "") || req.FormFactor == "" ||
		req.CollectionPeriodCount > 40 {
		write(w, googleError(400, "INVALID_ARGUMENT", "invalid request"))
		return
	}
	if r.URL.Query().Get("key") != f.cruxKey {
		write(w, googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."))
		return
	}
	a, ok := f.next(f.history, f.historyCalls, req.URL+req.Origin+" "+req.FormFactor)
	if !ok {
		a = googleError(404, "NOT_FOUND", "chrome ux report data not found")
	}
	write(w, a)
}

// historyRecord is a History API answer as the API writes it: n weekly collection periods
// ending on the Saturday lastDay (oldest first), each metric's three-bin histogramTimeseries
// and percentilesTimeseries; lcp gives period i's LCP p75 (a period the page had no data in
// is "NaN" densities and a null p75, as the API sends it: period 0 here).
func historyRecord(key, formFactor string, n int, lastDay time.Time, lcp func(i int) float64) answer {
	var periods, p75s, good, ni, poor []string
	for i := range n {
		last := lastDay.AddDate(0, 0, -7*(n-1-i))
		first := last.AddDate(0, 0, -27)
		periods = append(periods, fmt.Sprintf(`{"firstDate": {"year": %d, "month": %d, "day": %d}, "lastDate": {"year": %d, "month": %d, "day": %d}}`,
			first.Year(), first.Month(), first.Day(), last.Year(), last.Month(), last.Day()))
		if i == 0 {
			p75s, good, ni, poor = append(p75s, "null"), append(good, `"NaN"`), append(ni, `"NaN"`), append(poor, `"NaN"`)
			continue
		}
		p75s = append(p75s, fmt.Sprintf("%.0f", lcp(i)))
		good, ni, poor = append(good, "0.7925"), append(ni, "0.1215"), append(poor, "0.086")
	}
	j := func(v []string) string { return "[" + strings.Join(v, ", ") + "]" }
	keyField := `"url": ` + strconv.Quote(key)
	if !strings.Contains(strings.TrimPrefix(key, "https://"), "/") {
		keyField = `"origin": ` + strconv.Quote(key)
	}
	return answer{status: 200, body: fmt.Sprintf(`{
	  "record": {
	    "key": {"formFactor": %q, %s},
	    "metrics": {
	      "largest_contentful_paint": {
	        "histogramTimeseries": [{"start": 0, "end": 2500, "densities": %s}, {"start": 2500, "end": 4000, "densities": %s}, {"start": 4000, "densities": %s}],
	        "percentilesTimeseries": {"p75s": %s}
	      }
	    },
	    "collectionPeriods": %s
	  }
	}`, formFactor, keyField, j(good), j(ni), j(poor), j(p75s), j(periods))}
}

// record is a CrUX record as the API writes it: LCP, FCP and TTFB in integer milliseconds,
// CLS as strings, every vital with its three-bin histogram.
func record(url, formFactor string, withINP bool) answer {
	metrics := `
	  "largest_contentful_paint": {"histogram": [{"start": 0, "end": 2500, "density": 0.7925}, {"start": 2500, "end": 4000, "density": 0.1215}, {"start": 4000, "density": 0.086}], "percentiles": {"p75": 2406}},
	  "cumulative_layout_shift": {"histogram": [{"start": "0.00", "end": "0.10", "density": 0.8746}, {"start": "0.10", "end": "0.25", "density": 0.0838}, {"start": "0.25", "density": 0.0416}], "percentiles": {"p75": "0.05"}},
	  "first_contentful_paint": {"histogram": [{"start": 0, "end": 1800, "density": 0.6612}, {"start": 1800, "end": 3000, "density": 0.2102}, {"start": 3000, "density": 0.1286}], "percentiles": {"p75": 1932}},
	  "experimental_time_to_first_byte": {"histogram": [{"start": 0, "end": 800, "density": 0.5004}, {"start": 800, "end": 1800, "density": 0.3885}, {"start": 1800, "density": 0.1111}], "percentiles": {"p75": 1187}}`
	if withINP {
		metrics += `,
	  "interaction_to_next_paint": {"histogram": [{"start": 0, "end": 200, "density": 0.8103}, {"start": 200, "end": 500, "density": 0.1512}, {"start": 500, "density": 0.0385}], "percentiles": {"p75": 176}}`
	}
	return answer{status: 200, body: fmt.Sprintf(`{
	  "record": {
	    "key": {"formFactor": %q, "url": %q},
	    "metrics": {%s},
	    "collectionPeriod": {"firstDate": {"year": 2026, "month": 10, "day": 24}, "lastDate": {"year": 2026, "month": 11, "day": 20}}
	  },
	  "urlNormalizationDetails": {"originalUrl": %q, "normalizedUrl": %q}
	}`, formFactor, url, metrics, url, url)}
}

// token checks the service account's JWT (signature, issuer, scope, audience) and answers an
// access token, as Google's token endpoint does.
func (f *fakeGoogle) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokens++
	f.mu.Unlock()
	refuse := func(desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		_, _ = fmt.Fprintf(w, `{"error":"invalid_grant","error_description":%q}`, desc)
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		refuse("bad grant")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		refuse("not a JWT")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(f.pub, crypto.SHA256, sum[:], sig) != nil {
		refuse("Invalid JWT Signature.")
		return
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct{ Iss, Scope, Aud string }
	if json.Unmarshal(payload, &claims) != nil || claims.Iss != f.email || claims.Scope != "https://www.googleapis.com/auth/webmasters.readonly" || claims.Aud != f.TokenURL() {
		refuse("unexpected claims " + string(payload))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"access_token":"ya29.test-token","token_type":"Bearer","expires_in":3599}`)
}

func (f *fakeGoogle) searchAnalytics(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/webmasters/v3/sites/")
	escaped, ok := strings.CutSuffix(rest, "/searchAnalytics/query")
	property, err := url.PathUnescape(escaped)
	if !ok || err != nil {
		write(w, googleError(404, "NOT_FOUND", "not found"))
		return
	}
	if r.Header.Get("Authorization") != "Bearer ya29.test-token" {
		write(w, googleError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
		return
	}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	f.searchBodies = append(f.searchBodies, body)
	f.mu.Unlock()
	a, found := f.next(f.search, f.searchCalls, property)
	if !found {
		a = googleError(403, "PERMISSION_DENIED", fmt.Sprintf("User does not have sufficient permission for site '%s'. See also: https://support.google.com/webmasters/answer/2451999.", property))
	}
	write(w, a)
}

// searchRows is a searchAnalytics.query answer with dimension page.
func searchRows(rows ...string) answer {
	return answer{status: 200, body: `{"rows": [` + strings.Join(rows, ",") + `], "responseAggregationType": "byPage"}`}
}

func row(page string, clicks, impressions, position float64) string {
	return fmt.Sprintf(`{"keys": [%q], "clicks": %g, "impressions": %g, "ctr": %g, "position": %g}`, page, clicks, impressions, clicks/impressions, position)
}

// serviceAccount is a service account's JSON key file, as Google issues it, with a fresh key.
type serviceAccount struct {
	key   *rsa.PrivateKey
	email string
	json  []byte
}

func newServiceAccount(t *testing.T, email string) serviceAccount {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	file, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "acme-seo", "private_key_id": "abc123",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "1234567890",
		// Never used: the collector always exchanges tokens at its own token URL.
		"token_uri": "http://169.254.169.254/token",
	})
	return serviceAccount{key: k, email: email, json: file}
}

// fakeClock is the collector's clock in tests: sleeping advances it at once and is recorded,
// so pacing and backoff are checked without waiting.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
