package multistepworker_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// BenchmarkJourneyRun plays the end-to-end test's journey (open a page, a click that blocks
// 200 ms and navigates, wait for the next page) ten times in a row, one run at a time as the
// worker does, and reports seconds per run, runs per hour per worker, and the peak resident
// memory of a run's browser processes (the sum of their RSS, sampled every 50 ms); with -short,
// one run:
//
//	go test -run '^$' -bench JourneyRun -benchtime 1x ./internal/multistepworker/
func BenchmarkJourneyRun(b *testing.B) {
	host := journeySite(b)
	opts := journey.Options{
		Browser: browsertest.Options(b, true),
		BaseURL: "http://" + host, Device: "desktop",
	}
	steps := []step.Step{
		{Type: "navigate", Target: "/", WaitUntil: "load"},
		{Type: "click", Target: "#go", WaitForNavigation: true, WaitUntil: "load"},
		{Type: "waitForSelector", Target: "#done"},
	}
	runs := 10
	if testing.Short() {
		runs = 1
	}
	for b.Loop() {
		var total time.Duration
		var peak int64
		for range runs {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var runPeak int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if rss := sessionRSS(opts.Browser.TempRoot); rss > runPeak {
						runPeak = rss
					}
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			res, err := journey.Run(context.Background(), opts, steps)
			total += time.Since(start)
			close(stop)
			wg.Wait()
			if err != nil || res.FailedStep >= 0 {
				b.Fatalf("run failed: %v %s", err, res.Error)
			}
			peak = max(peak, runPeak)
		}
		perRun := total.Seconds() / float64(runs)
		b.ReportMetric(perRun, "s/run")
		b.ReportMetric(3600/perRun, "runs/hour")
		b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-rss")
	}
}

// sessionRSS sums the resident memory of the processes whose command line names dir (the
// browser's profile and temp directories live there).
func sessionRSS(dir string) int64 {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var sum int64
	for _, p := range procs {
		cmd, err := os.ReadFile(p + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(dir)) {
			continue
		}
		status, err := os.ReadFile(p + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				sum += kb << 10
			}
		}
	}
	return sum
}
