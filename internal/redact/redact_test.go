package redact_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/redact"
)

const (
	token    = "tok-5ecret/+=&x"
	password = "pass-5ecret"
	session  = "sess-5ecret"
)

func rule() *redact.Rule { return redact.New([]string{"X-Token"}, token, password, session, "yes") }

// TestJSONDevToolsAndHAR: header maps, name/value lists, raw header text and cookie lists of a
// DevTools log and of a HAR keep their names and lose their values; secret values elsewhere
// (a URL, a text) in any encoding are gone; keys keep their order and numbers their text.
func TestJSONDevToolsAndHAR(t *testing.T) {
	in := `{"z":1.50,"a":[{"method":"Network.requestWillBeSentExtraInfo","params":{"headers":{"Cookie":"consent=yes; session=` + session + `","x-token":"` + token + `","Accept":"*/*"},` +
		`"associatedCookies":[{"blockedReasons":[],"cookie":{"name":"session","value":"` + session + `","httpOnly":true}}]}},` +
		`{"method":"Network.responseReceivedExtraInfo","params":{"headers":{"set-cookie":"a=1; Path=/\nsession=` + session + `; HttpOnly"},` +
		`"headersText":"HTTP/1.1 200 OK\r\nSet-Cookie: session=` + session + `; Path=/\r\nAuthorization: Basic abc\r\nX-Other: ` + password + `\r\n",` +
		`"blockedCookies":[{"blockedReasons":["SameSiteLax"],"cookieLine":"b=2; Secure"}]}},` +
		`{"request":{"url":"http://h/?p=` + url.QueryEscape(password) + `&b=` + base64.StdEncoding.EncodeToString([]byte(token)) + `",` +
		`"headers":[{"name":"Authorization","value":"Basic Y2k6cGFzcw=="},{"name":"X-Token","value":"t"},{"name":"Accept","value":"text/html"}],` +
		`"cookies":[{"name":"consent","value":"yes"}],"queryString":[{"name":"p","value":"` + password + `"}]},` +
		`"text":"Welcome \u003cb\u003e` + strings.ReplaceAll(token, "/", `\/`) + `"}]}`
	out, err := rule().JSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	t.Log(got)
	for _, secret := range []string{token, password, session, url.QueryEscape(password), base64.StdEncoding.EncodeToString([]byte(token)), "Y2k6cGFzcw==", `"value":"yes"`, "consent=yes", "a=1", "b=2"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q is left", secret)
		}
	}
	for _, kept := range []string{`{"z":1.50,"a":`, `"Cookie":"consent=[redacted]; session=[redacted]"`, `"x-token":"[redacted]"`, `"Accept":"*/*"`,
		`"cookie":{"name":"session","value":"[redacted]","httpOnly":true}`, `"set-cookie":"a=[redacted]; Path=/\nsession=[redacted]; HttpOnly"`,
		`Set-Cookie: session=[redacted]; Path=/\r\nAuthorization: [redacted]\r\nX-Other: [redacted]\r\n`, `"cookieLine":"b=[redacted]; Secure"`,
		`{"name":"Authorization","value":"[redacted]"}`, `{"name":"X-Token","value":"[redacted]"}`, `{"name":"Accept","value":"text/html"}`,
		`{"name":"consent","value":"[redacted]"}`, `{"name":"p","value":"[redacted]"}`, `Welcome \u003cb\u003e[redacted]`} {
		if !strings.Contains(got, kept) {
			t.Errorf("want %s in the output", kept)
		}
	}
	if _, err := rule().JSON([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Error("two documents were taken as one")
	}
}

// TestShortValues: a value under MinSearched bytes is redacted where it is sent by name, but
// not searched for in text.
func TestShortValues(t *testing.T) {
	r := rule()
	if got := r.String("yes, we agree"); got != "yes, we agree" {
		t.Errorf("short value searched: %q", got)
	}
	if got := r.Header("Cookie", "consent=yes"); got != "consent=[redacted]" {
		t.Errorf("cookie header: %q", got)
	}
}

// TestError: the message loses its secrets, the error chain stays.
func TestError(t *testing.T) {
	err := rule().Error(fmt.Errorf("login step 2 failed: option %q: %w", password, fs.ErrNotExist))
	if strings.Contains(err.Error(), password) || !strings.Contains(err.Error(), redact.Marker) {
		t.Errorf("error %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the chain is lost")
	}
	plain := errors.New("nothing secret")
	if rule().Error(plain) != plain {
		t.Error("an error without secrets was wrapped")
	}
}
