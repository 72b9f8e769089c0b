package local

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/browserworkersfn"
	"github.com/openvitals/openvitals/internal/service/fanoutworkerfn"
	"github.com/openvitals/openvitals/internal/service/notifyworkerfn"
	"github.com/openvitals/openvitals/internal/service/purgeworkerfn"
	"github.com/openvitals/openvitals/internal/service/rumworkerfn"
	"github.com/openvitals/openvitals/internal/service/uxworkerfn"
)

// poller is one worker polling its queue, as an SQS event source mapping does in AWS.
type poller struct {
	queue *queue.Queue
	// batch is how many messages one call takes: the batch size of the stack's event source,
	// or one for the browser workers, whose jobs take turns (see startWorkers).
	batch  int
	handle queue.BatchHandler
}

// startWorkers builds every worker from the service, as its Lambda main does, and starts
// polling their queues until ctx ends; the returned function waits for them to stop and
// releases the audit worker's Lighthouse runner.
func startWorkers(ctx context.Context, svc *service.Service) (stop func(), err error) {
	audits, err := browserworkersfn.AuditWorker(ctx, svc)
	if err != nil {
		return nil, fmt.Errorf("audit worker: %w", err)
	}
	runs, err := browserworkersfn.MultistepWorker(ctx, svc)
	if err != nil {
		return nil, fmt.Errorf("multistep worker: %w", err)
	}
	// Without OPENVITALS_CRUX_API_KEY only search analytics are collected.
	ux, err := uxworkerfn.New(ctx, svc)
	if err != nil {
		return nil, fmt.Errorf("user-experience worker: %w", err)
	}
	purges, err := purgeworkerfn.New(ctx, svc)
	if err != nil {
		return nil, err
	}
	rebatcher, err := rumworkerfn.Rebatcher(ctx, svc)
	if err != nil {
		return nil, err
	}
	aggregator, err := rumworkerfn.Aggregator(ctx, svc)
	if err != nil {
		return nil, err
	}
	notifier, err := notifyworkerfn.New(ctx, svc)
	if err != nil {
		return nil, err
	}
	fanouts, err := fanoutworkerfn.New(ctx, svc)
	if err != nil {
		return nil, err
	}
	// One browser job at a time: two Lighthouse runs at once, or a multistep run beside one,
	// skew each other's timings.
	var browser sync.Mutex
	oneAtATime := func(h queue.BatchHandler) queue.BatchHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			browser.Lock()
			defer browser.Unlock()
			return h(ctx, ev)
		}
	}
	q := svc.Queues
	pollers := []poller{
		{q.Audit, 1, oneAtATime(audits.HandleSQS)},
		{q.Multistep, 1, oneAtATime(runs.HandleSQS)},
		{q.Fanout, 1, fanouts.HandleSQS},
		{q.UX, 1, ux.HandleSQS},
		{q.Purge, 10, purges.HandleSQS},
		{q.Beacon, 10, rebatcher.HandleSQS},
		{q.RUM, 10, aggregator.HandleSQS},
		{q.Notify, 10, notifier.HandleSQS},
	}
	var wg sync.WaitGroup
	for _, p := range pollers {
		wg.Add(1)
		go func() { defer wg.Done(); p.queue.Poll(ctx, p.batch, p.handle, svc.Log) }()
	}
	return func() {
		wg.Wait()
		if err := audits.Close(); err != nil {
			svc.Log.Warn("stop the Lighthouse runner", "err", err)
		}
	}, nil
}
