package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Sizes of the multistep worker.
const (
	// multistepWorkerMemoryMB: one Chromium playing one journey (no Lighthouse, no Node).
	multistepWorkerMemoryMB = 2048
	// multistepWorkerTimeoutMinutes: a run is stopped after 3 minutes, which leaves time to
	// start Chromium and record the outcome and screenshot.
	multistepWorkerTimeoutMinutes = 5
	// multistepVisibilityTimeoutMinutes is how long a received multistep message stays
	// hidden: six times the worker's timeout, as for the audit queue.
	multistepVisibilityTimeoutMinutes = 6 * multistepWorkerTimeoutMinutes
)

// multistepPipeline plays the scripted journeys: the scheduler and the API queue one message
// per run, the multistep worker (Chromium driven by go-rod, a container function of the
// browser image) plays it and records the outcome.
type multistepPipeline struct {
	oneQueuePipeline
}

// newMultistepPipeline creates the multistep queue, its dead-letter queue and their alarms
// under scope/id; addFunctions adds the worker.
func newMultistepPipeline(scope constructs.Construct, id string, s *shared) *multistepPipeline {
	// A message fails only when the worker could not record the run, or timed out (a journey
	// that fails a step is a completed message: the run records the failure); one that keeps
	// failing is parked rather than replayed for ever.
	p := newOneQueuePipeline(scope, id, s, queueSpec{"multistep", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(multistepVisibilityTimeoutMinutes)),
		// A run takes at most three minutes.
		depth:          depthAlarm{1, 60, 6, "multistep runs have waited for 6 hours: raise multistepMaxConcurrency, or look at the multistep worker's errors"},
		description:    "SQS queue feeding the multistep worker",
		dlqDescription: "Multistep runs whose message failed every attempt",
	}})
	return &multistepPipeline{oneQueuePipeline: p}
}

// addFunctions creates the multistep worker, fed by the multistep queue.
func (p *multistepPipeline) addFunctions(fns *functionFactory) {
	worker := fns.browserFunction(p.c, multistepWorkerFunction, browserFunctionProps{
		description: "openvitals multistep worker: plays one scripted journey per message in headless Chromium",
		memoryMB:    multistepWorkerMemoryMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(multistepWorkerTimeoutMinutes)),
		environment: map[string]*string{"OPENVITALS_CHROMIUM_BIN": jsii.String(imageChromium)},
	})
	// Records the run (testing, then completed or failed) and a screenshot of a failure.
	p.s.data.table.GrantReadWriteData(worker)
	// Queues the events its results cause to the notifier.
	p.s.notifications.queue.GrantSendMessages(worker)
	p.s.data.bucket.GrantPut(worker, nil)
	// One run per invocation: two journeys at once would skew each other's timings, and a
	// failure is retried alone.
	p.queue.feedOneAtATime(worker, float64(p.s.multistepMaxConcurrency))
}
