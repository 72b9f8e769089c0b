package local

// The demo (make demo, OPENVITALS_DEMO=1) is the local service with a website already in it:
// Fernwood Tools, a small shop the service serves itself on OPENVITALS_DEMO_ADDR. Its pages are
// audited for real; then come what only time makes, written as the workers write it (weeks of
// history), real users' page views (real Chromium visits of the shop, replayed over the weeks
// through the page-view path of collect: demousers.go) and the user-experience records they
// make, budgets, two multistep tests, a test series from CI, the events all of it raises, and a
// regression with its cause: version 2.4, deployed three days ago, made the hero image
// heavier and renamed the checkout button, which the Checkout test now misses. The dashboard's
// browser tests (internal/web/dashboardtest) start their service the same way.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

const (
	// DemoHistoryDays is how many days before today the demo's results and records go back.
	DemoHistoryDays = 28
	// DemoDeployedDaysAgo is when version 2.4 was deployed: the regression's first bad day.
	DemoDeployedDaysAgo = 3
	// demoDoneFile, in the data directory, holds the ID of the demo website once it is
	// complete, so that a later start neither seeds again nor keeps a half-seeded website.
	demoDoneFile = "demo-website"
)

// demo finds or seeds the demo website of an account.
type demo struct {
	api     demoAPI
	admin   adminKey // the key api calls with, for the closing lines
	account string
	store   *store.Store
	objects *blobstore.Bucket
	beacons demoBeacons
	visits  beaconRecorder // the beacons of the real visits, as collect took them
	shop    *demoshop.Shop
	host    string // the shop's host:port: the website's domain
	log     *slog.Logger
}

// demoBeacons queues page views as collect does (*rum.Collector).
type demoBeacons interface {
	Add(ctx context.Context, account, website string, views ...rum.View) error
}

// ready makes sure the account holds the complete demo website (seeding it unless an earlier
// start did, as recorded in dataDir) and says, last, how to open it. Seeding takes four to
// five minutes (BENCHMARKS.md, the demo's seeding time).
func (d *demo) ready(ctx context.Context, dataDir string) error {
	site, found, err := d.website(ctx)
	if err != nil {
		return err
	}
	done := found && DemoWebsite(dataDir) == site.ID
	switch {
	case done:
		d.log.Info("demo website found: not seeding it again", "website", site.ID)
	case found:
		d.log.Warn("the demo website of an earlier start is incomplete: deleting it and seeding it again", "website", site.ID)
		if err := d.api.call(ctx, "DELETE", "/"+site.ID, "", http.StatusNoContent, nil); err != nil {
			return err
		}
	}
	if !done {
		d.log.Info("seeding the demo website: real visits and audits of its pages, four to five minutes; the dashboard's address and a key follow")
		start := time.Now()
		if site, err = d.seed(ctx); err != nil {
			return fmt.Errorf("seed the demo website: %w", err)
		}
		if dataDir != "" {
			if err := os.WriteFile(filepath.Join(dataDir, demoDoneFile), []byte(site.ID+"\n"), 0o600); err != nil {
				return err
			}
		}
		d.log.Info("demo website seeded", "website", site.ID, "seconds", math.Round(time.Since(start).Seconds()))
	}
	fmt.Printf("\nThe demo website %q is ready; the shop it monitors is served at http://%s/\n", site.DisplayName, d.host)
	announce(os.Stdout, d.api.base, d.admin)
	return nil
}

