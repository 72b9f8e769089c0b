package main

import (
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// purgeVisibilityTimeoutMinutes is how long a received purge message stays hidden; it must
// exceed the purge worker's Lambda timeout, or SQS redelivers a message that is still being
// processed.
const purgeVisibilityTimeoutMinutes = 5

// purgeWorkerTimeoutSeconds is a sixth of the purge queue's visibility timeout, as AWS advises
// for SQS event sources. A purge that does not finish in time is idempotent and carries on
// where it stopped when the message comes back.
const purgeWorkerTimeoutSeconds = purgeVisibilityTimeoutMinutes * 60 / 6

// purgeBatchSize is how many purge messages one invocation handles.
const purgeBatchSize = 10

// purgePipeline removes what a deleted website, page or multistep test left: the API and the
// scheduler queue purges, the purge worker deletes every item and object of each.
type purgePipeline struct {
	oneQueuePipeline
	// worker is the purge worker, once addFunctions has created it.
	worker awslambda.Function
}

// newPurgePipeline creates the purge queue, its dead-letter queue and their alarms under
// scope/id; addFunctions adds the worker.
func newPurgePipeline(scope constructs.Construct, id string, s *shared) *purgePipeline {
	// Purges are idempotent, so retrying is safe; a message that keeps failing is parked in
	// the DLQ instead of looping for ever.
	p := newOneQueuePipeline(scope, id, s, queueSpec{"purge", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(purgeVisibilityTimeoutMinutes)),
		// A purge takes seconds.
		depth:          depthAlarm{1, 5, 6, "purges have waited for 30 minutes: is the purge worker failing or throttled?"},
		description:    "SQS queue feeding the purge worker",
		dlqDescription: "Purges that failed every attempt (their markers stay in the table)",
	}})
	return &purgePipeline{oneQueuePipeline: p}
}

// addFunctions creates the purge worker, fed by the purge queue.
func (p *purgePipeline) addFunctions(fns *functionFactory) {
	p.worker = fns.goFunction(p.c, "purge-worker", goFunctionProps{
		description: "openvitals purge worker: removes every item and object a deletion left",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(purgeWorkerTimeoutSeconds)),
	})
	p.s.data.table.GrantReadWriteData(p.worker)
	// Lists a prefix, then deletes it: in the reports' bucket, and a website's real-user
	// objects in theirs.
	p.s.data.bucket.GrantRead(p.worker, nil)
	p.s.data.bucket.GrantDelete(p.worker, nil)
	p.s.data.rumBucket.GrantRead(p.worker, nil)
	p.s.data.rumBucket.GrantDelete(p.worker, nil)
	// A retention pass and a website's purge delete its exports by their keys, computed.
	p.s.data.exports.bucket.GrantDelete(p.worker, nil)
	setRetentionBounds(p.worker, p.s.settings)
	// Queues a purge's next pass to its own queue.
	p.queue.queue.GrantSendMessages(p.worker)
	p.queue.feed(p.worker, awslambdaeventsources.SqsEventSourceProps{BatchSize: jsii.Number(purgeBatchSize)})
}

// purgeSettleMarginSeconds is added to the longest function timeout for a purge's settle time:
// a worker that had just started when its website was deleted stores its last object before
// then.
const purgeSettleMarginSeconds = 60

// settleAfter sets the settle time (OPENVITALS_PURGE_SETTLE_SECONDS) of the purge worker and of
// the others given, which read it too (the scheduler queues again the purges whose message
// was lost, after that time): a purge passes again until the longest any function runs,
// longest, has passed since the deletion.
func (p *purgePipeline) settleAfter(longest time.Duration, others ...awslambda.Function) {
	settle := jsii.String(strconv.Itoa(int(longest.Seconds()) + purgeSettleMarginSeconds))
	for _, fn := range append([]awslambda.Function{p.worker}, others...) {
		fn.AddEnvironment(jsii.String("OPENVITALS_PURGE_SETTLE_SECONDS"), settle, nil)
	}
}
