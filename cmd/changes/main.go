// Command changes shows what openvitals' regression detection reports on a series, day by day,
// as the service would: the changes of level it finds (the first bad day, the day it would
// report it, the direction, the level before and after with their spread) and the recoveries.
// It feeds the series to the function the service's watcher calls (regression.Evaluate, through
// regression.Replay), one day at a time, with what earlier days recorded.
//
//	go run ./cmd/changes [-kind lab|crux|rum|generic] [-metric lcp] [-least 10%,100] [-json] < series
//
// The series, on standard input, is CSV (an optional header; rows of date,value[,count], where
// count is the day's page views for -kind rum, or rows of a value alone, one a day from
// 2000-01-01; for -kind lab, one row per run, a date's rows its runs) or one JSON array of
// objects {"date": "2026-03-01", "value": 2400, "count": 812} ("values": [...] for a day's runs).
// Dates are yyyy-mm-dd or yyyymmdd.
//
// -kind says where the series comes from: lab (every Lighthouse run of a daily audit), crux
// (the user-experience dataset's p75, a 28-day rolling window), rum (real users' daily p75 with
// its views), generic (any series of one value a day). -metric names a watched metric, whose
// direction and least change it takes (lcp, cls, ...); -least overrides the least change: a
// percentage of the level before, an amount in the metric's unit, or both ("10%,100"). Without
// either, a generic series has no least change and higher is worse. -json prints one JSON
// object per line.
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/regression"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "changes:", err)
		os.Exit(2)
	}
}

// kinds maps -kind to the service's series source.
var kinds = map[string]string{"lab": regression.SourceLab, "crux": regression.SourceUX, "rum": regression.SourceRUM, "generic": "generic"}

