package api

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// maxCredentialsBytes bounds a service-account key: Google's are about 2.3 KB.
const maxCredentialsBytes = 16 << 10

// searchConsoleJSON is a website's Search Console integration as the interface shows it: never
// with its credentials.
type searchConsoleJSON struct {
	Property       string          `json:"property"`
	ServiceAccount string          `json:"serviceAccount"`
	Created        time.Time       `json:"created"`
	Updated        time.Time       `json:"updated"`
	LastCollected  *time.Time      `json:"lastCollected"`
	LastError      *collectErrJSON `json:"lastError"`
}

type collectErrJSON struct {
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

func toSearchConsoleJSON(sc model.SearchConsole) searchConsoleJSON {
	out := searchConsoleJSON{Property: sc.Property, ServiceAccount: sc.ServiceAccount, Created: sc.Created, Updated: sc.Updated}
	if !sc.LastCollected.IsZero() {
		at := sc.LastCollected
		out.LastCollected = &at
	}
	if sc.LastError != "" {
		out.LastError = &collectErrJSON{Message: sc.LastError, At: sc.LastErrorAt}
	}
	return out
}

func (s *Server) getSearchConsole(w http.ResponseWriter, r *http.Request, c caller) error {
	_, sc, err := websiteAnd(s, r, c, s.store.SearchConsole)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toSearchConsoleJSON(sc))
}

// putSearchConsole sets up, or replaces, the website's Search Console integration: the
// property to read and a service-account key, sealed before it is stored. Google is not asked
// here: a property the account cannot read shows as lastError after the next collection.
func (s *Server) putSearchConsole(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[struct {
		Property    *string         `json:"property"`
		Credentials json.RawMessage `json:"credentials"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	var errs model.FieldErrors
	property := ""
	if in.Property == nil {
		errs.Add("property", "is required")
	} else if p, msg := checkProperty(*in.Property, site.Domain); msg != "" {
		errs.Add("property", "%s", msg)
	} else {
		property = p
	}
	key, email := checkServiceAccountKey(in.Credentials, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	sealed, err := s.sealer.Seal(r.Context(), key, model.IntegrationAAD(site, model.SearchConsoleKind))
	if err != nil {
		return err
	}
	now := s.now()
	sc := model.SearchConsole{Property: property, ServiceAccount: email, Credentials: sealed, Created: now, Updated: now}
	switch old, err := s.store.SearchConsole(r.Context(), site); {
	case err == nil:
		sc.Created = old.Created
	case !isNotFound(err):
		return err
	}
	if err := s.store.PutSearchConsole(r.Context(), site, sc); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toSearchConsoleJSON(sc))
}

func (s *Server) deleteSearchConsole(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	if err := s.store.DeleteSearchConsole(r.Context(), site); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkProperty checks a Search Console property against the website's domain and returns it
// as Search Console names it: a URL prefix (https://www.example.com/, with its trailing slash)
// or a domain property (sc-domain:example.com). Either must cover the website's domain, give
// or take a leading www., so that a typo does not silently collect another site's data.
func checkProperty(p, domain string) (string, string) {
	const hint = "must be a URL-prefix property such as https://www.example.com/ or a domain property such as sc-domain:example.com"
	covers := func(host string) bool {
		bare := strings.TrimPrefix(domain, "www.")
		return host == domain || host == bare || host == "www."+bare
	}
	switch {
	case p == "":
		return "", "is required"
	case len(p) > maxURLLen:
		return "", "is too long"
	case strings.HasPrefix(p, "sc-domain:"):
		d, msg := normalizeDomain(strings.TrimPrefix(p, "sc-domain:"), false)
		if msg != "" {
			return "", "names a domain that " + msg
		}
		if domain != d && !strings.HasSuffix(domain, "."+d) {
			return "", "must cover the website's domain " + domain
		}
		return "sc-domain:" + d, ""
	case strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://"):
		u, err := url.Parse(p)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(p, " \t\r\n") {
			return "", hint
		}
		host := strings.ToLower(u.Host)
		if !covers(host) {
			return "", "must be a URL on the website's domain " + domain
		}
		path := u.EscapedPath()
		if !strings.HasSuffix(path, "/") {
			path += "/" // Search Console names URL-prefix properties with a trailing slash
		}
		return u.Scheme + "://" + host + path, ""
	}
	return "", hint
}

// serviceAccountKey is the part of a Google service-account key file that matters here.
type serviceAccountKey struct {
	Type        string `json:"type"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
}

// checkServiceAccountKey checks the credentials member, a service-account key file as Google
// gives it (a JSON object, or that object's text in a string), and returns the key's compact
// JSON and its e-mail address. Problems are added to errs.
func checkServiceAccountKey(raw json.RawMessage, errs *model.FieldErrors) ([]byte, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		errs.Add("credentials", "is required: the service account's JSON key file, as an object")
		return nil, ""
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			errs.Add("credentials", "must be the JSON key file, as an object or a string")
			return nil, ""
		}
		raw = []byte(strings.TrimSpace(text))
	}
	if len(raw) > maxCredentialsBytes {
		errs.Add("credentials", "is larger than %d bytes; a service-account key is about 2.3 KB", maxCredentialsBytes)
		return nil, ""
	}
	var key serviceAccountKey
	var compact bytes.Buffer
	if !bytes.HasPrefix(raw, []byte("{")) || json.Unmarshal(raw, &key) != nil || json.Compact(&compact, raw) != nil {
		errs.Add("credentials", "must be the service account's JSON key file, as an object")
		return nil, ""
	}
	n := len(*errs)
	if key.Type != "service_account" {
		errs.Add("credentials.type", "must be service_account: create a key for a service account in the Google Cloud console")
	}
	if a, err := mail.ParseAddress(key.ClientEmail); err != nil || a.Address != key.ClientEmail {
		errs.Add("credentials.client_email", "must be the service account's e-mail address")
	}
	if !validPrivateKey(key.PrivateKey) {
		errs.Add("credentials.private_key", "must be the key file's PEM-encoded RSA private key")
	}
	if len(*errs) > n {
		return nil, ""
	}
	return compact.Bytes(), key.ClientEmail
}

// validPrivateKey tells whether s is a PEM-encoded RSA private key, as Google issues them.
func validPrivateKey(s string) bool {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return false
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		_, isRSA := k.(*rsa.PrivateKey)
		return isRSA
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}
