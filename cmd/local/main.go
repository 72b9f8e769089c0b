// Command local runs all of openvitals in one process for development (make run, make demo):
// the service of internal/local, until Ctrl-C or SIGTERM.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/openvitals/openvitals/internal/local"
)

func main() {
	level, err := local.LogLevel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := local.Run(ctx, log); err != nil {
		log.Error("openvitals stopped", "err", err)
		os.Exit(1)
	}
}
