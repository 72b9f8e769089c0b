package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// The pages list is the largest response (a thousand pages on two devices with 30 days each
// is some 17 MB of JSON), so it is written field by field into one buffer rather than built as
// maps and marshalled: the same JSON in a fraction of the time.

// appendPageList appends the pages list, {"result":{"list":[...],"cursor":...}} and a newline,
// to buf. Search analytics are shown only with search (the website has the integration). A
// long list is written in parts on every core, then joined: writing it was half the list's
// time.
func appendPageList(buf []byte, budgets []model.Budget, listings []metrics.Listing, search bool, cursor string) []byte {
	parts := make([][]byte, min(runtime.GOMAXPROCS(0), max(1, len(listings)/listingsPerPart)))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := listings[i*len(listings)/len(parts) : (i+1)*len(listings)/len(parts)]
			parts[i] = appendListings(listBuffer(), budgets, part, search)
		}()
	}
	wg.Wait()
	size := 64
	for _, part := range parts {
		size += len(part) + 1
	}
	buf = slices.Grow(buf, size)
	buf = append(buf, `{"result":{"list":[`...)
	for i, part := range parts {
		if i > 0 && len(part) > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, part...)
		releaseListBuffer(part)
	}
	buf = append(buf, ']')
	if cursor != "" {
		buf = append(buf, `,"cursor":`...)
		buf = appendString(buf, cursor)
	}
	return append(buf, "}}\n"...)
}

// listBuffers keeps the buffers pages lists are written into from call to call: the list of a
// thousand pages is 17 MB, and fresh memory costs more than writing into it (page faults,
// 3.4 ms a MB on this project's test machine; 17 MB took 57 ms).
var listBuffers sync.Pool

