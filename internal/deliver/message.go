package deliver

import (
	"fmt"
	"html"
	"strings"

	"github.com/slack-go/slack"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// title names an event's type in words.
func title(t string) string {
	switch t {
	case event.BudgetStatusChanged:
		return "Budget status changed"
	case event.MultistepStateChanged:
		return "Multistep test state changed"
	case event.MultistepRunFailed:
		return "Multistep run failed"
	case event.AuditFailing:
		return "Daily audit failing"
	case event.AuditRecovered:
		return "Daily audit recovered"
	case event.UXAssessmentChanged:
		return "User-experience assessment changed"
	case event.RegressionDetected:
		return "Regression detected"
	case event.RegressionRecovered:
		return "Regression recovered"
	case event.IncidentVerdict:
		return "Field verdict"
	case event.ChannelFailing:
		return "Channel failing"
	case event.ChannelRecovered:
		return "Channel delivering again"
	case event.ChannelTest:
		return "Test notification"
	case event.DailyDigest:
		return "Daily digest"
	}
	return t
}

// SlackMessage is an event as a Slack Block Kit message: a header, the summary, before and
// after, the error of a failure, and the links.
func SlackMessage(w model.Website, d event.Document) *slack.WebhookMessage {
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, title(d.Type)+": "+w.Domain, false, false)),
		slack.NewSectionBlock(md(slackEscape(d.Summary)), []*slack.TextBlockObject{
			md("*Before*\n" + slackEscape(orNone(d.Before))), md("*After*\n" + slackEscape(orNone(d.After))),
		}, nil),
	}
	if d.Error != "" {
		blocks = append(blocks, slack.NewSectionBlock(md("*Error*\n"+slackEscape(d.Error)), nil, nil))
	}
	if len(d.Events) > 0 {
		var lines []string
		for _, e := range d.Events {
			lines = append(lines, "• "+e.OccurredAt.Format("15:04")+" <"+subjectLink(e)+"|"+slackEscape(e.Summary)+">")
		}
		// A section's text holds at most 3,000 characters.
		text := strings.Join(lines, "\n")
		if len(text) > 2900 {
			text = text[:2900] + "…"
		}
		blocks = append(blocks, slack.NewSectionBlock(md(text), nil, nil))
	}
	links := []string{"<" + subjectLink(d) + "|Details>"}
	if screenshotLink(d) != "" {
		links = append(links, "<"+screenshotLink(d)+"|Screenshot>")
	}
	links = append(links, "<"+eventsLink(d)+"|Events>")
	blocks = append(blocks, slack.NewContextBlock("", md(strings.Join(links, " · ")+" · "+d.OccurredAt.Format("2006-01-02 15:04 UTC")+" · "+d.ID)))
	return &slack.WebhookMessage{Text: title(d.Type) + ": " + d.Summary, Blocks: &slack.Blocks{BlockSet: blocks}}
}

// slackEscape escapes the three characters Slack's mrkdwn gives meaning to.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// EmailBodies are an event as an email: its subject, plain text and HTML.
func EmailBodies(w model.Website, d event.Document) (subject, text, htmlBody string) {
	subject = "[openvitals] " + title(d.Type) + ": " + w.Domain
	if d.Type == event.IncidentVerdict {
		// A reply to the incident's detection, in its thread: the subject it answers.
		subject = "Re: [openvitals] " + title(event.RegressionDetected) + ": " + w.Domain
	}
	var t strings.Builder
	fmt.Fprintf(&t, "%s\n\n%s\n\nBefore: %s\nAfter:  %s\n", title(d.Type), d.Summary, orNone(d.Before), orNone(d.After))
	if d.Error != "" {
		fmt.Fprintf(&t, "Error:  %s\n", d.Error)
	}
	for _, e := range d.Events {
		fmt.Fprintf(&t, "- %s %s\n  %s\n", e.OccurredAt.Format("2006-01-02 15:04"), e.Summary, subjectLink(e))
	}
	fmt.Fprintf(&t, "\nDetails: %s\n", subjectLink(d))
	if screenshotLink(d) != "" {
		fmt.Fprintf(&t, "Screenshot: %s\n", screenshotLink(d))
	}
	fmt.Fprintf(&t, "Events: %s\n\n%s · %s\n", eventsLink(d), d.OccurredAt.Format("2006-01-02 15:04 UTC"), d.ID)

	e := html.EscapeString
	var h strings.Builder
	fmt.Fprintf(&h, `<!doctype html><html><body style="font-family:sans-serif"><h2>%s</h2><p>%s</p>`, e(title(d.Type)), e(d.Summary))
	fmt.Fprintf(&h, `<table><tr><th align="left">Before</th><td>%s</td></tr><tr><th align="left">After</th><td>%s</td></tr>`, e(orNone(d.Before)), e(orNone(d.After)))
	if d.Error != "" {
		fmt.Fprintf(&h, `<tr><th align="left">Error</th><td>%s</td></tr>`, e(d.Error))
	}
	h.WriteString(`</table>`)
	if len(d.Events) > 0 {
		h.WriteString(`<ul>`)
		for _, ev := range d.Events {
			fmt.Fprintf(&h, `<li>%s <a href="%s">%s</a></li>`, ev.OccurredAt.Format("2006-01-02 15:04"), e(subjectLink(ev)), e(ev.Summary))
		}
		h.WriteString(`</ul>`)
	}
	fmt.Fprintf(&h, `<p><a href="%s">Details</a>`, e(subjectLink(d)))
	if screenshotLink(d) != "" {
		fmt.Fprintf(&h, ` · <a href="%s">Screenshot</a>`, e(screenshotLink(d)))
	}
	fmt.Fprintf(&h, ` · <a href="%s">Events</a></p><p style="color:#666">%s · %s</p></body></html>`, e(eventsLink(d)), d.OccurredAt.Format("2006-01-02 15:04 UTC"), e(d.ID))
	return subject, t.String(), h.String()
}

// subjectLink is where a person reads more of an event: its dashboard view when the sender
// knows the dashboard (an API address answers 401 to a browser without the key), else the
// API's resource.
func subjectLink(d event.Document) string {
	if d.View != nil {
		return d.View.Subject
	}
	return d.Links.Subject
}

// eventsLink is the website's events: the dashboard's view, else the API's list.
func eventsLink(d event.Document) string {
	if d.View != nil {
		return d.View.Events
	}
	return d.Links.Events
}

// screenshotLink is a failed run's screenshot: none beside a dashboard view, whose test view
// shows it (the API's address needs a key).
func screenshotLink(d event.Document) string {
	if d.View != nil {
		return ""
	}
	return d.Links.Screenshot
}
