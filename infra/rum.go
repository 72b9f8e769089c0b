package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Sizes of the RUM rebatcher and aggregator.
const (
	// rumBatcherTimeoutSeconds: the rebatcher regroups up to rumBatcherBatchSize small
	// messages and sends them on in a few requests.
	rumBatcherTimeoutSeconds = 60
	// rumBatcherBatchSize and rumBatcherWindowSeconds: the rebatcher's event source hands over
	// up to this many beacons, waiting up to this long to gather them, so that a fold covers
	// many views of a website instead of one.
	rumBatcherBatchSize     = 2000
	rumBatcherWindowSeconds = 30
	// beaconVisibilityTimeoutSeconds is six times the rebatcher's timeout, as AWS advises,
	// plus its batching window.
	beaconVisibilityTimeoutSeconds = 6*rumBatcherTimeoutSeconds + rumBatcherWindowSeconds

	// rumAggregatorMemoryMB: merging DDSketches is CPU work, and CPU grows with memory.
	rumAggregatorMemoryMB = 512
	// rumAggregatorTimeoutSeconds: a batch folds into a few rollup items (read, merge the
	// sketches, conditional write), retried on a concurrent write.
	rumAggregatorTimeoutSeconds = 60
	// rumAggregatorBatchSize is how many beacon batches one invocation folds (the most a FIFO
	// event source allows).
	rumAggregatorBatchSize = 10
	// rumVisibilityTimeoutSeconds is six times the aggregator's timeout, as AWS advises.
	rumVisibilityTimeoutSeconds = 6 * rumAggregatorTimeoutSeconds
)

// rumPipeline folds real-user page views into rollups: the public collect endpoint (the rum
// function of the API) queues each beacon on the beacon queue, the rebatcher regroups them per
// website onto the FIFO rum queue, and the aggregator folds each batch into the rollups.
type rumPipeline struct {
	c constructs.Construct
	s *shared
	// beacons carries beacons from collect (one message per invocation) to the rebatcher,
	// which takes it in large batches.
	beacons *workQueue
	// batches carries regrouped beacons from the rebatcher to the aggregator. It is a FIFO
	// queue: each message carries a MessageDeduplicationId, so a batch sent twice within five
	// minutes is queued once, and its MessageGroupId is the website.
	batches *workQueue
}

// newRUMPipeline creates the beacon and rum queues, their dead-letter queues and their alarms
// under scope/id; addFunctions adds the rebatcher and the aggregator.
func newRUMPipeline(scope constructs.Construct, id string, s *shared) *rumPipeline {
	c := constructs.NewConstruct(scope, jsii.String(id))
	beacons := newWorkQueue(c, "beacon", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(beaconVisibilityTimeoutSeconds)),
		// Beacons arrive all the time; the rebatcher takes up to 2,000 every 30 seconds.
		depth:          depthAlarm{50000, 5, 3, "over 50,000 beacons have waited for 15 minutes: is the RUM rebatcher failing or throttled?"},
		description:    "SQS queue carrying beacons from collect to the RUM rebatcher",
		dlqDescription: "Beacons the rebatcher could not pass on",
	})
	batches := newWorkQueue(c, "rum", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(rumVisibilityTimeoutSeconds)),
		fifo:       true,
		// Regrouped batches of up to 400 views; the aggregator folds ten at a time.
		depth:          depthAlarm{1000, 5, 3, "over 1,000 beacon batches have waited for 15 minutes: is the RUM aggregator failing or throttled?"},
		description:    "SQS FIFO queue carrying regrouped beacons to the RUM aggregator",
		dlqDescription: "Beacons that failed every attempt",
	})
	newQueueAlarms(c, s.alarmTopic, beacons, batches)
	return &rumPipeline{c: c, s: s, beacons: beacons, batches: batches}
}

// workQueues returns the beacon and rum queues.
func (p *rumPipeline) workQueues() []*workQueue { return []*workQueue{p.beacons, p.batches} }

// addFunctions creates the rebatcher, fed by the beacon queue, and the aggregator, fed by the
// rum queue.
func (p *rumPipeline) addFunctions(fns *functionFactory) {
	batcher := fns.goFunction(p.c, "rum-batcher", goFunctionProps{
		description: "openvitals RUM rebatcher: regroups beacons per website for the aggregator",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(rumBatcherTimeoutSeconds)),
	})
	p.batches.queue.GrantSendMessages(batcher)
	p.beacons.feed(batcher, awslambdaeventsources.SqsEventSourceProps{
		BatchSize:         jsii.Number(rumBatcherBatchSize),
		MaxBatchingWindow: awscdk.Duration_Seconds(jsii.Number(rumBatcherWindowSeconds)),
	})

	aggregator := fns.goFunction(p.c, "rum-aggregator", goFunctionProps{
		description: "openvitals RUM aggregator: folds beacons into daily rollups per page and country",
		memoryMB:    rumAggregatorMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(rumAggregatorTimeoutSeconds)),
	})
	// Reads the rollups and writes them back merged (and its dedupe markers).
	p.s.data.table.GrantReadWriteData(aggregator)
	p.batches.feed(aggregator, awslambdaeventsources.SqsEventSourceProps{BatchSize: jsii.Number(rumAggregatorBatchSize)})
}