// listBuffer returns an empty buffer, with the capacity of one used before if there is one.
func listBuffer() []byte {
	if b, ok := listBuffers.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// releaseListBuffer gives back a buffer that nothing refers to any more.
func releaseListBuffer(b []byte) {
	if cap(b) > 0 {
		listBuffers.Put(&b)
	}
}

// listingsPerPart is the fewest listings worth a part of their own (see appendPageList).
const listingsPerPart = 200

// appendListings appends listings as list items separated by commas.
func appendListings(buf []byte, budgets []model.Budget, listings []metrics.Listing, search bool) []byte {
	size := 0
	for _, l := range listings { // about 300 bytes a day: one allocation
		size += 600 + 320*max(len(l.Lab.Days), len(l.UX.Days), len(l.Search.Days))
	}
	buf = slices.Grow(buf, size)
	for i := range listings {
		if i > 0 {
			buf = append(buf, ',')
		}
		l := &listings[i]
		if !search {
			l.Search = metrics.Section{} // analytics kept from an integration since removed are not shown
		}
		buf = appendPageWithMetrics(buf, budgets, l, search)
	}
	return buf
}

// shown are the fields a page with metrics shows, in the order written: the lab fields,
// opportunities, the ux_* fields, the search fields.
var shown = func() []string {
	out := append([]string{}, pageFields...)
	out = append(out, "opportunities")
	for _, name := range metrics.UXVitals {
		out = append(out, "ux_"+name)
	}
	return append(out, searchFields...)
}()

// shownKeys are the members' starts: a comma, the quoted name, a colon.
var shownKeys = func() []string {
	out := make([]string, len(shown))
	for i, name := range shown {
		out[i] = "," + string(appendString(nil, name)) + ":"
	}
	return out
}()

// Where each kind of field starts in shown.
var (
	shownOpportunities = len(pageFields)
	shownUX            = shownOpportunities + 1
	shownSearch        = shownUX + len(metrics.UXVitals)
)

// appendPageWithMetrics appends one page on one device: its newest lab result's method, one
// timeline item per day with any value, and latest (each source's fields averaged over its
// last 3 days, the lab's of that method).
func appendPageWithMetrics(buf []byte, budgets []model.Budget, l *metrics.Listing, search bool) []byte {
	buf = append(buf, `{"id":`...)
	buf = appendString(buf, l.Page.ID)
	buf = append(buf, `,"alias":`...)
	buf = appendString(buf, l.Page.Alias)
	buf = append(buf, `,"url":`...)
	buf = appendString(buf, l.Page.URL)
	buf = append(buf, `,"device":`...)
	buf = appendString(buf, l.Device)
	buf = append(buf, `,"method":`...)
	if m := l.Method(); m != "" {
		buf = appendString(buf, m)
	} else {
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"timeline":[`...)

	// Every field shown or budgeted is located once per listing, then read by day.
	names := append([]string{}, shown...)
	for _, b := range budgets {
		names = append(names, b.Metric)
	}
	index := make(map[string]int, len(names))
	fields := make([]metrics.Field, len(names))
	for i, n := range names {
		if _, ok := index[n]; !ok {
			index[n] = i
		}
		fields[i] = l.Field(n)
	}
	vals, has := make([]float64, len(names)), make([]bool, len(names))
	for i, d := range l.DayRows() {
		if i > 0 {
			buf = append(buf, ',')
		}
		for j, f := range fields {
			vals[j], has[j] = l.Value(d, f)
		}
		buf = append(buf, `{"date":"`...)
		buf = append(buf, model.DayToISO(d.Day)...) // digits and dashes
		buf = append(buf, '"')
		buf = appendMetrics(buf, budgets, l.Device, search, vals, has, index)
		buf = append(buf, '}')
	}
	buf = append(buf, `],"latest":`...)
	if l.Empty() {
		buf = append(buf, "null"...)
	} else {
		for j, f := range fields {
			vals[j], has[j] = l.LatestValue(f)
		}
		open := len(buf)
		buf = append(buf, '{')
		buf = appendMetrics(buf, budgets, l.Device, search, vals, has, index)
		buf = append(buf[:open+1], buf[open+2:]...) // the comma before the first member
		buf = append(buf, '}')
	}
	return append(buf, '}')
}

// appendMetrics appends the metric members of a timeline item or latest, each after a comma:
// the lab fields (null where not measured; opportunities too without a lab result), the
// budget counts over every value, the ux_* fields there are values for with their assessment,
// and with search the four search fields (null where not collected). vals and has hold the
// values of names (shown, then the budgets' metrics); index finds a name's place.
func appendMetrics(buf []byte, budgets []model.Budget, device string, search bool, vals []float64, has []bool, index map[string]int) []byte {
	byName := func(name string) (float64, bool) {
		i, ok := index[name]
		if !ok {
			return 0, false
		}
		return vals[i], has[i]
	}
	for i := range shownUX {
		buf = appendMember(buf, i, vals[i], has[i], true)
	}
	exceeded, atRisk := budget.Count(budgets, device, byName)
	buf = append(buf, `,"budgets_exceeded":`...)
	buf = strconv.AppendInt(buf, int64(exceeded), 10)
	buf = append(buf, `,"budgets_at_risk":`...)
	buf = strconv.AppendInt(buf, int64(atRisk), 10)
	for i := shownUX; i < shownSearch; i++ {
		buf = appendMember(buf, i, vals[i], has[i], false)
	}
	if passed, ok := metrics.Assess(byName); ok {
		buf = append(buf, `,"ux_passed":`...)
		if passed {
			buf = append(buf, '1')
		} else {
			buf = append(buf, '0')
		}
	}
	if search {
		for i := shownSearch; i < len(shown); i++ {
			buf = appendMember(buf, i, vals[i], has[i], true)
		}
	}
	return buf
}

// appendMember appends field i of shown after a comma: its value, null where not measured
// (orNull), or nothing.
func appendMember(buf []byte, i int, v float64, ok, orNull bool) []byte {
	if !ok && !orNull {
		return buf
	}
	buf = append(buf, shownKeys[i]...)
	if !ok {
		return append(buf, "null"...)
	}
	return appendNumber(buf, shown[i], v)
}

// appendNumber appends a value as number writes it.
func appendNumber(buf []byte, field string, v float64) []byte {
	if !decimal(field) {
		return strconv.AppendInt(buf, int64(v), 10)
	}
	if abs := math.Abs(v); v == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(buf, v, 'f', -1, 64) // encoding/json's format in this range
	}
	b, _ := json.Marshal(v)
	return append(buf, b...)
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it.
func appendString(buf []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(buf, b...)
}

// gzipAbove is the size from which a JSON body is sent gzipped to a client that accepts it: a
// Lambda function's response holds at most 6 MB, which a pages list passes at a few hundred
// pages, and JSON of numbers shrinks about tenfold.
const gzipAbove = 256 << 10

// writeLarge writes a 200 JSON body, gzipped when it is large and the client accepts gzip.
func writeLarge(w http.ResponseWriter, r *http.Request, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Add("Vary", "Accept-Encoding")
	if len(body) >= gzipAbove && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		var zb bytes.Buffer
		zb.Grow(len(body) / 8)
		zw, _ := gzip.NewWriterLevel(&zb, gzip.BestSpeed) // a valid level never fails
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		h.Set("Content-Encoding", "gzip")
		body = zb.Bytes()
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// acceptsGzip tells whether an Accept-Encoding header accepts gzip (and does not refuse it
// with q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		weight, err := strconv.ParseFloat(q, 64)
		return !found || err != nil || weight > 0
	}
	return false
}
