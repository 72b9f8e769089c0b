// Command ci runs a test series from any CI job: it starts the series, waits for its tests,
// prints a table of their scores and metrics beside the website's previous completed series,
// and exits 1 when a threshold the job set is not met (2 when the series could not be run).
//
//	go run ./cmd/ci -api https://api.example.com -website yc5vfn7677dc -description "$COMMIT" \
//	    -min-performance 80 -max-budgets-exceeded 0 -max-failed 0
//
// The API key is read from OPENVITALS_KEY (never a flag: flags show in process lists and CI
// logs); -api and -website default to OPENVITALS_API and OPENVITALS_WEBSITE. It needs nothing
// but Go: no curl, no jq. On a pull request (GitHub Actions) or in a merge-request pipeline
// (GitLab CI) it also posts the summary there with the job's own token (see -comment and
// internal/pullrequest).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// config is what a run was asked to do.
type config struct {
	api, key, website      string
	pages                  string
	description, initiator string
	minScores              map[string]float64 // by score field; negative: not checked
	maxExceeded, maxFailed int                // negative: not checked
	timeout, poll          time.Duration
	summary                string // a file the table is appended to (GitHub's step summary)
	comment                string // where the pull-request summary goes: auto, github, gitlab, off
	base                   string // the series to compare with ("": the base commit's, else the previous completed one)
	// commit is the commit the series tests; baseCommit the pull request's base commit, whose
	// series is the base when there is one.
	commit, baseCommit string
}

// scoreFields are the scores a job can set a minimum of, with their flag names.
var scoreFields = []struct{ field, flag, title string }{
	{"performance_score", "min-performance", "perf"},
	{"accessibility_score", "min-accessibility", "a11y"},
	{"best_practices_score", "min-best-practices", "bp"},
	{"seo_score", "min-seo", "seo"},
}

// metricFields are the lab metrics the table shows, with their units.
var metricFields = []struct{ field, title, unit string }{
	{"lcp", "lcp", "ms"}, {"fcp", "fcp", "ms"}, {"tbt", "tbt", "ms"}, {"cls", "cls", ""}, {"ttfb", "ttfb", "ms"},
}

// run runs the tool and returns its exit status: 0 all thresholds met, 1 a threshold not met,
// 2 the series could not be started or followed.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "openvitals-ci:", err)
		return 2
	}
	c := &client{cfg: cfg, http: &http.Client{Timeout: 60 * time.Second}}
	forge, err := forgeFromEnv(cfg.comment, getenv, c.http)
	if err != nil {
		fmt.Fprintln(stderr, "openvitals-ci: pull request:", err)
		return 2
	}
	previous, err := c.previousCompleted(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "openvitals-ci: previous series:", err)
		return 2
	}
	series, err := c.start(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "openvitals-ci: start the series:", err)
		return 2
	}
	fmt.Fprintf(stdout, "test series %s started: %d tests (%s)\n", series.ID, series.Count, cfg.api+"/"+cfg.website+"/testseries/"+series.ID)
	series, err = c.wait(ctx, series, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "openvitals-ci:", err)
		return 2
	}
	var table bytes.Buffer
	writeTable(&table, series, previous)
	violations := check(cfg, series)
	fmt.Fprintf(&table, "\n")
	if len(violations) == 0 {
		fmt.Fprintf(&table, "every threshold met\n")
	}
	for _, v := range violations {
		fmt.Fprintf(&table, "FAILED: %s\n", v)
	}
	_, _ = stdout.Write(table.Bytes())
	if cfg.summary != "" {
		if err := appendSummary(cfg.summary, series, table.String()); err != nil {
			fmt.Fprintln(stderr, "openvitals-ci: step summary:", err)
		}
	}
	if forge != nil {
		// The summary is a report: a forge that refuses it does not change the job's outcome.
		if err := forge.Post(ctx, cfg.website, c.summarize(ctx, series, previous, violations)); err != nil {
			fmt.Fprintln(stderr, "openvitals-ci: pull request:", err)
		} else {
			fmt.Fprintln(stdout, "summary posted on the pull request")
		}
	}
	if len(violations) > 0 {
		return 1
	}
	return 0
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	cfg := config{minScores: map[string]float64{}}
	fs := flag.NewFlagSet("openvitals-ci", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.api, "api", getenv("OPENVITALS_API"), "the API's base URL (OPENVITALS_API)")
	fs.StringVar(&cfg.website, "website", getenv("OPENVITALS_WEBSITE"), "the website's ID (OPENVITALS_WEBSITE)")
	fs.StringVar(&cfg.pages, "pages", "", "pages to test, as page_id or page_id:device, separated by commas (default: every page on both devices)")
	fs.StringVar(&cfg.description, "description", "", "the deploy's version or commit message (an annotation on the timelines)")
	fs.StringVar(&cfg.initiator, "initiator", "CI", "who starts the series")
	mins := make([]*float64, len(scoreFields))
	for i, s := range scoreFields {
		mins[i] = fs.Float64(s.flag, -1, "fail below this "+strings.ReplaceAll(s.field, "_", " ")+" (0 to 100) on any test")
	}
	fs.IntVar(&cfg.maxExceeded, "max-budgets-exceeded", -1, "fail when the tests exceed more budgets than this in all")
	fs.IntVar(&cfg.maxFailed, "max-failed", 0, "fail when more tests than this failed (-1: never)")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "give up waiting after this long")
	fs.DurationVar(&cfg.poll, "poll", 5*time.Second, "how often to ask how the series is going")
	fs.StringVar(&cfg.summary, "summary", getenv("GITHUB_STEP_SUMMARY"), "append the table to this file (GITHUB_STEP_SUMMARY)")
	fs.StringVar(&cfg.base, "base", "", "the test series to compare with (default: the series of -base-commit if there is one, else on a pull request each page's last good day, else the website's previous completed series)")
	commit, baseCommit := commitsFromEnv(getenv)
	fs.StringVar(&cfg.commit, "commit", commit, "the commit tested, recorded with the series (default: the pull request's head, GITHUB_SHA or CI_COMMIT_SHA)")
	fs.StringVar(&cfg.baseCommit, "base-commit", baseCommit, "the pull request's base commit, whose series is the base (default: the pull request event's base, or CI_MERGE_REQUEST_DIFF_BASE_SHA)")
	fs.StringVar(&cfg.comment, "comment", "auto", "post the summary on the pull request: auto (GitHub Actions on a pull request, GitLab CI in a merge-request pipeline), github, gitlab or off")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	for i, s := range scoreFields {
		cfg.minScores[s.field] = *mins[i]
	}
	cfg.key = getenv("OPENVITALS_KEY")
	cfg.api = strings.TrimRight(cfg.api, "/")
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.api == "" || cfg.website == "":
		return cfg, errors.New("-api and -website (or OPENVITALS_API and OPENVITALS_WEBSITE) are required")
	case cfg.key == "":
		return cfg, errors.New("OPENVITALS_KEY must hold an API key of the website's account")
	}
	return cfg, nil
}

