package export

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/rum"
)

// DiagnosticsRow is a row of diagnostics: the numbers of a page's audit diagnostics on a device
// that day (the median run's load, as GET .../diagnostics answers them). Times are
// milliseconds from navigation start, sizes bytes on the wire; a time is null when the load
// had none (no LCP, no load event).
type DiagnosticsRow struct {
	Website string    `parquet:"website"`
	Page    string    `parquet:"page"`
	URL     string    `parquet:"url"`
	Device  string    `parquet:"device"`
	Method  string    `parquet:"method"`
	Audited time.Time `parquet:"audited,timestamp(millisecond)"`
	FCP     *float64  `parquet:"fcp,optional"`
	Load    *float64  `parquet:"load,optional"`
	// SpeedIndex is the filmstrip's Speed Index (null for runs before the trace's frames).
	SpeedIndex *float64 `parquet:"speed_index,optional"`

	LCP             *float64 `parquet:"lcp,optional"`
	LCPSelector     string   `parquet:"lcp_selector,optional"`
	LCPImageURL     string   `parquet:"lcp_image_url,optional"`
	LCPTTFB         *float64 `parquet:"lcp_ttfb,optional"`
	LCPLoadDelay    *float64 `parquet:"lcp_load_delay,optional"`
	LCPLoadDuration *float64 `parquet:"lcp_load_duration,optional"`
	LCPRenderDelay  *float64 `parquet:"lcp_render_delay,optional"`

	RenderBlockingRequests int32 `parquet:"render_blocking_requests"`
	RenderBlockingBytes    int64 `parquet:"render_blocking_bytes"`

	LongTasks        int32              `parquet:"long_tasks"`
	LongTasksTotal   float64            `parquet:"long_tasks_ms"`
	LongestTask      float64            `parquet:"longest_task_ms"`
	LayoutShifts     int32              `parquet:"layout_shifts"`
	LargestShift     float64            `parquet:"largest_shift_score"`
	MainThreadByWork map[string]float64 `parquet:"main_thread_ms"`

	Requests       int32            `parquet:"requests"`
	Bytes          int64            `parquet:"bytes"`
	RequestsByType map[string]int32 `parquet:"requests_by_type"`
	BytesByType    map[string]int64 `parquet:"bytes_by_type"`
	FailedRequests int32            `parquet:"failed_requests"`

	ThirdPartyRequests   int32   `parquet:"third_party_requests"`
	ThirdPartyBytes      int64   `parquet:"third_party_bytes"`
	ThirdPartyMainThread float64 `parquet:"third_party_main_thread_ms"`

	DocumentDNS      float64 `parquet:"document_dns_ms"`
	DocumentConnect  float64 `parquet:"document_connect_ms"`
	DocumentTLS      float64 `parquet:"document_tls_ms"`
	DocumentWait     float64 `parquet:"document_wait_ms"`
	DocumentDownload float64 `parquet:"document_download_ms"`
}

// diagnosticsReads bounds the diagnostics read at once: a website of 1,000 pages has 2,000 a
// day, which the fan-out worker reads within its minute.
const diagnosticsReads = 16

// DiagnosticsRows reads the diagnostics of a day's lab results and makes their rows, in URL and
// device order; an audit that kept none (no report, or from before diagnostics were kept) has
// no row.
func (e *Exporter) DiagnosticsRows(ctx context.Context, website string, urls map[string]string, labs []model.LabResult) ([]DiagnosticsRow, error) {
	var kept []model.LabResult
	for _, r := range labs {
		if r.ReportKey != "" {
			kept = append(kept, r)
		}
	}
	// Each read makes its row at once: a website's diagnostics together would not fit in
	// memory, their rows do.
	read, err := parallel.Map(diagnosticsReads, len(kept), func(i int) (*DiagnosticsRow, error) {
		d, err := e.reports.Diagnostics(ctx, kept[i].ReportKey)
		if errors.Is(err, model.ErrNotFound) || err == nil && d == nil { // an audit that kept no diagnostics
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		row := DiagnosticsRowOf(website, urls[kept[i].Page], kept[i], d)
		return &row, nil
	})
	if err != nil {
		return nil, err
	}
	var rows []DiagnosticsRow
	for _, row := range read {
		if row != nil {
			rows = append(rows, *row)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].URL+"\x00"+rows[i].Device < rows[j].URL+"\x00"+rows[j].Device
	})
	return rows, nil
}

