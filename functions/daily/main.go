// Command daily runs the daily schedule once, now, through the same handler the EventBridge
// rule invokes, then shows the progress of the audits and field-data collections it queued
// until they are all done or failed. `make daily` runs it against the local service started by
// `make run`.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/fieldqueue"
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
	clients, err := service.NewClients(ctx)
	if err != nil {
		return err
	}
	svc, err := service.New(service.ConfigFromEnv(), clients, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return fmt.Errorf("%w (is the local service running? start it with make run)", err)
	}
	now := time.Now().UTC()
	res, err := svc.Daily(ctx, events.CloudWatchEvent{Source: "openvitals.daily", DetailType: "Scheduled Event", Time: now})
	if err != nil {
		return err
	}
	fmt.Printf("day %s: %d audits queued, %d field-data collections queued (one per website)\n", res.Day, res.Queued, res.FieldQueued)
	if res.Queued == 0 && res.FieldQueued == 0 {
		fmt.Println("nothing to wait for: no pages, or everything was queued today already")
		return nil
	}
	last, lastField := audit.Progress{Remaining: -1}, fieldqueue.Progress{Remaining: -1}
	for {
		p, err := audit.Track(ctx, svc.Store, res.Jobs)
		if err != nil {
			return err
		}
		f, err := fieldqueue.Track(ctx, svc.Store, res.FieldJobs)
		if err != nil {
			return err
		}
		if p != last && res.Queued > 0 {
			fmt.Printf("%s  done %d / failed %d / remaining %d", time.Now().Format("15:04:05"), p.Done, p.Failed, p.Remaining)
			if p.Retrying > 0 {
				fmt.Printf(" (%d failed once or twice and wait for a retry)", p.Retrying)
			}
			fmt.Println()
			last = p
		}
		if f != lastField && res.FieldQueued > 0 {
			fmt.Printf("%s  field data: done %d / failed %d / remaining %d", time.Now().Format("15:04:05"), f.Done, f.Failed, f.Remaining)
			if f.Retrying > 0 {
				fmt.Printf(" (%d failed for now and wait for a retry)", f.Retrying)
			}
			fmt.Println()
			lastField = f
		}
		if p.Remaining == 0 && f.Remaining == 0 {
			if p.Retrying > 0 || p.Failed > 0 {
				fmt.Println("the page details show why audits failed (lastError); SQS retries each up to 3 times")
			}
			if f.Retrying > 0 || f.Failed > 0 {
				fmt.Println("the CrUX or Search Console API kept failing; SQS retries each collection up to 3 times")
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
