package api_test

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestTextLimitsCountCharacters: the text limits the API states in characters count
// characters, not the bytes of their UTF-8: text of 2-byte letters up to the limit is taken,
// one more is refused naming the field. A domain's limit is that of its ASCII form, which is
// what DNS counts.
func TestTextLimitsCountCharacters(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	w := "/" + site.ID

	// Annotations: text (500) and url (2000).
	e.do("POST", w+"/annotations", apitest.AdminKey, map[string]any{"text": strings.Repeat("é", 500)}).Want(t, 201)
	e.do("POST", w+"/annotations", apitest.AdminKey, map[string]any{"text": strings.Repeat("é", 501)}).Want(t, 422).Problem(t, "text")
	long := "https://example.com/" + strings.Repeat("é", 1980)
	e.do("POST", w+"/annotations", apitest.AdminKey, map[string]any{"text": "x", "url": long}).Want(t, 201)
	e.do("POST", w+"/annotations", apitest.AdminKey, map[string]any{"text": "x", "url": long + "é"}).Want(t, 422).Problem(t, "url")

	// A channel's URL (2048).
	hook := "https://hooks.example.com/" + strings.Repeat("é", 2048-len("https://hooks.example.com/"))
	e.do("POST", w+"/channels", apitest.AdminKey, map[string]any{"name": "n", "kind": "webhook", "url": hook}).Want(t, 201)
	e.do("POST", w+"/channels", apitest.AdminKey, map[string]any{"name": "n", "kind": "webhook", "url": hook + "é"}).Want(t, 422).Problem(t, "url")

	// A domain of 8 labels of 20 ü (327 bytes, 167 characters) is 211 characters as ASCII.
	label := strings.Repeat("ü", 20)
	idn := strings.Repeat(label+".", 8) + "de"
	created := e.createWebsite(idn)
	if len(created.Domain) > 253 || !strings.HasPrefix(created.Domain, "xn--") {
		t.Errorf("domain %q, want the ASCII form", created.Domain)
	}
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]any{"domain": strings.Repeat(label+".", 11) + "de"}).Want(t, 422).Problem(t, "domain")

	// A value quoted back in a problem is cut at a character, not inside one.
	p := e.do("GET", w+"/events?type="+url.QueryEscape("a"+strings.Repeat("é", 45)), apitest.ViewerKey, nil).Want(t, 400).Problem(t, "type")
	if len(p.Errors) != 1 || strings.ContainsRune(p.Errors[0].Message, utf8.RuneError) || !strings.Contains(p.Errors[0].Message, `"a`+strings.Repeat("é", 39)+`..."`) {
		t.Errorf("errors %+v: the value should be cut after 40 characters", p.Errors)
	}
}
