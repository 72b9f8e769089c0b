package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/regression"
)

// rampCSV is a user-experience p75 series: 2000 ms for 60 days, then a step of the page to
// 2400 ms seen through the 28-day window (a ramp from 2026-03-02), then 2400; a little noise.
func rampCSV() string {
	var b strings.Builder
	b.WriteString("date,value\n")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 120 {
		v := 2000.0 + 400*math.Min(math.Max(float64(i-60+1)/28, 0), 1) + float64((i*7)%5) - 2
		fmt.Fprintf(&b, "%s,%.0f\n", start.AddDate(0, 0, i).Format(time.DateOnly), v)
	}
	return b.String()
}

// TestRampOneChange: the command reports a rolling window's ramp once, from its first day.
func TestRampOneChange(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-kind", "crux", "-metric", "lcp", "-json"}, strings.NewReader(rampCSV()), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d reports, want 1:\n%s", len(lines), out.String())
	}
	var r report
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	if r.Type != "regression" || r.Direction != "up" || r.FirstBadDay != "2026-03-02" || r.ReportedDay <= r.FirstBadDay ||
		math.Abs(r.Before.Median-2000) > 10 || r.After.Median < 2000*1.1 {
		t.Fatalf("report %+v: want a regression up from 2026-03-02, 2000 before and at least 2200 after", r)
	}
	out.Reset()
	if err := run([]string{"-kind", "crux", "-metric", "lcp"}, strings.NewReader(rampCSV()), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "regression from 2026-03-02, reported ") || !strings.Contains(out.String(), " ms") {
		t.Fatalf("text output %q", out.String())
	}
}

// TestSameAsService: the command reports what regression.Replay (the watcher's Evaluate, day
// by day) finds, for each kind, and reads CSV and JSON alike.
func TestSameAsService(t *testing.T) {
	days, err := readSeries(strings.NewReader(rampCSV()))
	if err != nil {
		t.Fatal(err)
	}
	var js []map[string]any
	for _, d := range days {
		js = append(js, map[string]any{"date": d.Day, "value": d.Values[0], "count": 100})
	}
	jsonIn, _ := json.Marshal(js)
	for kind, source := range kinds {
		want := regression.Replay(source, days, regression.Threshold{Relative: 0.05}, true)
		for _, in := range []string{rampCSV(), string(jsonIn)} {
			var out bytes.Buffer
			if err := run([]string{"-kind", kind, "-least", "5%", "-json"}, strings.NewReader(in), &out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var r report
				if line == "" {
					continue
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, r.FirstBadDay+r.Recovered+"/"+r.ReportedDay)
			}
			var exp []string
			for _, r := range want {
				first := r.Recovered
				if r.Change != nil {
					first = r.Change.FirstBad
				}
				exp = append(exp, iso(first)+"/"+iso(r.Reported))
			}
			if strings.Join(got, " ") != strings.Join(exp, " ") {
				t.Fatalf("kind %s: command %v, service %v", kind, got, exp)
			}
		}
	}
}

// TestInput: counts and a day's runs are read; bad input is refused, naming what is wrong.
func TestInput(t *testing.T) {
	days, err := readSeries(strings.NewReader("2026-01-01,10,300\n2026-01-01,12\n20260102,11,50\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 2 || days[0].Day != "20260101" || len(days[0].Values) != 2 || days[0].Count != 300 || days[1].Count != 50 {
		t.Fatalf("days %+v", days)
	}
	days, err = readSeries(strings.NewReader("value\n1\n\n2\n"))
	if err != nil || len(days) != 2 || days[1].Day != "20000102" {
		t.Fatalf("values alone: %+v, %v", days, err)
	}
	for _, c := range []struct {
		args []string
		in   string
		want string
	}{
		{[]string{"-kind", "weekly"}, "1\n", "-kind"},
		{[]string{"-metric", "speed"}, "1\n", "-metric"},
		{[]string{"-least", "ten"}, "1\n", "-least"},
		{nil, "2026-01-02,1\n2026-01-01,2\n", "oldest first"},
		{nil, "2026-01-01,1\n2026-01-02,x\n", "not a number"},
		{nil, "", "no values"},
	} {
		err := run(c.args, strings.NewReader(c.in), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v on %q: %v, want an error saying %q", c.args, c.in, err, c.want)
		}
	}
}
