// Package export writes a website's data of one UTC day as Parquet files into the bucket, one
// file per dataset, where the Glue tables the CDK stack declares read them (partition
// projection on the day, so no crawler and no partition to add). The daily fan-out's export
// job (see package fanout) writes yesterday's files once a day per website; the API writes any
// day's on demand. Writing a day again replaces its files, so that both are safe to repeat.
package export

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// Prefix is where every export lives in the bucket; the Glue tables' locations are under it.
const Prefix = "exports/"

// The datasets, named as their Glue tables (database "openvitals").
const (
	LabRuns   = "lab_runs"
	UX        = "ux"
	Events    = "events"
	Incidents = "incidents"
	// Diagnostics holds the numbers of each lab audit's diagnostics (its median run's load).
	Diagnostics = "diagnostics"
	// RUMDaily holds real users' daily aggregates per segment and vital.
	RUMDaily = "rum_daily"
)

// Datasets are the exported datasets, in the order a day's export writes them.
var Datasets = []string{LabRuns, UX, Events, Incidents, Diagnostics, RUMDaily}

// Devices are the devices whose lab results and user-experience records are exported: all of
// them.
var Devices = model.Devices

// Key is the object key of a website's file of a dataset for a UTC day (yyyymmdd): Hive-style
// day=yyyy-mm-dd, the tables' one projected partition, then website=<id>. The tables'
// partitions are days only, so that "WHERE day >= ..." needs no website (Athena's projection
// of a website key would have to be listed or named in every query); Athena reads the
// website folders under a day's location, and each row carries its website.
func Key(dataset, website, day string) string {
	return Prefix + dataset + "/day=" + isoDay(day) + "/website=" + website + "/part.parquet"
}

// WebsiteSuffix is what a website's keys end with after the day: a purge or a retention pass
// lists a dataset's days and keeps those of one website.
func WebsiteSuffix(website string) string { return "/website=" + website + "/part.parquet" }

func isoDay(day string) string {
	if len(day) != 8 {
		return day
	}
	return day[:4] + "-" + day[4:6] + "-" + day[6:]
}

// LabRun is a row of lab_runs: one page's audit on one device for the day, with the median
// run's metrics and every run's values of the watched metrics.
type LabRun struct {
	Website           string               `parquet:"website"`
	Page              string               `parquet:"page"`
	URL               string               `parquet:"url"`
	Device            string               `parquet:"device"`
	Method            string               `parquet:"method"` // applied or simulated throttling
	Audited           time.Time            `parquet:"audited,timestamp(millisecond)"`
	Runs              int32                `parquet:"runs"`
	LighthouseVersion string               `parquet:"lighthouse_version"`
	Profile           string               `parquet:"profile,optional"`
	Metrics           map[string]float64   `parquet:"metrics"`
	Samples           map[string][]float64 `parquet:"samples"`
	Opportunities     []string             `parquet:"opportunities,list"`
	ReportKey         string               `parquet:"report_key"`
}

// UXRecord is a row of ux: one page's user-experience dataset record on one device, collected
// that day (the dataset's rolling 28 days).
type UXRecord struct {
	Website   string    `parquet:"website"`
	Page      string    `parquet:"page"`
	URL       string    `parquet:"url"`
	Device    string    `parquet:"device"`
	Collected time.Time `parquet:"collected,timestamp(millisecond)"`
	Vital     string    `parquet:"vital"`
	P75       float64   `parquet:"p75"`
	Good      float64   `parquet:"good"`
	NeedsImpr float64   `parquet:"needs_improvement"`
	Poor      float64   `parquet:"poor"`
}

// EventRow is a row of events: an event recorded that day.
type EventRow struct {
	Website    string    `parquet:"website"`
	ID         string    `parquet:"id"`
	Type       string    `parquet:"type"`
	Occurred   time.Time `parquet:"occurred,timestamp(millisecond)"`
	Page       string    `parquet:"page,optional"`
	Device     string    `parquet:"device,optional"`
	Budget     string    `parquet:"budget,optional"`
	Test       string    `parquet:"test,optional"`
	Run        string    `parquet:"run,optional"`
	Regression string    `parquet:"regression,optional"`
	Metric     string    `parquet:"metric,optional"`
	Incident   string    `parquet:"incident,optional"`
	Before     string    `parquet:"before"`
	After      string    `parquet:"after"`
	Summary    string    `parquet:"summary"`
	Error      string    `parquet:"error,optional"`
}

// IncidentRow is a row of incidents: a change of level whose first bad day is the day.
type IncidentRow struct {
	Website      string    `parquet:"website"`
	ID           string    `parquet:"id"`
	Incident     string    `parquet:"incident,optional"`
	Kind         string    `parquet:"kind"`
	Source       string    `parquet:"source"`
	Page         string    `parquet:"page,optional"`
	Device       string    `parquet:"device,optional"`
	Test         string    `parquet:"test,optional"`
	Metric       string    `parquet:"metric"`
	LastGood     string    `parquet:"last_good"`
	BeforeMedian float64   `parquet:"before_median"`
	AfterMedian  float64   `parquet:"after_median"`
	Delta        float64   `parquet:"delta"`
	Percent      float64   `parquet:"percent"`
	P            float64   `parquet:"p"`
	Status       string    `parquet:"status"`
	Recovered    string    `parquet:"recovered,optional"`
	Detected     time.Time `parquet:"detected,timestamp(millisecond)"`
	Causes       []string  `parquet:"causes,list"`
}

