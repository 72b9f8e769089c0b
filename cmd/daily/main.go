// Command daily runs the daily schedule once, now, through the same handler the EventBridge
// rules invoke, waits for the fan-out workers (the local service's) to queue the day's work
// website by website, then follows the audits, multistep runs and user-experience data
// collections they queued, retries included, until each has an outcome. It exits 1 when any
// finally failed, or when the fan-out stopped. `make daily` runs it against the local service
// started by `make run`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
	"github.com/openvitals/openvitals/internal/ux"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "daily:", err)
		os.Exit(1)
	}
}

// errFailed: some of the work finally failed (the lines above say which and why).
var errFailed = errors.New("some of the day's work failed")

func run(ctx context.Context, out io.Writer) error {
	cfg, err := service.ConfigFromEnv()
	if err != nil {
		return err
	}
	clients, err := awsclient.New(ctx)
	if err != nil {
		return err
	}
	svc, err := service.New(cfg, clients, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fmt.Errorf("%w (is the local service running? start it with make run)", err)
	}
	sched := schedulefn.New(svc)
	start := time.Now().UTC()
	res, err := sched.Handle(ctx, events.CloudWatchEvent{Source: "openvitals.daily", DetailType: "Scheduled Event", Time: start})
	if err != nil {
		return err
	}
	queued, err := waitFanout(ctx, out, func(ctx context.Context) (schedule.Queued, bool, error) { return sched.Fanned(ctx, res, start) },
		svc.Queues.Fanout, time.Second)
	if err != nil {
		return err
	}
	p, err := follow(ctx, out, queued, func(ctx context.Context) (schedule.Progress, error) { return sched.Track(ctx, queued) }, 3*time.Second)
	if err != nil {
		return err
	}
	if len(queued.UX) > 0 {
		runs, err := ux.Outcomes(ctx, svc.Store, queued.UX)
		if err != nil {
			return err
		}
		showUX(out, runs)
	}
	if p.Audits.Failed+p.Runs.Failed+p.UX.Failed > 0 {
		return errFailed
	}
	return nil
}

// depth reports how many messages a queue holds, waiting or being handled.
type depth interface {
	Depth(ctx context.Context) (visible, inFlight int, err error)
}

// errFanoutStopped: the fan-out queue emptied with some of the day's fan-out not done.
var errFanoutStopped = errors.New("the daily fan-out stopped before queuing every website's work: its failed messages are in the fan-out dead-letter queue (openvitals-fanout-dlq), and the local service's log says why")

// waitFanout waits until the fan-out workers have queued the day's work (fanned says so and
// what), printing how long it took. A fan-out queue found empty twice in a row while the
// fan-out is not over means its messages failed for good.
func waitFanout(ctx context.Context, out io.Writer, fanned func(context.Context) (schedule.Queued, bool, error), q depth, every time.Duration) (schedule.Queued, error) {
	start, empty := time.Now(), 0
	for {
		queued, over, err := fanned(ctx)
		if err != nil {
			return queued, err
		}
		if over {
			fmt.Fprintf(out, "the fan-out queued the day's work in %.1f s\n", time.Since(start).Seconds())
			return queued, nil
		}
		visible, inFlight, err := q.Depth(ctx)
		if err != nil {
			return queued, err
		}
		if visible+inFlight == 0 {
			empty++
		} else {
			empty = 0
		}
		if empty >= 2 {
			return queued, errFanoutStopped
		}
		select {
		case <-ctx.Done():
			return queued, ctx.Err()
		case <-time.After(every):
		}
	}
}

// follow prints what a daily run queued and its progress, job by job, until every job has an
// outcome (done or failed after its last attempt), and returns the last progress.
func follow(ctx context.Context, out io.Writer, res schedule.Queued, track func(context.Context) (schedule.Progress, error), every time.Duration) (schedule.Progress, error) {
	fmt.Fprintf(out, "day %s: %d audits, %d multistep runs and %d user-experience data collections (one per website) queued\n",
		res.Day, len(res.Audits), len(res.Runs), len(res.UX))
	jobs := []struct {
		what   string
		queued int
		of     func(schedule.Progress) queue.Progress
	}{
		{"audits", len(res.Audits), func(p schedule.Progress) queue.Progress { return p.Audits }},
		{"multistep runs", len(res.Runs), func(p schedule.Progress) queue.Progress { return p.Runs }},
		{"user-experience data", len(res.UX), func(p schedule.Progress) queue.Progress { return p.UX }},
	}
	if len(res.Audits)+len(res.Runs)+len(res.UX) == 0 {
		fmt.Fprintln(out, "nothing to wait for: no pages or tests, or everything was queued today already")
		return schedule.Progress{}, nil
	}
	var last schedule.Progress
	first := true
	for {
		p, err := track(ctx)
		if err != nil {
			return p, err
		}
		for _, j := range jobs {
			if j.queued > 0 && (first || j.of(p) != j.of(last)) {
				show(out, j.what, j.queued, j.of(p))
			}
		}
		first, last = false, p
		if p.Settled() {
			if p.Audits.Failed > 0 {
				fmt.Fprintf(out, "audits failed after %d attempts: the page details say why (lastError)\n", queue.MaxReceives)
			}
			if p.Runs.Failed > 0 {
				fmt.Fprintln(out, "multistep runs failed: their runs say why (error, failedStep, screenshot)")
			}
			if p.UX.Failed > 0 {
				fmt.Fprintf(out, "user-experience collections failed after %d attempts: the CrUX or Search Console API kept failing\n", queue.MaxReceives)
			}
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(every):
		}
	}
}

// show prints one line of progress: its counts add up to what was queued (skipped ones are
// shown when there are some).
func show(out io.Writer, what string, queued int, p queue.Progress) {
	skipped := ""
	if p.Skipped > 0 {
		skipped = fmt.Sprintf(" / skipped %d", p.Skipped)
	}
	fmt.Fprintf(out, "%s  %s (%d): done %d%s / failed %d / retrying %d / waiting %d\n",
		time.Now().Format("15:04:05"), what, queued, p.Done, skipped, p.Failed, p.Retrying, p.Remaining)
}

// showUX says what the collections stored, and what they left out and why (a skipped one's
// reason, such as no CrUX API key).
func showUX(out io.Writer, runs []model.UXRun) {
	var records, noData, search int
	notes := map[string]bool{}
	for _, r := range runs {
		records, noData, search = records+r.UXRecords, noData+r.UXNoData, search+r.SearchPages
		for _, n := range strings.Split(r.Error, "; ") {
			if n != "" {
				notes[n] = true
			}
		}
	}
	fmt.Fprintf(out, "user-experience data: %d records stored, %d pages without data in the dataset, %d pages with search analytics\n",
		records, noData, search)
	for _, n := range slices.Sorted(maps.Keys(notes)) {
		fmt.Fprintln(out, "  "+n)
	}
}
