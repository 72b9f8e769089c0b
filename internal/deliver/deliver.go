// Package deliver sends events to channels: a webhook signed per the Standard Webhooks
// specification, a Slack incoming webhook (a Block Kit message), or email through Amazon SES
// v2. Every connection to a customer-given URL goes through the SSRF guard, is never
// redirected, and is bounded in time; response bodies are read up to a small cap and never
// shown to anyone. It is the notifier's engine, apart from the channel package so that the
// API's functions link neither SES nor Slack.
package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// Result is the outcome of one attempt.
type Result struct {
	// Status is the HTTP status answered (0 when none).
	Status  int
	Latency time.Duration
	// Err says why the attempt failed (nil when delivered), in words fit for the deliveries
	// list: no response body, no resolved address.
	Err error
	// Retry tells whether another attempt may succeed: network errors, timeouts, 408, 429
	// and 5xx; RetryAfter is the wait the target asked for.
	Retry      bool
	RetryAfter time.Duration
	// MessageID is the Message-ID header of an email sent ("<id@region.amazonses.com>"), which
	// a follow-up's In-Reply-To names; "" for the other kinds.
	MessageID string
}

// Timeout bounds one attempt.
const Timeout = 10 * time.Second

// bodyCap is how much of a response is read (and thrown away), so that the connection can be
// reused without reading an endless body.
const bodyCap = 4 << 10

// Sender delivers events.
type Sender struct {
	http *http.Client
	ses  *sesv2.Client
	// from is the address email is sent from (a verified SES identity).
	from string
	// base is the API's URL, for links.
	base string
	// dashboard is the dashboard's URL, for the links people open ("": none).
	dashboard string
}

// NewSender returns a Sender connecting through guard, sending email with ses from from, with
// the API's links under base and, when dashboard is not "", links to its views (see
// event.Document.WithView): what emails and Slack messages link to.
func NewSender(guard browser.Guard, ses *sesv2.Client, from, base, dashboard string) *Sender {
	t := guard.Transport()
	t.MaxIdleConns = 32
	t.TLSHandshakeTimeout, t.ResponseHeaderTimeout = Timeout, Timeout
	return &Sender{
		http: &http.Client{Transport: t, Timeout: Timeout,
			// A redirect could lead anywhere the URL's check did not look: never followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		ses: ses, from: from, base: base, dashboard: dashboard,
	}
}

// Send delivers one event to a channel of kind with target t. A follow-up (an incident's
// verdict) names in inReplyTo the Message-ID of the message it follows in that channel, when
// one was sent: an email then replies to it (In-Reply-To, References, "Re:" subject).
func (s *Sender) Send(ctx context.Context, kind string, t channel.Target, w model.Website, ev model.Event, now time.Time, inReplyTo string) Result {
	doc := event.NewDocument(w, ev, s.base)
	if s.dashboard != "" {
		doc = doc.WithView(s.dashboard)
	}
	switch kind {
	case channel.Webhook:
		body, err := json.Marshal(doc)
		if err != nil {
			return Result{Err: err}
		}
		hook, err := standardwebhooks.NewWebhook(t.Secret)
		if err != nil {
			return Result{Err: fmt.Errorf("signing secret: %w", err)}
		}
		sig, err := hook.Sign(ev.ID, now, body)
		if err != nil {
			return Result{Err: fmt.Errorf("sign: %w", err)}
		}
		h := http.Header{}
		h.Set("webhook-id", ev.ID)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("webhook-signature", sig)
		return s.post(ctx, t.URL, body, h)
	case channel.Slack:
		body, err := json.Marshal(SlackMessage(w, doc))
		if err != nil {
			return Result{Err: err}
		}
		return s.post(ctx, t.URL, body, http.Header{})
	case channel.Email:
		return s.email(ctx, t.Recipients, w, doc, inReplyTo)
	}
	return Result{Err: fmt.Errorf("unknown channel kind %q", kind)}
}

// post sends a JSON body and judges the answer.
func (s *Sender) post(ctx context.Context, target string, body []byte, h http.Header) Result {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Result{Err: errors.New("invalid URL")}
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "openvitals-notifier")
	resp, err := s.http.Do(req)
	if err != nil {
		return Result{Latency: time.Since(start), Err: errors.New(networkReason(err)), Retry: !errors.Is(err, browser.ErrForbiddenTarget)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyCap))
	resp.Body.Close()
	r := Result{Status: resp.StatusCode, Latency: time.Since(start)}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return r
	}
	r.Err = fmt.Errorf("answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	r.Retry = resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	r.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	return r
}

// networkReason says what went wrong with a connection without addresses or internals.
func networkReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, browser.ErrForbiddenTarget):
		return browser.Reason(err)
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out after " + Timeout.String()
	case strings.Contains(err.Error(), "no such host"):
		return "the host name does not resolve"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "tls"), strings.Contains(err.Error(), "x509"):
		return "TLS handshake failed"
	}
	return "network error"
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sesMessageID is the Message-ID header SES gives a message it sent with id: the ID at
// email.amazonses.com in us-east-1, at the region's amazonses.com domain elsewhere.
func sesMessageID(id, region string) string {
	domain := "email.amazonses.com"
	if region != "" && region != "us-east-1" {
		domain = region + ".amazonses.com"
	}
	return "<" + id + "@" + domain + ">"
}

// email sends the event to recipients through SES.
func (s *Sender) email(ctx context.Context, to []string, w model.Website, doc event.Document, inReplyTo string) Result {
	if s.ses == nil || s.from == "" {
		return Result{Err: errors.New("email is not configured (OPENVITALS_EMAIL_FROM)")}
	}
	start := time.Now()
	subject, text, html := EmailBodies(w, doc)
	msg := &sestypes.Message{
		Subject: &sestypes.Content{Data: aws.String(subject), Charset: aws.String("UTF-8")},
		Body: &sestypes.Body{
			Text: &sestypes.Content{Data: aws.String(text), Charset: aws.String("UTF-8")},
			Html: &sestypes.Content{Data: aws.String(html), Charset: aws.String("UTF-8")},
		},
	}
	if inReplyTo != "" {
		msg.Headers = []sestypes.MessageHeader{{Name: aws.String("In-Reply-To"), Value: aws.String(inReplyTo)},
			{Name: aws.String("References"), Value: aws.String(inReplyTo)}}
	}
	out, err := s.ses.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.from),
		Destination:      &sestypes.Destination{ToAddresses: to},
		Content:          &sestypes.EmailContent{Simple: msg},
	})
	r := Result{Status: http.StatusOK, Latency: time.Since(start)}
	if err == nil {
		if out.MessageId != nil {
			r.MessageID = sesMessageID(*out.MessageId, s.ses.Options().Region)
		}
		return r
	}
	r.Status, r.Err, r.Retry = 0, errors.New("SES refused the message"), true
	var api smithy.APIError
	if errors.As(err, &api) {
		r.Err = errors.New("SES: " + api.ErrorCode())
		switch api.ErrorCode() {
		case "MessageRejected", "MailFromDomainNotVerifiedException", "AccountSuspendedException", "BadRequestException", "NotFoundException":
			r.Retry = false
		}
	}
	return r
}
