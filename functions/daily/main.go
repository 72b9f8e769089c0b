// Command daily runs the daily audit schedule once, now, through the same handler the
// EventBridge rule invokes, then shows the progress of the audits it queued until they are all
// done or failed. `make daily` runs it against the local service started by `make run`.
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
	fmt.Printf("day %s: %d audits queued\n", res.Day, res.Queued)
	if res.Queued == 0 {
		fmt.Println("nothing to wait for: no pages, or every page was queued today already")
		return nil
	}
	last := audit.Progress{Remaining: -1}
	for {
		p, err := audit.Track(ctx, svc.Store, res.Jobs)
		if err != nil {
			return err
		}
		if p != last {
			fmt.Printf("%s  done %d / failed %d / remaining %d", time.Now().Format("15:04:05"), p.Done, p.Failed, p.Remaining)
			if p.Retrying > 0 {
				fmt.Printf(" (%d failed once or twice and wait for a retry)", p.Retrying)
			}
			fmt.Println()
			last = p
		}
		if p.Remaining == 0 {
			if p.Retrying > 0 || p.Failed > 0 {
				fmt.Println("the page details show why audits failed (lastError); SQS retries each up to 3 times")
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
