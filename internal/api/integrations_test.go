package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// serviceAccountKey returns a service-account key file like the ones Google issues, with a
// real RSA key (generated once per test binary).
var testRSAKey = sync.OnceValue(func() string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
})

func serviceAccountKey() map[string]string {
	return map[string]string{
		"type": "service_account", "project_id": "acme-seo", "private_key_id": "0123456789abcdef0123456789abcdef01234567",
		"private_key": testRSAKey(), "client_email": "openvitals@acme-seo.iam.gserviceaccount.com", "client_id": "123456789012345678901",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
	}
}

type searchConsole struct {
	Property       string          `json:"property"`
	ServiceAccount string          `json:"serviceAccount"`
	Created        time.Time       `json:"created"`
	Updated        time.Time       `json:"updated"`
	LastCollected  *time.Time      `json:"lastCollected"`
	LastError      json.RawMessage `json:"lastError"`
}

func TestSearchConsoleIntegration(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("www.example.com")
	path := "/" + site.ID + "/integrations/search-console"
	key := serviceAccountKey()

	e.do("GET", path, apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	e.do("PUT", path, apitest.ViewerKey, map[string]any{"property": "sc-domain:example.com", "credentials": key}).Want(t, 403).Problem(t)
	e.do("PUT", path, apitest.OtherKey, map[string]any{"property": "sc-domain:example.com", "credentials": key}).Want(t, 404).Problem(t)

	// Refusals name the bad field and store nothing.
	badKey := func(field, value string) map[string]string {
		k := serviceAccountKey()
		k[field] = value
		return k
	}
	for _, c := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"no property", map[string]any{"credentials": key}, 422, "property"},
		{"bare domain", map[string]any{"property": "example.com", "credentials": key}, 422, "property"},
		{"other domain", map[string]any{"property": "sc-domain:example.org", "credentials": key}, 422, "property"},
		{"other host", map[string]any{"property": "https://shop.example.com/", "credentials": key}, 422, "property"},
		{"query", map[string]any{"property": "https://www.example.com/?a=b", "credentials": key}, 422, "property"},
		{"no credentials", map[string]any{"property": "sc-domain:example.com"}, 422, "credentials"},
		{"null credentials", map[string]any{"property": "sc-domain:example.com", "credentials": nil}, 422, "credentials"},
		{"number credentials", map[string]any{"property": "sc-domain:example.com", "credentials": 42}, 422, "credentials"},
		{"text that is not JSON", map[string]any{"property": "sc-domain:example.com", "credentials": "hunter2"}, 422, "credentials"},
		{"user credentials", map[string]any{"property": "sc-domain:example.com", "credentials": badKey("type", "authorized_user")}, 422, "credentials.type"},
		{"no e-mail", map[string]any{"property": "sc-domain:example.com", "credentials": badKey("client_email", "")}, 422, "credentials.client_email"},
		{"garbage key", map[string]any{"property": "sc-domain:example.com", "credentials": badKey("private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")}, 422, "credentials.private_key"},
		{"huge key", map[string]any{"property": "sc-domain:example.com", "credentials": badKey("padding", strings.Repeat("x", 17<<10))}, 422, "credentials"},
		{"unknown field", map[string]any{"property": "sc-domain:example.com", "credentials": key, "enabled": true}, 400, "enabled"},
		{"property not a string", map[string]any{"property": 7, "credentials": key}, 400, "property"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.do("PUT", path, apitest.AdminKey, c.body).Want(t, c.status).Problem(t, c.field)
		})
	}
	e.do("GET", path, apitest.AdminKey, nil).Want(t, 404)

	// A URL-prefix property gets its trailing slash; the key never comes back.
	var sc searchConsole
	res := e.do("PUT", path, apitest.AdminKey, map[string]any{"property": "https://Example.com", "credentials": key}).Want(t, 200)
	res.Decode(t, &sc)
	if sc.Property != "https://example.com/" || sc.ServiceAccount != key["client_email"] || sc.LastCollected != nil || string(sc.LastError) != "null" {
		t.Errorf("PUT answered %s", res.Body)
	}
	noSecrets := func(body []byte) {
		t.Helper()
		for _, secret := range []string{"PRIVATE KEY", key["private_key_id"], "credentials", "MII"} {
			if bytes.Contains(body, []byte(secret)) {
				t.Errorf("response holds %q: %s", secret, body)
			}
		}
	}
	noSecrets(res.Body)
	got := e.do("GET", path, apitest.ViewerKey, nil).Want(t, 200)
	noSecrets(got.Body)
	var read searchConsole
	got.Decode(t, &read)
	if read.Property != sc.Property || !read.Created.Equal(sc.Created) {
		t.Errorf("GET %s, want what PUT answered %s", got.Body, res.Body)
	}

	// Stored sealed: unreadable in the table, and it opens only as this website's credentials.
	w := e.storedWebsite(site.ID)
	stored, err := e.store.SearchConsole(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored.Credentials, []byte("PRIVATE KEY")) || bytes.Contains(stored.Credentials, []byte(key["client_email"])) {
		t.Error("the stored credentials are readable")
	}
	plain, err := credentialsKey.Open(ctx, stored.Credentials, model.IntegrationAAD(w, model.SearchConsoleKind))
	var opened map[string]string
	if err != nil || json.Unmarshal(plain, &opened) != nil || opened["private_key"] != key["private_key"] {
		t.Fatalf("the stored credentials do not open to the key sent (%v)", err)
	}
	other := model.Website{Account: "acme", ID: "another"}
	if _, err := credentialsKey.Open(ctx, stored.Credentials, model.IntegrationAAD(other, model.SearchConsoleKind)); err == nil {
		t.Error("the credentials open as another website's")
	}

	// Replacing keeps the creation time; the key may come as the key file's text.
	text, _ := json.Marshal(key)
	var replaced searchConsole
	e.do("PUT", path, apitest.AdminKey, map[string]any{"property": "sc-domain:Example.com", "credentials": string(text)}).Want(t, 200).Decode(t, &replaced)
	if replaced.Property != "sc-domain:example.com" || !replaced.Created.Equal(sc.Created) || replaced.Updated.Before(sc.Updated) {
		t.Errorf("replaced %+v, created %v", replaced, sc.Created)
	}

	e.do("DELETE", path, apitest.ViewerKey, nil).Want(t, 403)
	e.do("DELETE", path, apitest.AdminKey, nil).Want(t, 204)
	e.do("GET", path, apitest.AdminKey, nil).Want(t, 404)
	e.do("DELETE", path, apitest.AdminKey, nil).Want(t, 404)
}