// Result is what a day's export of a website wrote: rows per dataset, and bytes in all.
type Result struct {
	Day   string         `json:"day"`
	Rows  map[string]int `json:"rows"`
	Bytes int            `json:"bytes"`
	Keys  []string       `json:"keys"`
}

// Exporter writes exports from the table, the reports' bucket and the real-user tables into
// the export bucket.
type Exporter struct {
	store   *store.Store
	reports *artifact.Store
	field   RealUsers
	objects *blobstore.Bucket
}

// RealUsers reads a website's real-user aggregates of a UTC day (yyyymmdd);
// *rum.SegmentReader is one.
type RealUsers interface {
	Daily(ctx context.Context, account, website, day string) ([]rum.DailyRow, bool, error)
}

// New returns an Exporter reading st, the diagnostics stored beside the reports in reports
// and real users' aggregates from field, and writing into objects.
func New(st *store.Store, reports artifact.Bucket, field RealUsers, objects *blobstore.Bucket) *Exporter {
	return &Exporter{store: st, reports: artifact.New(reports), field: field, objects: objects}
}

// Website writes the files of every dataset of a website's UTC day (yyyymmdd). Its reads are
// bounded by the website's pages: one BatchGetItem per 100 page-devices for each of lab_runs
// and ux, a query for its events and one for its incidents, a GET of each audit's diagnostics
// and the day's real-user tables (one pointer item, ranged GETs of one object). A dataset with no rows that day
// still gets its (empty) file, so that an export run again over a day whose data has gone
// leaves no stale rows.
func (e *Exporter) Website(ctx context.Context, site model.Website, day string) (Result, error) {
	if _, err := time.Parse(model.DayLayout, day); err != nil {
		return Result{}, fmt.Errorf("export day %q: %w", day, err)
	}
	pages, err := e.store.Pages(ctx, site)
	if err != nil {
		return Result{}, err
	}
	x := &dayExport{Exporter: e, site: site, day: day, pages: pages, urls: make(map[string]string, len(pages)),
		res: Result{Day: day, Rows: map[string]int{}}}
	for _, p := range pages {
		x.urls[p.ID] = p.URL
	}
	labs, err := x.lab(ctx)
	if err != nil {
		return x.res, err
	}
	diagnostics := func(ctx context.Context) error { return x.diagnostics(ctx, labs) }
	for _, write := range []func(context.Context) error{x.ux, x.events, x.incidents, diagnostics, x.realUsers} {
		if err := write(ctx); err != nil {
			return x.res, err
		}
	}
	return x.res, e.markExported(ctx, site, day)
}

// dayExport is a website's export of a day under way: what its datasets are read by, and
// what has been written.
type dayExport struct {
	*Exporter
	site  model.Website
	day   string
	pages []model.Page
	urls  map[string]string // the pages' URLs, by ID
	res   Result
}

// put writes rows as a dataset's file of the day.
func put[T any](ctx context.Context, x *dayExport, dataset string, rows []T) error {
	body, err := encode(rows)
	if err != nil {
		return fmt.Errorf("export %s of %s: %w", dataset, x.day, err)
	}
	k := Key(dataset, x.site.ID, x.day)
	if err := x.objects.Put(ctx, k, body, "application/vnd.apache.parquet"); err != nil {
		return err
	}
	x.res.Rows[dataset], x.res.Bytes, x.res.Keys = len(rows), x.res.Bytes+len(body), append(x.res.Keys, k)
	return nil
}

// lab writes lab_runs and returns the day's lab results, whose diagnostics are written later.
func (x *dayExport) lab(ctx context.Context) ([]model.LabResult, error) {
	labs, err := x.store.LabResultsOfDay(ctx, x.site, x.pages, Devices, x.day)
	if err != nil {
		return nil, err
	}
	return labs, put(ctx, x, LabRuns, LabRows(x.site.ID, x.urls, labs))
}

func (x *dayExport) ux(ctx context.Context) error {
	uxs, err := x.store.UXResultsOfDay(ctx, x.site, x.pages, Devices, x.day)
	if err != nil {
		return err
	}
	return put(ctx, x, UX, UXRows(x.site.ID, x.urls, uxs))
}

func (x *dayExport) events(ctx context.Context) error {
	evs, _, err := x.store.Events(ctx, x.site, model.EventFilter{From: x.day, To: x.day}, "", 0)
	if err != nil {
		return err
	}
	return put(ctx, x, Events, EventRows(x.site.ID, evs))
}