// DiagnosticsRowOf is the row of a lab result's diagnostics.
func DiagnosticsRowOf(website, url string, r model.LabResult, d *model.Diagnostics) DiagnosticsRow {
	row := DiagnosticsRow{Website: website, Page: r.Page, URL: url, Device: r.Device, Method: model.MethodOr(r.Method, ""),
		Audited: r.Audited.UTC(), FCP: d.Marks.FCP, Load: d.Marks.Load, SpeedIndex: d.SpeedIndex,
		MainThreadByWork: map[string]float64{}, RequestsByType: map[string]int32{}, BytesByType: map[string]int64{},
		DocumentDNS: d.Document.DNS, DocumentConnect: d.Document.Connect, DocumentTLS: d.Document.TLS,
		DocumentWait: d.Document.Wait, DocumentDownload: d.Document.Download}
	if l := d.LCP; l != nil {
		row.LCP, row.LCPSelector, row.LCPImageURL = &l.Time, l.Selector, l.ImageURL
		ttfb, render := l.Phases.TTFB, l.Phases.RenderDelay
		row.LCPTTFB, row.LCPLoadDelay, row.LCPLoadDuration, row.LCPRenderDelay = &ttfb, l.Phases.LoadDelay, l.Phases.LoadDuration, &render
	}
	for _, req := range d.Requests {
		row.Requests++
		row.Bytes += req.TransferSize
		row.RequestsByType[req.Type]++
		row.BytesByType[req.Type] += req.TransferSize
		if req.RenderBlocking {
			row.RenderBlockingRequests++
			row.RenderBlockingBytes += req.TransferSize
		}
		if req.ThirdParty {
			row.ThirdPartyRequests++
			row.ThirdPartyBytes += req.TransferSize
		}
		if req.Status < 0 || req.Status >= 400 {
			row.FailedRequests++
		}
	}
	var tasks model.TaskTotals
	for _, t := range d.LongTasks {
		tasks.Add(t)
	}
	row.LongTasks, row.LongTasksTotal, row.LongestTask = int32(tasks.Count), tasks.Total, tasks.Longest
	for _, s := range d.Shifts {
		row.LayoutShifts++
		row.LargestShift = max(row.LargestShift, s.Score)
	}
	for _, w := range d.MainThread {
		row.MainThreadByWork[w.Category] += w.Duration
	}
	for _, tp := range d.ThirdParties {
		row.ThirdPartyMainThread += tp.MainThreadTime
	}
	return row
}

// RUMDailyRow is a row of rum_daily: a day's real users of one vital for one combination of
// segments (rum.DailyRow): the website's rows per page group, device, country and navigation
// type (page null); a monitored page's rows per device and navigation type (country null) and
// per device and country (navigation null). Views are weighted by the sample rate.
type RUMDailyRow struct {
	Website    string  `parquet:"website"`
	Page       string  `parquet:"page,optional"`
	URL        string  `parquet:"url,optional"`
	Group      string  `parquet:"page_group,optional"`
	Device     string  `parquet:"device"`
	Country    string  `parquet:"country,optional"`
	Navigation string  `parquet:"navigation,optional"`
	Metric     string  `parquet:"metric"`
	Views      int64   `parquet:"views"`
	P75        float64 `parquet:"p75"`
	Good       int64   `parquet:"good"`
	NeedsImpr  int64   `parquet:"needs_improvement"`
	Poor       int64   `parquet:"poor"`
}

// RUMDailyRows are the rum_daily rows of a day's aggregates, a monitored page's with its URL.
func RUMDailyRows(website string, urls map[string]string, daily []rum.DailyRow) []RUMDailyRow {
	rows := make([]RUMDailyRow, 0, len(daily))
	for _, d := range daily {
		if d.Views == 0 {
			continue
		}
		rows = append(rows, RUMDailyRow{Website: website, Page: d.Page, URL: urls[d.Page], Group: d.Group, Device: d.Device,
			Country: d.Country, Navigation: d.Navigation, Metric: d.Metric, Views: int64(d.Views), P75: d.Value,
			Good: int64(d.Rated[0]), NeedsImpr: int64(d.Rated[1]), Poor: int64(d.Rated[2])})
	}
	return rows
}
