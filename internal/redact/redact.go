// Package redact is the one rule that keeps a test profile's secrets, and every credential a
// load carries, out of what an audit stores, serves, logs or sends:
//
//   - the values of the Authorization, Proxy-Authorization, Cookie and Set-Cookie headers, and
//     of the headers a profile adds, become Marker; the header's name stays, and so do the
//     cookies' names (Cookie: a=[redacted]; b=[redacted]) and a Set-Cookie's attributes;
//   - the values of cookies listed on their own (a HAR's request.cookies and response.cookies,
//     the DevTools log's associated and blocked cookies) become Marker;
//   - every other occurrence of a secret value (a profile's header and cookie values, its
//     password, the values its login steps type or select, the cookies its login obtained), as
//     it is or URL-, base64-, JSON- or HTML-encoded, becomes Marker wherever it appears.
//
// Values shorter than MinSearched bytes are redacted where they are sent (by the header's or
// cookie's name) but not searched for elsewhere: "yes" would blank every "yes" of a report.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Marker replaces a redacted value.
const Marker = "[redacted]"

// MinSearched is the shortest secret value searched for in text.
const MinSearched = 4

// credentialHeaders are the headers whose values are redacted in every load, profile or not.
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// Rule redacts one load's secrets. The zero value is not usable: build one with New.
type Rule struct {
	headers  map[string]bool // lower-case names of the headers whose values are redacted
	replacer *strings.Replacer
}

// New returns the rule for a load: the credential headers and headerNames redacted by name,
// and each of secrets (and its encodings) wherever it appears.
func New(headerNames []string, secrets ...string) *Rule {
	r := &Rule{headers: map[string]bool{}}
	for _, n := range credentialHeaders {
		r.headers[n] = true
	}
	for _, n := range headerNames {
		r.headers[strings.ToLower(n)] = true
	}
	var forms []string
	for _, s := range secrets {
		if len(s) < MinSearched {
			continue
		}
		forms = append(forms, encodings(s)...)
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) }) // the longest first
	forms = slices.Compact(forms)
	if len(forms) > 0 {
		pairs := make([]string, 0, 2*len(forms))
		for _, f := range forms {
			pairs = append(pairs, f, Marker)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// encodings are the forms in which s may appear in text.
func encodings(s string) []string {
	quoted, _ := json.Marshal(s)
	out := []string{s, url.QueryEscape(s), url.PathEscape(s), html.EscapeString(s), string(quoted[1 : len(quoted)-1]),
		base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)),
		base64.RawStdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))}
	slices.Sort(out)
	return slices.Compact(out)
}

// String redacts every secret value in s.
func (r *Rule) String(s string) string {
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// IsRedacted tells whether the values of the header named name are redacted.
func (r *Rule) IsRedacted(name string) bool { return r.headers[strings.ToLower(name)] }

// Header returns what is kept of a header's value: the cookies' names of a Cookie or
// Set-Cookie header (with a Set-Cookie's attributes), Marker for another redacted header, and
// value with its secrets redacted for any other header.
func (r *Rule) Header(name, value string) string {
	switch n := strings.ToLower(name); {
	case n == "cookie":
		parts := strings.Split(value, ";")
		for i, p := range parts {
			parts[i] = cookieName(p) + "=" + Marker
		}
		return strings.Join(parts, ";")
	case n == "set-cookie":
		// DevTools joins several Set-Cookie headers with a line feed.
		lines := strings.Split(value, "\n")
		for i, line := range lines {
			first, attrs, found := strings.Cut(line, ";")
			lines[i] = cookieName(first) + "=" + Marker
			if found {
				lines[i] += ";" + r.String(attrs)
			}
		}
		return strings.Join(lines, "\n")
	case r.headers[n]:
		return Marker
	default:
		return r.String(value)
	}
}

// cookieName is the name of a "name=value" pair, its surrounding space kept.
func cookieName(pair string) string {
	name, _, _ := strings.Cut(pair, "=")
	return name
}

// headersText redacts raw HTTP headers ("Name: value" lines; the first may be the request or
// status line).
func (r *Rule) headersText(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		cr := strings.HasSuffix(line, "\r")
		line = strings.TrimSuffix(line, "\r")
		if name, value, ok := strings.Cut(line, ":"); ok && r.IsRedacted(strings.TrimSpace(name)) {
			line = name + ": " + r.Header(strings.TrimSpace(name), strings.TrimSpace(value))
		} else {
			line = r.String(line)
		}
		if cr {
			line += "\r"
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// Error returns err with its text redacted; errors.Is and errors.As still see err.
func (r *Rule) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// File redacts a JSON file in place (the DevTools log, a Lighthouse report, a HAR).
func (r *Rule) File(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := r.JSON(raw)
	if err != nil {
		return fmt.Errorf("redact %s: %w", path, err)
	}
	tmp := path + ".redacting"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// JSON redacts a JSON document, its keys' order and its numbers kept as they were: header
// values by their names (in header maps, in {name, value} lists and in raw header text),
// cookies' values, and secret values in every string.
func (r *Rule) JSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("redact: more than one JSON value")
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	encode(&out, r.walk(v, ""))
	return out.Bytes(), nil
}

// object is a JSON object with its keys in their order.
type object struct {
	keys []string
	vals []any
}

func (o *object) get(key string) any {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i]
		}
	}
	return nil
}

func decode(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := &object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
		}
		_, err = dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// walk redacts v, the value of the key parent (an array's items share their array's key).
func (r *Rule) walk(v any, parent string) any {
	switch t := v.(type) {
	case string:
		return r.String(t)
	case []any:
		for i, item := range t {
			t[i] = r.walk(item, parent)
		}
		return t
	case *object:
		name, named := t.get("name").(string)
		// A cookie listed on its own: a HAR's cookies, DevTools' {cookie: {name, value}}.
		cookie := named && (parent == "cookies" || parent == "cookie")
		for i, k := range t.keys {
			s, isString := t.vals[i].(string)
			switch {
			case !isString:
				t.vals[i] = r.walk(t.vals[i], k)
			case k == "value" && cookie:
				t.vals[i] = Marker
			case k == "value" && named:
				t.vals[i] = r.Header(name, s)
			case r.IsRedacted(k):
				t.vals[i] = r.Header(k, s)
			case k == "headersText" || k == "requestHeadersText":
				t.vals[i] = r.headersText(s)
			case k == "cookieLine":
				t.vals[i] = r.Header("set-cookie", s)
			default:
				t.vals[i] = r.String(s)
			}
			t.keys[i] = r.String(k)
		}
		return t
	}
	return v
}

func encode(out *bytes.Buffer, v any) {
	switch t := v.(type) {
	case *object:
		out.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				out.WriteByte(',')
			}
			encodeString(out, k)
			out.WriteByte(':')
			encode(out, t.vals[i])
		}
		out.WriteByte('}')
	case []any:
		out.WriteByte('[')
		for i, item := range t {
			if i > 0 {
				out.WriteByte(',')
			}
			encode(out, item)
		}
		out.WriteByte(']')
	case string:
		encodeString(out, t)
	case json.Number:
		out.WriteString(string(t))
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	default:
		out.WriteString("null")
	}
}

func encodeString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	out.Write(b)
}
