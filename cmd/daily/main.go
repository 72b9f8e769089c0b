// Command daily runs the daily schedule once, now, through the same handler the EventBridge
// rules invoke, then shows the progress of the audits and user-experience data collections it
// queued until they are all done or failed. `make daily` runs it against the local service
// started by `make run`.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "daily:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := service.ConfigFromEnv()
	if err != nil {
		return err
	}
	clients, err := service.NewClients(ctx)
	if err != nil {
		return err
	}
	svc, err := service.New(cfg, clients, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fmt.Errorf("%w (is the local service running? start it with make run)", err)
	}
	sched := schedule.New(svc)
	res, err := sched.Handle(ctx, events.CloudWatchEvent{Source: "openvitals.daily", DetailType: "Scheduled Event", Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	fmt.Printf("day %s: %d audits, %d multistep runs and %d user-experience data collections (one per website) queued\n",
		res.Day, len(res.Audits), res.Runs, len(res.UX))
	if len(res.Audits) == 0 && len(res.UX) == 0 {
		fmt.Println("nothing to wait for: no pages, or everything was queued today already")
		return nil
	}
	var last schedule.Progress
	last.Audits.Remaining, last.UX.Remaining = -1, -1
	for {
		p, err := sched.Track(ctx, res)
		if err != nil {
			return err
		}
		if p.Audits != last.Audits && len(res.Audits) > 0 {
			show("audits", p.Audits)
		}
		if p.UX != last.UX && len(res.UX) > 0 {
			show("user-experience data", p.UX)
		}
		last = p
		if p.Audits.Remaining == 0 && p.UX.Remaining == 0 {
			if p.Audits.Retrying > 0 || p.Audits.Failed > 0 {
				fmt.Printf("the page details show why audits failed (lastError); SQS tries each up to %d times\n", queue.MaxReceives)
			}
			if p.UX.Retrying > 0 || p.UX.Failed > 0 {
				fmt.Printf("the CrUX or Search Console API kept failing; SQS tries each collection up to %d times\n", queue.MaxReceives)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

// show prints one line of progress.
func show(what string, p queue.Progress) {
	fmt.Printf("%s  %s: done %d / failed %d / remaining %d", time.Now().Format("15:04:05"), what, p.Done, p.Failed, p.Remaining)
	if p.Retrying > 0 {
		fmt.Printf(" (%d failed for now and wait for a retry)", p.Retrying)
	}
	fmt.Println()
}