// DemoWebsite is the ID of the complete demo website recorded in dataDir, "" when there is
// none: a test that started the demo waits for it.
func DemoWebsite(dataDir string) string {
	if dataDir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dataDir, demoDoneFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// website finds the demo website: the account's website on the shop's domain.
func (d *demo) website(ctx context.Context) (model.Website, bool, error) {
	sites, err := d.store.Websites(ctx, d.account)
	if err != nil {
		return model.Website{}, false, err
	}
	for _, s := range sites {
		if s.Domain == d.host {
			return s, true, nil
		}
	}
	return model.Website{}, false, nil
}

// seed makes the demo website: through the API as a person and CI would, and in the table and
// the bucket what only time makes, as the workers write it.
func (d *demo) seed(ctx context.Context) (model.Website, error) {
	s := &demoSeeding{c: &demoCalls{api: d.api, ctx: ctx}}
	for _, step := range []func(context.Context, *demoSeeding) error{
		d.createWebsite, d.measureOldVersion, d.measureNewVersion, d.addFieldData, d.addPast, d.waitForSeeded,
	} {
		if err := step(ctx, s); err != nil {
			return s.site, err
		}
	}
	return s.site, nil
}

// demoSeeding is what seed's steps make and pass on, in the order they make it.
type demoSeeding struct {
	c    *demoCalls
	site model.Website
	// path is the website's path under the account ("/" + its ID).
	path string
	// browse and checkout are the IDs of the multistep tests.
	browse, checkout string
	// visits are the real users' visits of both versions.
	visits []demoVisit
	pages  []model.Page
	home   model.Page
	// before and after are the home page's results on version 2.3 and 2.4, by device; today
	// every page's on 2.4, by page ID and device.
	before, after, today map[string]model.LabResult
	// now is when the real users' weeks were replayed, replayed how many views were.
	now      time.Time
	replayed int
	// series is the ID of the test series started from CI.
	series string
}

// createWebsite creates the website with its pages, budgets and multistep tests. A new
// website's method is applied throttling, so that the pictures of each load (its filmstrip
// and waterfall) show what its numbers measure.
func (d *demo) createWebsite(ctx context.Context, s *demoSeeding) error {
	c := s.c
	var w struct{ ID string }
	c.do("POST", "/account/websites", `{"domain":"`+d.host+`","displayName":"Fernwood Tools"}`, http.StatusCreated, &w)
	if c.err != nil {
		return c.err
	}
	site, err := d.store.Website(ctx, d.account, w.ID)
	if err != nil {
		return err
	}
	s.site, s.path = site, "/"+site.ID
	W := s.path
	c.do("POST", W+"/settings/pages", `[{"url":"/","alias":"Home"},{"url":"/products","alias":"Products"}]`, http.StatusOK, nil)
	c.do("POST", W+"/budgets", `{"metric":"lcp","operator":"lt","value":2500,"device":"mobile"}`, http.StatusCreated, nil)
	c.do("POST", W+"/budgets", `{"metric":"performance_score","operator":"gt","value":99,"device":"desktop"}`, http.StatusCreated, nil)
	c.do("POST", W+"/budgets", `{"metric":"cls","operator":"lt","value":0.25,"device":"desktop"}`, http.StatusCreated, nil)
	var browse, checkout struct{ ID string }
	c.do("POST", W+"/multistep", `{"alias":"Browse","device":"desktop","steps":[{"type":"navigate","target":"/"},{"type":"scroll"}]}`, http.StatusCreated, &browse)
	c.do("POST", W+"/multistep", `{"alias":"Checkout","device":"mobile","steps":[{"type":"navigate","target":"/"},{"type":"click","target":"#checkout"}]}`, http.StatusCreated, &checkout)
	s.browse, s.checkout = browse.ID, checkout.ID
	return c.err
}

// measureOldVersion has real users visit version 2.3 (the shop's pages carry the website's
// snippet), then audits the home page on both devices, as it was before the deploy.
func (d *demo) measureOldVersion(ctx context.Context, s *demoSeeding) error {
	d.shop.SetSnippet(d.api.base + "/rum/" + s.site.ID + ".js")
	visits, err := d.visitShop(ctx, "2.3")
	if err != nil {
		return err
	}
	s.visits = visits
	if s.pages, err = d.store.Pages(ctx, s.site); err != nil {
		return err
	}
	for _, p := range s.pages {
		if p.URL == "/" {
			s.home = p
		}
	}
	since := time.Now()
	s.c.do("POST", s.path+"/audits", `{"pages":["`+s.home.ID+`"]}`, http.StatusAccepted, nil)
	if s.c.err != nil {
		return s.c.err
	}
	s.before = map[string]model.LabResult{}
	for _, device := range metrics.Devices {
		r, err := d.waitForAudit(ctx, s.site, s.home, device, since)
		if err != nil {
			return err
		}
		if r.ReportKey, err = d.keepReport(ctx, s.site, s.home, r, "2.3"); err != nil {
			return err
		}
		s.before[device] = r
	}
	return nil
}

// measureNewVersion deploys version 2.4, has its real users visit it, then audits every page
// on both devices and runs both tests.
func (d *demo) measureNewVersion(ctx context.Context, s *demoSeeding) error {
	d.shop.Deploy()
	after24, err := d.visitShop(ctx, "2.4")
	if err != nil {
		return err
	}
	s.visits = append(s.visits, after24...)
	since := time.Now()
	s.c.do("POST", s.path+"/audits", "", http.StatusAccepted, nil)
	s.c.do("POST", s.path+"/multistep/"+s.browse+"/runs", "", http.StatusCreated, nil)
	s.c.do("POST", s.path+"/multistep/"+s.checkout+"/runs", "", http.StatusCreated, nil)
	if s.c.err != nil {
		return s.c.err
	}
	s.today = map[string]model.LabResult{}
	for _, p := range s.pages {
		for _, device := range metrics.Devices {
			if s.today[p.ID+device], err = d.waitForAudit(ctx, s.site, p, device, since); err != nil {
				return err
			}
		}
	}
	s.after = map[string]model.LabResult{}
	for _, device := range metrics.Devices {
		r := s.today[s.home.ID+device]
		if r.ReportKey, err = d.keepReport(ctx, s.site, s.home, r, "2.4"); err != nil {
			return err
		}
		s.after[device] = r
	}
	return nil
}

// addFieldData replays the weeks of real users from the visits, at the pace the lab measured,
// and adds the user-experience records of the same weeks.
func (d *demo) addFieldData(ctx context.Context, s *demoSeeding) error {
	s.now = time.Now().UTC()
	views, err := replayVisits(s.visits, func(path, device, version string) map[string]float64 {
		for _, p := range s.pages {
			if p.URL != path {
				continue
			}
			if p.ID == s.home.ID && version == "2.3" {
				return s.before[device].Metrics
			}
			return s.today[p.ID+device].Metrics
		}
		return nil
	}, s.now)
	if err != nil {
		return err
	}
	if s.replayed, err = d.sendReplay(ctx, s.site, views, s.now); err != nil {
		return err
	}
	return d.addUX(ctx, s.site, s.pages, views, s.now)
}

// addPast adds the weeks before, each day shaped on a real result (the home page on 2.3's
// until the deploy and on 2.4's since), and the deploy's annotation; then audits the home page
// again, so that the audit worker's regression detector finds the deploy's regressions and
// their cause on both devices, and starts a test series as cmd/ci does.
func (d *demo) addPast(ctx context.Context, s *demoSeeding) error {
	err := d.addHistory(ctx, s.site, s.pages, func(p model.Page, device string, daysAgo int) model.LabResult {
		if p.ID != s.home.ID {
			return s.today[p.ID+device]
		}
		if daysAgo > DemoDeployedDaysAgo {
			return s.before[device]
		}
		return s.after[device]
	})
	if err != nil {
		return err
	}
	c, W := s.c, s.path
	deployed := time.Now().UTC().AddDate(0, 0, -DemoDeployedDaysAgo).Truncate(24 * time.Hour).Add(9 * time.Hour)
	c.do("POST", W+"/annotations", fmt.Sprintf(`{"text":"Deploy v2.4: new hero image, checkout button renamed","at":%q}`, deployed.Format(time.RFC3339)), http.StatusCreated, nil)
	c.do("POST", W+"/audits", `{"pages":["`+s.home.ID+`"]}`, http.StatusAccepted, nil)
	var series struct{ SeriesID string }
	c.do("POST", W+"/testseries", `{"pages":[{"page_id":"`+s.home.ID+`","device":"desktop"}],"description":"v2.4.1 from CI","initiator":"GitHub"}`, http.StatusCreated, &series)
	s.series = series.SeriesID
	return c.err
}

// waitForSeeded waits for what the steps before started: the deploy's regressions, the test
// series, the multistep runs and the real users' page views.
func (d *demo) waitForSeeded(ctx context.Context, s *demoSeeding) error {
	c, W := s.c, s.path
	waits := []struct {
		what string
		done func() bool
	}{
		{"the regressions of the deploy on both devices", func() bool {
			var regs struct {
				Result struct{ List []struct{ Device string } }
			}
			c.do("GET", W+"/regressions?kind=regression&page="+s.home.ID, "", http.StatusOK, &regs)
			devices := map[string]bool{}
			for _, g := range regs.Result.List {
				devices[g.Device] = true
			}
			return len(devices) == len(metrics.Devices)
		}},
		{"the test series", func() bool {
			var st struct{ Status string }
			c.do("GET", W+"/testseries/"+s.series, "", http.StatusOK, &st)
			return st.Status == "completed" || st.Status == "failed"
		}},
		{"the multistep runs", func() bool {
			ended := 0
			for _, id := range []string{s.browse, s.checkout} {
				var runs struct {
					Result struct{ List []struct{ Status string } }
				}
				c.do("GET", W+"/multistep/"+id+"/runs", "", http.StatusOK, &runs)
				if l := runs.Result.List; len(l) > 0 && (l[0].Status == "completed" || l[0].Status == "failed") {
					ended++
				}
			}
			return ended == 2
		}},
		{"the real users' page views", func() bool {
			var views struct{ Result struct{ Count int } }
			from, to := s.now.AddDate(0, 0, 1-DemoHistoryDays).Format("20060102"), time.Now().UTC().Format("20060102")
			c.do("GET", W+"/field-testing/pages?timing=lcp&date="+from+"-"+to, "", http.StatusOK, &views)
			return views.Result.Count >= s.replayed+len(s.visits)
		}},
	}
	for _, wt := range waits {
		if err := demoWait(ctx, wt.what, 5*time.Minute, func() (bool, error) { ok := wt.done(); return ok, c.err }); err != nil {
			return err
		}
	}
	return nil
}

// waitForAudit waits for the result of page on device audited after since, and returns it.
func (d *demo) waitForAudit(ctx context.Context, site model.Website, page model.Page, device string, since time.Time) (model.LabResult, error) {
	var got model.LabResult
	err := demoWait(ctx, "the audit of "+page.URL+" on "+device, 5*time.Minute, func() (bool, error) {
		rs, err := d.store.LabResults(ctx, site, page.ID, device, model.Day(since), model.Day(time.Now()))
		for _, r := range rs {
			if !r.Audited.Before(since) {
				got = r
				return true, nil
			}
		}
		return false, err
	})
	return got, err
}

// keepReport copies a result's reports (JSON and HTML) and its diagnostics (JSON, images,
// HAR) to keys of their own under the page's prefix, named by the shop's version, which the
// next audit of the day does not replace, and returns the JSON report's key.
func (d *demo) keepReport(ctx context.Context, site model.Website, page model.Page, r model.LabResult, version string) (string, error) {
	key := artifact.PageReportsPrefix(site.Account, site.ID, page.ID) + "demo-v" + version + "-" + r.Device + ".json.gz"
	if err := artifact.New(d.objects).Copy(ctx, r.ReportKey, key); err != nil {
		return "", err
	}
	return key, nil
}

// addHistory stores, for each page and device, a result for each of the DemoHistoryDays days
// before today, shaped on the result shape gives for that day: its values moved by a few
// percent, day by day, as real runs move, and the three runs' values of each watched metric (as
// an audit of three runs keeps them for the regression detector). Then the pages' summaries are made
// again, as the audit worker does (the user-experience records, which the summaries read,
// come first: addUX).
func (d *demo) addHistory(ctx context.Context, site model.Website, pages []model.Page, shape func(p model.Page, device string, daysAgo int) model.LabResult) error {
	now := time.Now().UTC()
	summaries := metrics.NewReader(d.store, time.Now)
	rng := rand.New(rand.NewPCG(7, 3))
	for _, p := range pages {
		for _, device := range metrics.Devices {
			for i := 1; i <= DemoHistoryDays; i++ {
				base := shape(p, device, i)
				r := base
				day := now.AddDate(0, 0, -i)
				r.Day, r.Audited, r.Runs = day.Format(model.DayLayout), day, 3
				r.Metrics, r.Samples = map[string]float64{}, map[string][]float64{}
				for k, v := range base.Metrics {
					spread, moves := demoLabSpread[k]
					if !moves && !slices.Contains(demoLabTimes, k) {
						// Bytes, counts, layout shifts and the scores of audits that time nothing
						// do not move from run to run.
						r.Metrics[k] = v
						continue
					}
					if !moves {
						spread = 0.05
					}
					runs := make([]float64, 3)
					for j := range runs {
						runs[j] = demoRun(rng, v, spread, strings.HasSuffix(k, "_score"))
					}
					slices.Sort(runs)
					r.Metrics[k] = runs[1]
					if slices.Contains(regression.SourceMetrics[regression.SourceLab], k) {
						r.Samples[k] = runs
					}
				}
				if err := d.store.PutLabResult(ctx, site, p, r); err != nil {
					return err
				}
			}
		}
		if _, err := summaries.Refresh(ctx, site, p); err != nil {
			return err
		}
	}
	return nil
}

// demoLabSpread is how much a run's metric moves from run to run (its coefficient of
// variation) by applied throttling, as BenchmarkRunSpread and BenchmarkAuditMethod measured
// it (BENCHMARKS.md); other times (demoLabTimes) move 5 %.
var demoLabSpread = map[string]float64{
	"lcp": 0.03, "fcp": 0.07, "speed_index": 0.08, "ttfb": 0.06, "tbt": 0.5, "performance_score": 0.03,
}

// demoLabTimes are the metrics measured in milliseconds, which move from run to run.
var demoLabTimes = func() []string {
	var times []string
	for _, n := range metrics.Names {
		if n.Unit == "ms" {
			times = append(times, n.Field)
		}
	}
	return times
}()

// demoRun is one run's value of a metric whose median run measured v: mostly close to it, and
// one run in ten far off on the slow side, as real runs are; scores are whole and at most 100.
func demoRun(rng *rand.Rand, v, spread float64, score bool) float64 {
	f := math.Exp(spread * rng.NormFloat64())
	if rng.IntN(10) == 0 {
		f *= 1 + 2*spread
	}
	if score {
		return math.Min(100, math.Round(v/f))
	}
	return v * f
}

// demoWait polls done once a second until it holds, fails, or limit passes (a bound for a
// stuck worker, which the error names).
func demoWait(ctx context.Context, what string, limit time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := done()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v", what, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// demoAPI calls the service's API as a client does, with a key of the demo's account.
type demoAPI struct {
	base string // the API's base URL
	key  string
}

// call makes one request and decodes its answer into out (unless nil); any status but want
// is an error.
func (a demoAPI) call(ctx context.Context, method, path, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// demoCalls makes a series of calls that stops at the first error, kept in err.
type demoCalls struct {
	api demoAPI
	ctx context.Context
	err error
}

func (c *demoCalls) do(method, path, body string, want int, out any) {
	if c.err == nil {
		c.err = c.api.call(c.ctx, method, path, body, want, out)
	}
}
