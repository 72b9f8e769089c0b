package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Sizes of the fan-out worker.
const (
	// fanoutWorkerTimeoutMinutes bounds one message's work: a page of 1,000 websites, or one
	// website's share of a daily job (a thousand pages' audits in 200 requests), each some
	// seconds at most. It is also how long an attempt holds its claims: a message delivered
	// again after the visibility timeout finds the claims of a stopped attempt free.
	fanoutWorkerTimeoutMinutes = 1
	// fanoutVisibilityTimeoutMinutes is six times the worker's timeout, as for every queue.
	fanoutVisibilityTimeoutMinutes = 6 * fanoutWorkerTimeoutMinutes
	// fanoutWorkerMaxConcurrency is how many fan-out workers run at once: enough for 10,000
	// websites of 1,000 pages within minutes (BENCHMARKS.md, "Daily fan-out"), few beside the
	// account's concurrency, for a few minutes a day.
	fanoutWorkerMaxConcurrency = 20
)

// fanoutPipeline queues each day's work website by website: the scheduler starts a daily job
// with one message, the fan-out worker walks the websites listing a page at a time (each page
// queues the next and one message per website) and queues each website's share of the job on
// the audit, multistep and ux queues.
type fanoutPipeline struct {
	oneQueuePipeline
	// targets are the queues the worker fills.
	targets scheduledQueues
}

// newFanoutPipeline creates the fan-out queue, its dead-letter queue and their alarms under
// scope/id; addFunctions adds the worker, which fills targets.
func newFanoutPipeline(scope constructs.Construct, id string, s *shared, targets scheduledQueues) *fanoutPipeline {
	p := newOneQueuePipeline(scope, id, s, queueSpec{"fanout", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(fanoutVisibilityTimeoutMinutes)),
		// A day's fan-out takes minutes; a message that waited half an hour is a fan-out that
		// does not go on (a message that keeps failing ends in the dead-letter queue).
		depth: depthAlarm{1, 5, 6, "the daily fan-out's messages have waited for 30 minutes: look at the fan-out worker's errors " +
			"(a part claimed by a stopped attempt is taken over once its lease, the worker's timeout, has passed)"},
		// As long as the audits it queues, so that a stalled fan-out can be redriven.
		retentionDays:  maxRetentionDays,
		description:    "SQS queue feeding the fan-out worker: a page of the websites listing, or a website's share of a daily job",
		dlqDescription: "Fan-out messages that failed every attempt: redrive them once fixed (their parts queued already are not queued again)",
	}})
	return &fanoutPipeline{oneQueuePipeline: p, targets: targets}
}

// addFunctions creates the fan-out worker, fed by the fan-out queue.
func (p *fanoutPipeline) addFunctions(fns *functionFactory) {
	worker := fns.goFunction(p.c, "fanout-worker", goFunctionProps{
		description: "openvitals fan-out worker: a page of the websites listing, or a website's share of a daily job (audits, multistep runs, ux collection, exports, retention), each part once a day",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(fanoutWorkerTimeoutMinutes)),
	})
	// Lists the websites and their pages and tests, and claims what it queues.
	p.s.data.table.GrantReadWriteData(worker)
	// The next page of the listing and the websites' messages; their audits, runs and
	// collections; the channels' daily digests.
	for _, wq := range []*workQueue{p.queue, p.targets.audits, p.targets.runs, p.targets.ux, p.s.notifications, p.targets.purges} {
		wq.queue.GrantSendMessages(worker)
	}
	// The exports job writes each website's day of Parquet, reading the audits' diagnostics
	// beside their reports and the day's real-user tables; the retention job queues its pass
	// to the purge worker (above).
	p.s.data.exports.bucket.GrantPut(worker, nil)
	p.s.data.bucket.GrantRead(worker, nil)
	p.s.data.rumBucket.GrantRead(worker, nil)
	// One message per invocation: a website's share is retried alone.
	p.queue.feedOneAtATime(worker, fanoutWorkerMaxConcurrency)
}
