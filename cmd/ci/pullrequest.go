package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/openvitals/openvitals/internal/pullrequest"
)

// poster writes a series' summary on the pull request or merge request the job runs for.
type poster interface {
	Post(ctx context.Context, website string, s pullrequest.Summary) error
}

// forgeToken is a token of the job's configuration, preferred to the forge's own job token
// (GitLab's CI_JOB_TOKEN cannot write notes unless the project allows it).
const forgeToken = "OPENVITALS_FORGE_TOKEN"

// forgeFromEnv picks where the summary goes from -comment and the CI's environment: GitHub
// Actions on a pull_request event (GITHUB_EVENT_PATH names it; the token is GITHUB_TOKEN),
// GitLab CI in a merge-request pipeline (CI_MERGE_REQUEST_IID; the token CI_JOB_TOKEN), or
// nowhere (nil) for a push build or -comment off.
func forgeFromEnv(mode string, getenv func(string) string, hc *http.Client) (poster, error) {
	github := func() (poster, error) {
		token := firstOf(getenv(forgeToken), getenv("GITHUB_TOKEN"))
		pr, err := pullRequestOf(getenv("GITHUB_EVENT_PATH"))
		switch {
		case err != nil:
			return nil, err
		case pr.number == 0:
			return nil, errors.New("not a pull request event (GITHUB_EVENT_PATH has no pull_request)")
		case token == "":
			return nil, errors.New("no token: set GITHUB_TOKEN (the action passes the workflow's) or " + forgeToken)
		}
		return pullrequest.NewGitHub(hc, getenv("GITHUB_API_URL"), token, getenv("GITHUB_REPOSITORY"), pr.number, pr.head)
	}
	gitlab := func() (poster, error) {
		iid, err := strconv.ParseInt(getenv("CI_MERGE_REQUEST_IID"), 10, 64)
		if err != nil {
			return nil, errors.New("not a merge-request pipeline (CI_MERGE_REQUEST_IID is not set)")
		}
		token, job := getenv(forgeToken), false
		if token == "" {
			token, job = getenv("CI_JOB_TOKEN"), true
		}
		if token == "" {
			return nil, errors.New("no token: set " + forgeToken + " or run in GitLab CI (CI_JOB_TOKEN)")
		}
		// The status is set on the commit the pipeline runs for, in that pipeline.
		pipeline, _ := strconv.ParseInt(getenv("CI_PIPELINE_ID"), 10, 64)
		return pullrequest.NewGitLab(hc, getenv("CI_API_V4_URL"), token, job, getenv("CI_PROJECT_ID"), iid, getenv("CI_COMMIT_SHA"), pipeline)
	}
	switch mode {
	case "off":
		return nil, nil
	case "github":
		return github()
	case "gitlab":
		return gitlab()
	case "auto":
		if getenv("GITHUB_ACTIONS") == "true" {
			if p, err := github(); err == nil {
				return p, nil
			}
			return nil, nil // a push or a scheduled run: nothing to comment on
		}
		if getenv("GITLAB_CI") == "true" && getenv("CI_MERGE_REQUEST_IID") != "" {
			return gitlab()
		}
		return nil, nil
	}
	return nil, fmt.Errorf("-comment %q: want auto, github, gitlab or off", mode)
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// pullRequestEvent is what a GitHub pull request event says of it: its number (0: the event
// is not a pull request's), head and base commits.
type pullRequestEvent struct {
	number     int
	head, base string
}

// pullRequestOf reads the pull request of a GitHub event file.
func pullRequestOf(path string) (pullRequestEvent, error) {
	if path == "" {
		return pullRequestEvent{}, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return pullRequestEvent{}, fmt.Errorf("GitHub event: %w", err)
	}
	type ref struct {
		SHA string `json:"sha"`
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   ref `json:"head"`
			Base   ref `json:"base"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return pullRequestEvent{}, fmt.Errorf("GitHub event %s: %w", path, err)
	}
	if ev.PullRequest == nil {
		return pullRequestEvent{}, nil
	}
	return pullRequestEvent{number: ev.PullRequest.Number, head: ev.PullRequest.Head.SHA, base: ev.PullRequest.Base.SHA}, nil
}

// commitsFromEnv reads the commit a CI job tests and, on a pull or merge request, its base
// commit: GitHub's pull request event (its head and base; GITHUB_SHA on other events), GitLab's
// CI_COMMIT_SHA and CI_MERGE_REQUEST_DIFF_BASE_SHA (the merge base).
func commitsFromEnv(getenv func(string) string) (commit, base string) {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		if pr, err := pullRequestOf(getenv("GITHUB_EVENT_PATH")); err == nil && pr.number != 0 {
			return pr.head, pr.base
		}
		return getenv("GITHUB_SHA"), ""
	case getenv("GITLAB_CI") == "true":
		return getenv("CI_COMMIT_SHA"), getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA")
	}
	return "", ""
}

// summarize reads each completed test's comparison with its base (the same page and device in
// the series previousCompleted found, else the page's last good day) and renders the summary.
func (c *client) summarize(ctx context.Context, s series, previous series, violations []string) pullrequest.Summary {
	before := map[string]string{}
	for _, t := range previous.Result.List {
		if t.Status == "completed" {
			before[t.Page.ID+"|"+t.Device] = t.ID
		}
	}
	out := pullrequest.Series{ID: s.ID, Status: s.Status, Description: s.Description, Website: c.cfg.website,
		Link: c.cfg.api + "/" + c.cfg.website + "/testseries/" + s.ID, Dashboard: c.cfg.api + "/app", Failures: violations}
	for _, t := range s.Result.List {
		pt := pullrequest.Test{ID: t.ID, PageID: t.Page.ID, Page: t.Page.Alias, URL: t.Page.URL, Device: t.Device,
			Method: t.Method, Status: t.Status, Error: t.Error}
		if t.Page.Alias != t.Page.URL {
			pt.Page += " (" + t.Page.URL + ")"
		}
		if t.BudgetsExceeded != nil {
			pt.BudgetsExceeded = *t.BudgetsExceeded
		}
		if t.BudgetsAtRisk != nil {
			pt.BudgetsAtRisk = *t.BudgetsAtRisk
		}
		if t.Status == "completed" {
			base := before[t.Page.ID+"|"+t.Device]
			if base == "" {
				base = c.lastGoodDay(ctx, t.Page.ID, t.Device)
			}
			q := url.Values{"device": {t.Device}, "base": {base}, "target": {t.ID}}
			var cmp pullrequest.Comparison
			// No base (a new page, no daily audit lately) leaves the test uncompared.
			if base != "" {
				if err := c.do(ctx, "GET", "/pages/"+url.PathEscape(t.Page.ID)+"/compare?"+q.Encode(), nil, &cmp); err == nil {
					pt.Comparison = &cmp
				}
			}
		}
		out.Tests = append(out.Tests, pt)
	}
	return pullrequest.Render(out)
}

// lastGoodDays is how far back a page's last good day is looked for.
const lastGoodDays = 30

// lastGoodDay is a page's last good day on a device (yyyy-MM-dd), "" without one: the last
// good day of its open lab regressions (the earliest, when several are open), else its newest
// daily audit of the last 30 days.
func (c *client) lastGoodDay(ctx context.Context, page, device string) string {
	var regs struct {
		Result struct {
			List []struct {
				LastGoodDay string `json:"lastGoodDay"`
			} `json:"list"`
		} `json:"result"`
	}
	q := url.Values{"status": {"open"}, "kind": {"regression"}, "source": {"lab"}, "page": {page}, "device": {device}}
	if err := c.do(ctx, "GET", "/regressions?"+q.Encode(), nil, &regs); err == nil {
		day := ""
		for _, r := range regs.Result.List {
			if r.LastGoodDay != "" && (day == "" || r.LastGoodDay < day) {
				day = r.LastGoodDay
			}
		}
		if day != "" {
			return day
		}
	}
	now := time.Now().UTC()
	var timeline struct {
		Result []struct {
			Date string `json:"date"`
		} `json:"result"`
	}
	q = url.Values{"device": {device}, "date": {now.AddDate(0, 0, -lastGoodDays).Format("20060102") + "-" + now.Format("20060102")}}
	if err := c.do(ctx, "GET", "/pages/"+url.PathEscape(page)+"/timeline?"+q.Encode(), nil, &timeline); err != nil {
		return ""
	}
	day := ""
	for _, r := range timeline.Result {
		day = max(day, r.Date)
	}
	return day
}