// series and test are the API's test series and tests, as far as the tool reads them.
type series struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Description string `json:"description"`
	Commit      string `json:"commit"`
	Count       int    `json:"count"`
	FailedTests int    `json:"failed_tests"`
	Result      struct {
		List []test `json:"list"`
	} `json:"result"`
}

type test struct {
	ID     string `json:"id"`
	Device string `json:"device"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Page   struct {
		ID    string `json:"id"`
		URL   string `json:"url"`
		Alias string `json:"alias"`
	} `json:"page"`
	BudgetsExceeded *int `json:"budgets_exceeded"`
	BudgetsAtRisk   *int `json:"budgets_at_risk"`
	// Method is how the test's audit was measured (applied or simulated throttling).
	Method string `json:"method"`
	// Values holds the scores and metrics by field; null ones are absent.
	Values map[string]float64 `json:"-"`
}

func (t *test) UnmarshalJSON(b []byte) error {
	type plain test
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	t.Values = map[string]float64{}
	for k, v := range all {
		if f, ok := v.(float64); ok {
			t.Values[k] = f
		}
	}
	return nil
}

func (s series) ended() bool { return s.Status == "completed" || s.Status == "failed" }

type client struct {
	cfg  config
	http *http.Client
}

// do sends a request to the API and decodes its JSON answer into out.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.api+"/"+c.cfg.website+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 32<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var p struct {
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(raw, &p)
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, p.Detail)
	}
	return json.Unmarshal(raw, out)
}

// seriesSearched bounds how many of the website's newest series the base is looked for in.
const seriesSearched = 200

// previousCompleted is the series to compare with, with its tests: the one asked for with
// -base; else, with a base commit, the newest ended series of that commit (zero without one:
// each page's last good day is then the base, see baseOf); else the website's newest completed
// series (zero without one).
func (c *client) previousCompleted(ctx context.Context) (series, error) {
	if c.cfg.base != "" {
		var s series
		return s, c.do(ctx, "GET", "/testseries/"+url.PathEscape(c.cfg.base), nil, &s)
	}
	var list struct {
		Result struct {
			List []series `json:"list"`
		} `json:"result"`
	}
	if err := c.do(ctx, "GET", "/testseries?limit="+strconv.Itoa(seriesSearched), nil, &list); err != nil {
		return series{}, err
	}
	for _, s := range list.Result.List {
		match := s.Status == "completed"
		if c.cfg.baseCommit != "" {
			match = s.ended() && sameCommit(s.Commit, c.cfg.baseCommit)
		}
		if match {
			var full series
			return full, c.do(ctx, "GET", "/testseries/"+s.ID, nil, &full)
		}
	}
	return series{}, nil
}

// sameCommit tells whether two hashes name the same commit, either abbreviated.
func sameCommit(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == "" || b == "" {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

func (c *client) start(ctx context.Context) (series, error) {
	type target struct {
		PageID string `json:"page_id"`
		Device string `json:"device,omitempty"`
	}
	body := struct {
		Pages       []target `json:"pages,omitempty"`
		Description string   `json:"description,omitempty"`
		Initiator   string   `json:"initiator,omitempty"`
		Commit      string   `json:"commit,omitempty"`
	}{Description: c.cfg.description, Initiator: c.cfg.initiator, Commit: c.cfg.commit}
	for _, p := range strings.Split(c.cfg.pages, ",") {
		if p = strings.TrimSpace(p); p != "" {
			id, device, _ := strings.Cut(p, ":")
			body.Pages = append(body.Pages, target{PageID: id, Device: device})
		}
	}
	var s series
	return s, c.do(ctx, "POST", "/testseries", body, &s)
}

// wait follows a series until it ended, telling each change of its progress.
func (c *client) wait(ctx context.Context, s series, stdout io.Writer) (series, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	last := ""
	for {
		done := 0
		for _, t := range s.Result.List {
			if t.Status == "completed" || t.Status == "failed" {
				done++
			}
		}
		if progress := fmt.Sprintf("%s: %d of %d tests done", s.Status, done, s.Count); progress != last {
			fmt.Fprintln(stdout, progress)
			last = progress
		}
		if s.ended() {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("series %s not ended after %s (%s)", s.ID, c.cfg.timeout, s.Status)
		case <-time.After(c.cfg.poll):
		}
		var next series
		if err := c.do(ctx, "GET", "/testseries/"+s.ID, nil, &next); err != nil {
			if ctx.Err() != nil {
				continue // the timeout's turn
			}
			return s, err
		}
		s = next
	}
}

// writeTable prints one row per test: its scores and metrics, each with its change since the
// same page and device in the previous completed series.
func writeTable(w io.Writer, s series, previous series) {
	before := map[string]test{}
	for _, t := range previous.Result.List {
		if t.Status == "completed" {
			before[t.Page.ID+"|"+t.Device] = t
		}
	}
	fmt.Fprintf(w, "\ntest series %s: %s, %d tests, %d failed", s.ID, s.Status, s.Count, s.FailedTests)
	if previous.ID != "" {
		fmt.Fprintf(w, " (changes since %s)", previous.ID)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"page", "device", "status"}
	for _, f := range scoreFields {
		head = append(head, f.title)
	}
	for _, m := range metricFields {
		head = append(head, m.title)
	}
	head = append(head, "budgets exceeded", "at risk")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var errs []string
	for _, t := range s.Result.List {
		name := t.Page.Alias
		if name != t.Page.URL {
			name += " (" + t.Page.URL + ")"
		}
		row := []string{name, t.Device, t.Status}
		prev, hasPrev := before[t.Page.ID+"|"+t.Device]
		cell := func(field, unit string) string {
			v, ok := t.Values[field]
			if !ok {
				return "-"
			}
			out := format(field, v) + unit
			if p, ok := prev.Values[field]; ok && hasPrev {
				out += " (" + delta(field, v-p) + ")"
			}
			return out
		}
		for _, f := range scoreFields {
			row = append(row, cell(f.field, ""))
		}
		for _, m := range metricFields {
			row = append(row, cell(m.field, ""))
		}
		count := func(n *int) string {
			if n == nil {
				return "-"
			}
			return fmt.Sprint(*n)
		}
		row = append(row, count(t.BudgetsExceeded), count(t.BudgetsAtRisk))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
		if t.Status == "failed" {
			errs = append(errs, fmt.Sprintf("%s on %s failed: %s", name, t.Device, t.Error))
		}
	}
	_ = tw.Flush()
	for _, e := range errs {
		fmt.Fprintln(w, e)
	}
}

func format(field string, v float64) string {
	if field == "cls" {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func delta(field string, d float64) string {
	if math.Abs(d) < 1e-9 {
		return "="
	}
	s := format(field, d)
	if d > 0 {
		s = "+" + s
	}
	return s
}

// check lists the thresholds a series does not meet.
func check(cfg config, s series) []string {
	var out []string
	if cfg.maxFailed >= 0 && s.FailedTests > cfg.maxFailed {
		out = append(out, fmt.Sprintf("%d tests failed, at most %d allowed", s.FailedTests, cfg.maxFailed))
	}
	exceeded := 0
	for _, t := range s.Result.List {
		if t.BudgetsExceeded != nil {
			exceeded += *t.BudgetsExceeded
		}
		if t.Status != "completed" {
			continue
		}
		for _, f := range scoreFields {
			min := cfg.minScores[f.field]
			if v, ok := t.Values[f.field]; ok && min >= 0 && v < min {
				out = append(out, fmt.Sprintf("%s (%s) on %s: %s %.0f, below the minimum %.0f", t.Page.Alias, t.Page.URL, t.Device, f.field, v, min))
			}
		}
	}
	if cfg.maxExceeded >= 0 && exceeded > cfg.maxExceeded {
		out = append(out, fmt.Sprintf("%d budgets exceeded, at most %d allowed", exceeded, cfg.maxExceeded))
	}
	return out
}

// appendSummary adds the table to a CI's job summary (GitHub renders it as Markdown).
func appendSummary(path string, s series, table string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "### openvitals test series %s: %s\n\n```\n%s```\n", s.ID, s.Status, strings.TrimLeft(table, "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