func run(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("changes", flag.ContinueOnError)
	kind := fs.String("kind", "generic", "lab, crux, rum or generic")
	metric := fs.String("metric", "", "a watched metric (lcp, fcp, cls, inp, ttfb, tbt, ...): its direction and least change")
	least := fs.String("least", "", `the least change: "10%", "100" (in the metric's unit) or "10%,100"`)
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	source, ok := kinds[*kind]
	if !ok {
		return fmt.Errorf("-kind %q: one of lab, crux, rum, generic", *kind)
	}
	higherIsWorse, t, unit := true, regression.Threshold{}, ""
	if *metric != "" {
		m, ok := regression.Lookup(*metric)
		if !ok {
			return fmt.Errorf("-metric %q: one of %s", *metric, strings.Join(regression.MetricNames(), ", "))
		}
		higherIsWorse, t, unit = m.HigherIsWorse, m.Default, m.Unit
	}
	if *least != "" {
		var err error
		if t, err = parseLeast(*least); err != nil {
			return err
		}
	}
	series, err := readSeries(in)
	if err != nil {
		return err
	}
	if len(series) == 0 {
		return errors.New("no values on standard input")
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	for _, r := range regression.Replay(source, series, t, higherIsWorse) {
		if *asJSON {
			b, err := json.Marshal(asReport(r))
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintln(w, describe(r, unit))
	}
	return nil
}

// level is a level in the output.
type level struct {
	Median float64 `json:"median"`
	Spread float64 `json:"spread"`
}

// report is one line of -json: a change or a recovery.
type report struct {
	Type        string  `json:"type"` // regression, improvement or recovery
	FirstBadDay string  `json:"firstBadDay,omitempty"`
	LastGoodDay string  `json:"lastGoodDay,omitempty"`
	Recovered   string  `json:"recoveredDay,omitempty"` // a recovery's first day back
	ReportedDay string  `json:"reportedDay"`
	Direction   string  `json:"direction"` // up or down
	Before      level   `json:"before"`
	After       level   `json:"after"`
	Delta       float64 `json:"delta"`
	Percent     float64 `json:"percent"`
	P           float64 `json:"p,omitempty"`
}

func asReport(r regression.Report) report {
	ch, typ := r.Change, "regression"
	if ch == nil {
		ch, typ = r.Of, "recovery"
	} else if !ch.Worse {
		typ = "improvement"
	}
	out := report{Type: typ, ReportedDay: iso(r.Reported),
		Before: level(ch.Before), After: level(ch.After), Delta: ch.Delta, Percent: ch.Percent, P: ch.P}
	up := ch.Delta > 0
	if r.Change != nil {
		out.FirstBadDay, out.LastGoodDay = iso(ch.FirstBad), iso(ch.LastGood)
	} else {
		// A recovery goes back from the regression's level to its level before.
		out.Recovered, up = iso(r.Recovered), !up
		out.Before, out.After, out.Delta, out.Percent, out.P = level(ch.After), level(ch.Before), -ch.Delta, 0, 0
		if ch.After.Median != 0 {
			out.Percent = 100 * out.Delta / abs(ch.After.Median)
		}
	}
	out.Direction = "down"
	if up {
		out.Direction = "up"
	}
	return out
}

func describe(r regression.Report, unit string) string {
	rep := asReport(r)
	num := func(l level) string {
		return fmt.Sprintf("%s%s (spread %s)", round(l.Median), suffix(unit), round(l.Spread))
	}
	if rep.Type == "recovery" {
		return fmt.Sprintf("recovery   from %s, reported %s (%s): %s %s → %s", rep.Recovered, rep.ReportedDay, later(rep.Recovered, rep.ReportedDay),
			rep.Direction, num(rep.Before), num(rep.After))
	}
	return fmt.Sprintf("%-11sfrom %s, reported %s (%s): %s %s → %s, %+.1f %%", rep.Type, rep.FirstBadDay, rep.ReportedDay, later(rep.FirstBadDay, rep.ReportedDay),
		rep.Direction, num(rep.Before), num(rep.After), rep.Percent)
}

// round shows v to a sensible precision: whole above 100, two decimals above 1, else three
// significant digits.
func round(v float64) string {
	switch a := abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func suffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// later says how many days after first the report came.
func later(first, reported string) string {
	a, err1 := time.Parse(time.DateOnly, first)
	b, err2 := time.Parse(time.DateOnly, reported)
	if err1 != nil || err2 != nil {
		return "?"
	}
	days := int(b.Sub(a).Hours() / 24)
	if days == 1 {
		return "1 day later"
	}
	return fmt.Sprintf("%d days later", days)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// iso turns yyyymmdd into yyyy-mm-dd.
func iso(day string) string {
	if len(day) != 8 {
		return day
	}
	return day[:4] + "-" + day[4:6] + "-" + day[6:]
}

// parseLeast reads -least: "10%", "100" or "10%,100".
func parseLeast(s string) (regression.Threshold, error) {
	var t regression.Threshold
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		pct := strings.HasSuffix(part, "%")
		v, err := strconv.ParseFloat(strings.TrimSuffix(part, "%"), 64)
		if err != nil || v < 0 {
			return t, fmt.Errorf("-least %q: a percentage (10%%), an amount (100) or both (10%%,100)", s)
		}
		if pct {
			t.Relative = v / 100
		} else {
			t.Absolute = v
		}
	}
	return t, nil
}

// point is one JSON input object.
type point struct {
	Date   string    `json:"date"`
	Day    string    `json:"day"`
	Value  *float64  `json:"value"`
	Values []float64 `json:"values"`
	Count  int       `json:"count"`
	Views  int       `json:"views"`
}

// readSeries reads the series, oldest first, a date's values gathered into its day.
func readSeries(in io.Reader) ([]regression.Day, error) {
	b, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	var points []point
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &points); err != nil {
			return nil, fmt.Errorf("JSON input: %w", err)
		}
	} else if points, err = readCSV(b); err != nil {
		return nil, err
	}
	var days []regression.Day
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range points {
		date := p.Date + p.Day
		day := start.AddDate(0, 0, i).Format("20060102")
		if date != "" {
			t, err := parseDate(date)
			if err != nil {
				return nil, fmt.Errorf("value %d: %w", i+1, err)
			}
			day = t.Format("20060102")
		}
		values := p.Values
		if p.Value != nil {
			values = append(values, *p.Value)
		}
		if len(values) == 0 {
			continue // a day without a value
		}
		count := max(p.Count, p.Views)
		if n := len(days); n > 0 && days[n-1].Day == day {
			days[n-1].Values = append(days[n-1].Values, values...)
			days[n-1].Count += count
			continue
		}
		if n := len(days); n > 0 && days[n-1].Day > day {
			return nil, fmt.Errorf("value %d: %s comes before %s: give the series oldest first", i+1, iso(day), iso(days[n-1].Day))
		}
		days = append(days, regression.Day{Day: day, Values: values, Count: count})
	}
	return days, nil
}

func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q: yyyy-mm-dd or yyyymmdd", s)
}

// readCSV reads rows of date,value[,count] or value, skipping a header and empty values.
func readCSV(b []byte) ([]point, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("CSV input: %w", err)
	}
	var points []point
	for i, row := range rows {
		var p point
		valueAt := 1
		if len(row) == 1 {
			valueAt = 0
		} else {
			p.Date = row[0]
		}
		if strings.TrimSpace(row[valueAt]) == "" {
			points = append(points, p) // a day without a value keeps its place
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(row[valueAt]), 64)
		if err != nil {
			if i == 0 {
				continue // a header
			}
			return nil, fmt.Errorf("CSV row %d: value %q is not a number", i+1, row[valueAt])
		}
		p.Value = &v
		if len(row) > 2 && strings.TrimSpace(row[2]) != "" {
			if p.Count, err = strconv.Atoi(strings.TrimSpace(row[2])); err != nil || p.Count < 0 {
				return nil, fmt.Errorf("CSV row %d: count %q is not a whole number", i+1, row[2])
			}
		}
		points = append(points, p)
	}
	return points, nil
}