func (x *dayExport) incidents(ctx context.Context) error {
	regs, _, err := x.store.Regressions(ctx, x.site, model.RegressionFilter{From: x.day, To: x.day}, "", 0)
	if err != nil {
		return err
	}
	return put(ctx, x, Incidents, IncidentRows(x.site.ID, regs))
}

func (x *dayExport) diagnostics(ctx context.Context, labs []model.LabResult) error {
	diags, err := x.DiagnosticsRows(ctx, x.site.ID, x.urls, labs)
	if err != nil {
		return err
	}
	return put(ctx, x, Diagnostics, diags)
}

func (x *dayExport) realUsers(ctx context.Context) error {
	daily, _, err := x.field.Daily(ctx, x.site.Account, x.site.ID, x.day)
	if err != nil {
		return err
	}
	return put(ctx, x, RUMDaily, RUMDailyRows(x.site.ID, x.urls, daily))
}

// markExported records the day as the first exported when it is: where a retention pass or a
// purge starts computing the website's keys.
func (e *Exporter) markExported(ctx context.Context, site model.Website, day string) error {
	set, err := e.store.DataSettings(ctx, site)
	if err != nil {
		return err
	}
	if set.ExportsSince == "" || day < set.ExportsSince {
		return e.store.MarkExports(ctx, site, day, "")
	}
	return nil
}

func encode[T any](rows []T) ([]byte, error) {
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read decodes a file of rows of type T (LabRun, UXRecord, EventRow, IncidentRow,
// DiagnosticsRow, RUMDailyRow).
func Read[T any](body []byte) ([]T, error) {
	return parquet.Read[T](bytes.NewReader(body), int64(len(body)))
}

// LabRows are the lab_runs rows of a day's lab results, by page URL and device.
func LabRows(website string, urls map[string]string, rs []model.LabResult) []LabRun {
	rows := make([]LabRun, 0, len(rs))
	for _, r := range rs {
		ops := make([]string, len(r.Opportunities))
		for i, o := range r.Opportunities {
			ops[i] = o.ID
		}
		rows = append(rows, LabRun{Website: website, Page: r.Page, URL: urls[r.Page], Device: r.Device, Method: model.MethodOr(r.Method, ""),
			Audited: r.Audited.UTC(), Runs: int32(r.Runs), LighthouseVersion: r.LighthouseVersion, Profile: r.ProfileName,
			Metrics: r.Metrics, Samples: r.Samples, Opportunities: ops, ReportKey: r.ReportKey})
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].URL+"\x00"+rows[i].Device < rows[j].URL+"\x00"+rows[j].Device
	})
	return rows
}

// UXRows are the ux rows of a day's records: one per page, device and vital.
func UXRows(website string, urls map[string]string, rs []model.UXResult) []UXRecord {
	var rows []UXRecord
	for _, r := range rs {
		names := make([]string, 0, len(r.Vitals))
		for n := range r.Vitals {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v := r.Vitals[n]
			rows = append(rows, UXRecord{Website: website, Page: r.Page, URL: urls[r.Page], Device: r.Device,
				Collected: r.Collected.UTC(), Vital: n, P75: v.P75, Good: v.Good, NeedsImpr: v.NeedsImprovement, Poor: v.Poor})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return rows[i].URL+"\x00"+rows[i].Device < rows[j].URL+"\x00"+rows[j].Device
	})
	return rows
}

// EventRows are the events rows of a day's events, oldest first.
func EventRows(website string, evs []model.Event) []EventRow {
	rows := make([]EventRow, len(evs))
	for i, ev := range evs {
		rows[len(evs)-1-i] = EventRow{Website: website, ID: ev.ID, Type: ev.Type, Occurred: ev.Occurred.UTC(),
			Page: ev.Page, Device: ev.Device, Budget: ev.Budget, Test: ev.Test, Run: ev.Run, Regression: ev.Regression,
			Metric: ev.Metric, Incident: ev.Incident, Before: ev.Before, After: ev.After, Summary: ev.Summary, Error: ev.Error}
	}
	return rows
}

// IncidentRows are the incidents rows of the changes found with the day as first bad day.
func IncidentRows(website string, regs []model.Regression) []IncidentRow {
	rows := make([]IncidentRow, len(regs))
	for i, r := range regs {
		causes := make([]string, len(r.Cause))
		for j, c := range r.Cause {
			causes[j] = strings.TrimSpace(c.Kind + ": " + c.Title)
		}
		rows[i] = IncidentRow{Website: website, ID: r.ID, Incident: r.Incident, Kind: r.Kind, Source: r.Source,
			Page: r.Page, Device: r.Device, Test: r.Test, Metric: r.Metric, LastGood: r.LastGood,
			BeforeMedian: r.Before.Median, AfterMedian: r.After.Median, Delta: r.Delta, Percent: r.Percent, P: r.P,
			Status: r.Status, Recovered: r.Recovered, Detected: r.Detected.UTC(), Causes: causes}
	}
	return rows
}
