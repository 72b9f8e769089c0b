package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Sizes of the RUM rebatcher and aggregator.
const (
	// rumBatcherTimeoutSeconds: the rebatcher appends a batch's views to the websites' logs
	// in a few requests.
	rumBatcherTimeoutSeconds = 60
	// rumBatcherBatchSize and rumBatcherWindowSeconds: the rebatcher's event source hands over
	// up to this many beacons (or 6 MB of them), waiting up to this long to gather them, so
	// that a log entry covers a minute of a website's views instead of one.
	rumBatcherBatchSize     = 10000
	rumBatcherWindowSeconds = 60
	// beaconVisibilityTimeoutSeconds is six times the rebatcher's timeout, as AWS advises,
	// plus its batching window.
	beaconVisibilityTimeoutSeconds = 6*rumBatcherTimeoutSeconds + rumBatcherWindowSeconds
	// rumFlushDelaySeconds is how long the rum queue holds a request to fold a website's log:
	// the rebatcher sends one with each append, and those of most of this period share a
	// deduplication ID, so that a website is compacted about once in it. A view is in the
	// reports within the batching window and this delay, four minutes.
	rumFlushDelaySeconds = 180

	// rumAggregatorMemoryMB: a compaction holds a day's object (up to some 150 MB for a website
	// of 100 million views a month) and decodes the tables its views touch; CPU grows with
	// memory too.
	rumAggregatorMemoryMB = 1024
	// rumAggregatorTimeoutSeconds: a compaction takes seconds; one after an outage folds its
	// backlog in passes and, near this, leaves the rest to its request's next delivery.
	rumAggregatorTimeoutSeconds = 120
	// rumAggregatorBatchSize is how many requests one invocation takes (the most a FIFO event
	// source allows).
	rumAggregatorBatchSize = 10
	// rumVisibilityTimeoutSeconds is six times the aggregator's timeout, as AWS advises.
	rumVisibilityTimeoutSeconds = 6 * rumAggregatorTimeoutSeconds
)

// rumPipeline folds real-user page views into each website's day objects: the public collect
// endpoint (the rum function, behind its function URL and the API) queues each beacon on the
// beacon queue, the rebatcher appends each website's views to its log and asks the aggregator,
// through the delayed FIFO rum queue, to fold it, and the aggregator compacts the log.
type rumPipeline struct {
	pipelineBase
	// beacons carries beacons from collect (one message per invocation) to the rebatcher,
	// which takes it in large batches.
	beacons *workQueue
	// batches carries the rebatcher's requests to fold a website's log to the aggregator. It
	// is a FIFO queue: its MessageGroupId is the website (one consumer compacts a website at a
	// time), and each message carries a MessageDeduplicationId, so requests sent within one
	// period are delivered once.
	batches *workQueue
}

// newRUMPipeline creates the beacon and rum queues, their dead-letter queues and their alarms
// under scope/id; addFunctions adds the rebatcher and the aggregator.
func newRUMPipeline(scope constructs.Construct, id string, s *shared) *rumPipeline {
	p := newPipelineBase(scope, id, s, queueSpec{"beacon", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(beaconVisibilityTimeoutSeconds)),
		// Beacons arrive all the time; the rebatcher takes them every minute.
		depth:          depthAlarm{50000, 5, 3, "over 50,000 beacons have waited for 15 minutes: is the RUM rebatcher failing or throttled?"},
		description:    "SQS queue carrying beacons from collect to the RUM rebatcher",
		dlqDescription: "Beacons the rebatcher could not pass on",
	}}, queueSpec{"rum", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(rumVisibilityTimeoutSeconds)),
		fifo:       true,
		delay:      awscdk.Duration_Seconds(jsii.Number(rumFlushDelaySeconds)),
		// At most a request per website and period; the aggregator takes ten at a time.
		depth:          depthAlarm{1000, 5, 3, "over 1,000 requests to fold websites' real-user logs have waited for 15 minutes: is the RUM aggregator failing or throttled?"},
		description:    "SQS FIFO queue carrying the rebatcher's requests to fold a website's log of page views to the RUM aggregator",
		dlqDescription: "Requests to fold a website's log that failed every attempt (its log keeps the views: redrive them)",
	}})
	return &rumPipeline{pipelineBase: p, beacons: p.queues[0], batches: p.queues[1]}
}

// addFunctions creates the rebatcher, fed by the beacon queue, and the aggregator, fed by the
// rum queue.
func (p *rumPipeline) addFunctions(fns *functionFactory) {
	batcher := fns.goFunction(p.c, "rum-batcher", goFunctionProps{
		description: "openvitals RUM rebatcher: appends beacons to each website's log and asks the aggregator to fold it",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(rumBatcherTimeoutSeconds)),
	})
	// Appends log entries (small ones as items, large ones as objects) and sends the requests
	// to fold them (reading the queue's delay first).
	p.s.data.table.GrantWriteData(batcher)
	p.s.data.rumBucket.GrantPut(batcher, nil)
	p.batches.queue.GrantSendMessages(batcher)
	p.beacons.feed(batcher, awslambdaeventsources.SqsEventSourceProps{
		BatchSize:         jsii.Number(rumBatcherBatchSize),
		MaxBatchingWindow: awscdk.Duration_Seconds(jsii.Number(rumBatcherWindowSeconds)),
	})

	aggregator := fns.goFunction(p.c, "rum-aggregator", goFunctionProps{
		description: "openvitals RUM aggregator: compacts each website's log of page views into its day objects",
		memoryMB:    rumAggregatorMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(rumAggregatorTimeoutSeconds)),
		environment: map[string]*string{envRUMRetentionDays: jsii.String(strconv.Itoa(p.s.rumRetentionDays))},
	})
	// Reads the log, its mark, the days' pointers and the months' indexes and writes them;
	// reads and writes the day objects and removes old generations and folded log entries.
	p.s.data.table.GrantReadWriteData(aggregator)
	p.s.data.rumBucket.GrantReadWrite(aggregator, nil)
	p.s.data.rumBucket.GrantDelete(aggregator, nil)
	p.batches.feed(aggregator, awslambdaeventsources.SqsEventSourceProps{BatchSize: jsii.Number(rumAggregatorBatchSize)})
}

// envRUMRetentionDays tells the aggregator how long real-user data is kept, as the RUM
// bucket's lifecycle rule keeps it: it expires the days' pointers and the months' indexes
// with their objects.
const envRUMRetentionDays = "OPENVITALS_RUM_RETENTION_DAYS"
