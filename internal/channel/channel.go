// Package channel is what a website's notification channels are: the kinds (a webhook, a Slack
// incoming webhook, email recipients), the checks of their URLs, their signing secrets, and
// their targets sealed at rest. The deliver package sends to them.
package channel

import (
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openvitals/openvitals/internal/hostname"
)

// The kinds of channel.
const (
	Webhook = "webhook"
	Slack   = "slack"
	Email   = "email"
)

// Kinds are the kinds of channel.
var Kinds = []string{Webhook, Slack, Email}

// Target is a channel's opened target.
type Target struct {
	// URL of a webhook or a Slack incoming webhook.
	URL string
	// Recipients of email.
	Recipients []string
	// Secret signs a webhook's requests ("whsec_" and base64 of the key).
	Secret string
}

// NewSecret returns a new webhook signing secret.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (Go 1.24+)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// CheckURL says what is wrong with a webhook or Slack URL ("" when nothing): https only, or
// http too with private targets allowed (local use and tests), no credentials in it, a host
// that is an IP address or a valid host name (localhost too with private targets allowed) and
// a port, if any, from 1 to 65535. Where it points is checked when it is called (the SSRF
// guard).
func CheckURL(raw string, allowPrivate bool) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Hostname() == "":
		return "must be an absolute URL such as https://hooks.example.com/openvitals"
	case u.Scheme != "https" && !(u.Scheme == "http" && allowPrivate):
		return "must be an https URL"
	case u.User != nil:
		return "must not hold a user name or password"
	case u.Fragment != "":
		return "must not hold a fragment"
	case utf8.RuneCountInString(raw) > 2048:
		return "must be at most 2048 characters"
	}
	if host := u.Hostname(); net.ParseIP(host) == nil && !(allowPrivate && host == "localhost") {
		if _, err := hostname.ASCII(host); err != nil {
			return "the host " + err.Error()
		}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "must have a port from 1 to 65535"
		}
	}
	return ""
}

// MaskRecipients is email recipients as the API shows them and the table keeps them beside the
// sealed target: each address's first character and its domain (p***@example.com), separated
// by commas. It takes such a list masked or in the clear (as channels stored before recipients
// were masked hold it): a masked list masks to itself.
func MaskRecipients(list string) string {
	if strings.TrimSpace(list) == "" {
		return ""
	}
	addrs := strings.Split(list, ",")
	for i, a := range addrs {
		a = strings.TrimSpace(a)
		at := strings.LastIndex(a, "@")
		if at <= 0 {
			addrs[i] = "***"
			continue
		}
		first, _ := utf8.DecodeRuneInString(a)
		addrs[i] = string(first) + "***" + a[at:]
	}
	return strings.Join(addrs, ", ")
}

// Shown is a URL as the API shows it: scheme and host, the path masked (it often is the
// secret, as in Slack's incoming webhooks).
func Shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(hidden)"
	}
	shown := u.Scheme + "://" + u.Host + "/"
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		shown += "***"
	}
	return shown
}
