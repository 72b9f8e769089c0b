package main

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// auditRuns is OPENVITALS_AUDIT_RUNS: Lighthouse runs per audit, of which the median is kept.
const auditRuns = 3

// Sizes of the audit worker.
const (
	// defaultAuditMemoryMB is the audit worker's memory unless auditMemoryMB says otherwise.
	// More memory is more CPU (1 vCPU at 1,769 MB): at 3,008 MB applied throttling measured
	// desktop LCP with a spread of about 4 % a run, at 2,048 MB about 11 %, for 25 % less a
	// month (BENCHMARKS.md, "Measurement methods, in a function's share"). 3008 MB is also the
	// most a new AWS account may give a function until its Lambda quotas are raised.
	defaultAuditMemoryMB = 3008
	// minAuditMemoryMB: Chromium and Lighthouse peaked at 1.3 GiB (the benchmark's pages);
	// below 1,769 MB the function has less than one vCPU, and the benchmark Lighthouse
	// calibrates the CPU slowdown with read 777 where a vCPU reads 2,000 or more.
	minAuditMemoryMB = 2048
	// maxAuditMemoryMB is Lambda's largest.
	maxAuditMemoryMB = 10240
	// auditWorkerTmpMB: /tmp holds each audit's Chromium profile and reports.
	auditWorkerTmpMB = 1024
	// auditWorkerTimeoutMinutes is the longest Lambda allows. Three Lighthouse runs,
	// Navigation Timing and html-validate take about a minute, a slow page several.
	auditWorkerTimeoutMinutes = 15
	// auditVisibilityTimeoutMinutes is how long a received audit message stays hidden: six
	// times the worker's timeout, as AWS advises for SQS event sources, so that the event
	// source's own retries (after throttling, say) finish before SQS hands the message out
	// again.
	auditVisibilityTimeoutMinutes = 6 * auditWorkerTimeoutMinutes
)

// auditPipeline runs the lab audits: the fan-out worker and the API queue one message per
// page and device, the audit worker (Lighthouse in Chromium, a container function of the browser image)
// audits it and records the result.
type auditPipeline struct {
	oneQueuePipeline
}

// newAuditPipeline creates the audit queue, its dead-letter queue and their alarms under
// scope/id; addFunctions adds the worker.
func newAuditPipeline(scope constructs.Construct, id string, s *shared) *auditPipeline {
	// An audit that fails for a reason a retry could pass (a timeout, Chromium crashing,
	// Lighthouse's own runtime errors) is retried, then parked; one that would fail every
	// attempt alike (the host does not resolve, the document answers 400 or more, the guard
	// refuses it) is final at once. Either way its last error is already on the page (the
	// worker records it on every failure).
	p := newOneQueuePipeline(scope, id, s, queueSpec{"audit", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(auditVisibilityTimeoutMinutes)),
		// The day's audits are sized to drain within auditWindowHours: a queue never empty for
		// a whole day is a backlog that carries over.
		depth: depthAlarm{1, 60, 24, "audits have waited at every moment of a whole day: the audit workers fall short of the day's audits " +
			"(raise auditMaxConcurrency, or set auditsPerDay to what is audited), or look at the audit worker's errors"},
		// The shortfall, as soon as the day shows it: the oldest audit waited longer than the
		// day allows.
		oldest: &ageAlarm{float64(s.auditWindowHours), 5, 3, fmt.Sprintf(
			"an audit has waited over %d hours (auditWindowHours): the audit workers (%d at once) fall short of the day's audits; "+
				"raise auditMaxConcurrency, or set auditsPerDay to what is audited, and redeploy", s.auditWindowHours, s.auditConcurrency)},
		// A backlog outlives SQS's default of 4 days long enough to be acted on.
		retentionDays:  maxRetentionDays,
		description:    "SQS queue feeding the audit worker",
		dlqDescription: "Audits that failed every attempt for a reason a retry could pass (the page shows the last error)",
	}})
	if warning := s.auditShortfall(); warning != "" {
		awscdk.Annotations_Of(p.c).AddWarningV2(jsii.String("openvitals:auditShortfall"), jsii.String(warning))
	}
	return &auditPipeline{oneQueuePipeline: p}
}

// addFunctions creates the audit worker, fed by the audit queue.
func (p *auditPipeline) addFunctions(fns *functionFactory) {
	worker := fns.browserFunction(p.c, auditWorkerFunction, browserFunctionProps{
		description: "openvitals audit worker: Lighthouse in headless Chromium, one page and device per message",
		memoryMB:    float64(p.s.auditMemoryMB),
		tmpMB:       auditWorkerTmpMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(auditWorkerTimeoutMinutes)),
		environment: map[string]*string{
			"OPENVITALS_AUDIT_RUNS":        jsii.String(strconv.Itoa(auditRuns)),
			"OPENVITALS_NODE":              jsii.String(imageNode),
			"OPENVITALS_LIGHTHOUSE_RUNNER": jsii.String(imageRunner),
			"OPENVITALS_CHROMIUM_BIN":      jsii.String(imageChromium),
			// Opens the sealed secrets of the test profiles it audits with.
			envCredentialsKeySecret: p.s.credentialsKey.SecretArn(),
		},
	})
	p.s.credentialsKey.GrantRead(worker, nil)
	p.s.data.table.GrantReadWriteData(worker)
	// Queues the events its results cause to the notifier.
	p.s.notifications.queue.GrantSendMessages(worker)
	p.s.data.bucket.GrantPut(worker, nil)
	// An audit replaces what an earlier one stored at its report's key (the day's rerun, a
	// retry): it deletes that one's images and pieces it has not, and nothing but the lab
	// audits' objects (internal/artifact's keys).
	for _, keys := range []string{"*/lighthouse/*", "*/testseries/*", "*/experiments/*"} {
		p.s.data.bucket.GrantDelete(worker, jsii.String(keys))
	}
	// Reads two days' stored reports back for a regression's cause.
	p.s.data.bucket.GrantRead(worker, nil)
	// One message per invocation: a worker audits one page at a time (two Lighthouse runs at
	// once skew each other's timings), and a failure is retried alone. As many at once as
	// the day's audits need (auditWorkers), within auditMaxConcurrency: the event source's
	// maximum concurrency, not a reservation, which a new account's concurrency limit would
	// refuse (see functions.go).
	p.queue.feedOneAtATime(worker, float64(p.s.auditConcurrency))
}
