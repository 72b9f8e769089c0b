package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Sizes of the ux worker.
const (
	// uxWorkerTimeoutMinutes: one website a message, each page on both devices, at the
	// worker's pace of uxWorkerQueriesPerMinute CrUX queries (500 pages take ~13 minutes),
	// plus the Search Console query.
	uxWorkerTimeoutMinutes = 15
	// uxWorkerMaxConcurrency is how many ux workers the event source mapping runs at once:
	// 2, the least a mapping's maximum concurrency may be. (A reserved concurrency of 1 would
	// fail the first deploy into a new account.)
	uxWorkerMaxConcurrency = 2
	// cruxQuota is the Chrome UX Report API's quota, 150 queries a minute per API key
	// (service.CrUXQuota in the main module).
	cruxQuota = 150
	// uxWorkerQueriesPerMinute is each worker's pace (OPENVITALS_CRUX_QUERIES_PER_MINUTE):
	// its share of the quota, so that the workers running at once stay under it together.
	uxWorkerQueriesPerMinute = cruxQuota / uxWorkerMaxConcurrency
	// uxVisibilityTimeoutMinutes is six times the worker's timeout. The event source holds a
	// few messages while both workers are busy; each must stay hidden that long, or SQS counts
	// a new receive and a website could reach the dead-letter queue without ever failing.
	uxVisibilityTimeoutMinutes = 6 * uxWorkerTimeoutMinutes
)

// uxPipeline collects the user-experience data of every website once a day: the scheduler
// queues one message per website, the ux worker reads its Chrome UX Report records and
// Search Console analytics and stores them.
type uxPipeline struct {
	oneQueuePipeline
}

// newUXPipeline creates the ux queue, its dead-letter queue and their alarms under scope/id;
// addFunctions adds the worker.
func newUXPipeline(scope constructs.Construct, id string, s *shared) *uxPipeline {
	p := newOneQueuePipeline(scope, id, s, queueSpec{"ux", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(uxVisibilityTimeoutMinutes)),
		// One message per website and day, two workers at a time.
		depth:          depthAlarm{1, 60, 6, "user-experience data collections have waited for 6 hours: look at the ux worker's errors"},
		description:    "SQS queue feeding the ux worker",
		dlqDescription: "User-experience data collections that failed every attempt",
	}})
	return &uxPipeline{oneQueuePipeline: p}
}

// addFunctions creates the ux worker, fed by the ux queue.
func (p *uxPipeline) addFunctions(fns *functionFactory) {
	worker := fns.goFunction(p.c, "ux-worker", goFunctionProps{
		description: "openvitals ux worker: a website's Chrome UX Report and Search Console data, once a day",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(uxWorkerTimeoutMinutes)),
		environment: map[string]*string{
			envCruxAPIKeySecret:                  p.s.cruxKey.SecretArn(),
			envCredentialsKeySecret:              p.s.credentialsKey.SecretArn(),
			"OPENVITALS_CRUX_QUERIES_PER_MINUTE": jsii.String(strconv.Itoa(uxWorkerQueriesPerMinute)),
		},
	})
	p.s.data.table.GrantReadWriteData(worker)
	// Reads real users' daily values of each page for regressions.
	p.s.data.rumBucket.GrantRead(worker, nil)
	// Queues the events its results cause to the notifier.
	p.s.notifications.queue.GrantSendMessages(worker)
	p.s.cruxKey.GrantRead(worker, nil)
	// The Search Console credentials are stored encrypted with this key.
	p.s.credentialsKey.GrantRead(worker, nil)
	// One website per invocation, so that a failing one is retried alone.
	p.queue.feedOneAtATime(worker, uxWorkerMaxConcurrency)
}