// TestSearchConsoleStatus shows what GET says after collections: when search analytics were
// stored, and why a collection failed, for these credentials only.
func TestSearchConsoleStatus(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/integrations/search-console"
	var sc searchConsole
	e.do("PUT", path, apitest.AdminKey, map[string]any{"property": "sc-domain:example.com", "credentials": serviceAccountKey()}).Want(t, 200).Decode(t, &sc)
	w, _ := e.store.Website(ctx, "acme", site.ID)
	at := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	if err := e.store.RecordSearchConsoleRun(ctx, w, sc.Updated, at, "User does not have sufficient permission for site 'sc-domain:example.com'."); err != nil {
		t.Fatal(err)
	}
	var failed struct {
		LastCollected *time.Time `json:"lastCollected"`
		LastError     *struct {
			Message string    `json:"message"`
			At      time.Time `json:"at"`
		} `json:"lastError"`
	}
	e.do("GET", path, apitest.AdminKey, nil).Want(t, 200).Decode(t, &failed)
	if failed.LastCollected != nil || failed.LastError == nil || !strings.Contains(failed.LastError.Message, "permission") || !failed.LastError.At.Equal(at) {
		t.Errorf("after a failure: %+v", failed)
	}
	if err := e.store.RecordSearchConsoleRun(ctx, w, sc.Updated, at.Add(time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	var ok searchConsole
	e.do("GET", path, apitest.AdminKey, nil).Want(t, 200).Decode(t, &ok)
	if ok.LastCollected == nil || !ok.LastCollected.Equal(at.Add(time.Hour)) || string(ok.LastError) != "null" {
		t.Errorf("after a success: lastCollected %v, lastError %s", ok.LastCollected, ok.LastError)
	}
	// A verdict on credentials replaced meanwhile is dropped.
	if err := e.store.RecordSearchConsoleRun(ctx, w, sc.Updated.Add(-time.Minute), at.Add(2*time.Hour), "stale"); err != nil {
		t.Fatal(err)
	}
	e.do("GET", path, apitest.AdminKey, nil).Want(t, 200).Decode(t, &ok)
	if string(ok.LastError) != "null" {
		t.Errorf("a run of older credentials was recorded: %s", ok.LastError)
	}
}
