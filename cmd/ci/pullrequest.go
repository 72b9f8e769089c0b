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
		number, sha, err := pullRequestOf(getenv("GITHUB_EVENT_PATH"))
		switch {
		case err != nil:
			return nil, err
		case number == 0:
			return nil, errors.New("not a pull request event (GITHUB_EVENT_PATH has no pull_request)")
		case token == "":
			return nil, errors.New("no token: set GITHUB_TOKEN (the action passes the workflow's) or " + forgeToken)
		}
		return pullrequest.NewGitHub(hc, getenv("GITHUB_API_URL"), token, getenv("GITHUB_REPOSITORY"), number, sha)
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
		return pullrequest.NewGitLab(hc, getenv("CI_API_V4_URL"), token, job, getenv("CI_PROJECT_ID"), iid)
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

// pullRequestOf reads the pull request's number and head commit from a GitHub event file (0
// when the event is not a pull request's).
func pullRequestOf(path string) (int, string, error) {
	if path == "" {
		return 0, "", nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, "", fmt.Errorf("GitHub event: %w", err)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return 0, "", fmt.Errorf("GitHub event %s: %w", path, err)
	}
	if ev.PullRequest == nil {
		return 0, "", nil
	}
	return ev.PullRequest.Number, ev.PullRequest.Head.SHA, nil
}

// summarize reads each completed test's comparison with its base (the same page and device in
// the previous completed series, else the page's daily audit of the day before) and renders
// the summary.
func (c *client) summarize(ctx context.Context, s series, previous series, violations []string) pullrequest.Summary {
	before := map[string]string{}
	for _, t := range previous.Result.List {
		if t.Status == "completed" {
			before[t.Page.ID+"|"+t.Device] = t.ID
		}
	}
	out := pullrequest.Series{ID: s.ID, Status: s.Status, Description: s.Description, Website: c.cfg.website,
		Link: c.cfg.api + "/" + c.cfg.website + "/testseries/" + s.ID, Dashboard: c.cfg.api + "/app", Failures: violations}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	for _, t := range s.Result.List {
		pt := pullrequest.Test{ID: t.ID, PageID: t.Page.ID, Page: t.Page.Alias, URL: t.Page.URL, Device: t.Device,
			Status: t.Status, Error: t.Error}
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
			base := firstOf(before[t.Page.ID+"|"+t.Device], yesterday)
			q := url.Values{"device": {t.Device}, "base": {base}, "target": {t.ID}}
			var cmp pullrequest.Comparison
			// A base without an audit (a new page, no audit yesterday) leaves the test uncompared.
			if err := c.do(ctx, "GET", "/pages/"+url.PathEscape(t.Page.ID)+"/compare?"+q.Encode(), nil, &cmp); err == nil {
				pt.Comparison = &cmp
			}
		}
		out.Tests = append(out.Tests, pt)
	}
	return pullrequest.Render(out)
}
