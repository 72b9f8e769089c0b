package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// schedulerTimeoutMinutes: starting a fan-out is a message per daily job; the sweeps of lost
// purges and overdue work take longer when many wait.
const schedulerTimeoutMinutes = 5

// scheduledQueues are the queues the daily work goes to: the fan-out worker fills audits, runs
// and ux; the scheduler starts the fan-out, queues lost purges again and sweeps the overdue
// audits and runs.
type scheduledQueues struct {
	audits, runs, ux, purges, fanout *workQueue
}

// newSchedules creates, under scope/id, the scheduler function and one EventBridge rule per
// daily job, each at its own hour, whose event names the job (the scheduler starts the
// fan-out of the jobs an event names), and the sweep rule, whose event names only the sweep of
// overdue work that follows every invocation. A job's fan-out queues nothing it queued already
// that day, and a sweep changes only overdue work, so EventBridge may retry. It returns the
// scheduler.
func newSchedules(scope constructs.Construct, id string, s *shared, fns *functionFactory, q scheduledQueues) awslambda.Function {
	c := constructs.NewConstruct(scope, jsii.String(id))
	scheduler := fns.goFunction(c, "scheduler", goFunctionProps{
		description: "openvitals scheduler: starts the daily fan-out of the audits, multistep runs and user-experience data collection; ends or queues again overdue series tests and runs",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(schedulerTimeoutMinutes)),
	})
	// Reads the pending purges and the overdue work, and ends or queues the latter again.
	s.data.table.GrantReadWriteData(scheduler)
	// One message starts each daily job's fan-out.
	q.fanout.queue.GrantSendMessages(scheduler)
	// Sending to the audit and multistep queues queues overdue series tests and runs again,
	// and its grant includes reading the queues' attributes, which give the deadlines.
	for _, wq := range []*workQueue{q.audits, q.runs} {
		wq.queue.GrantSendMessages(scheduler)
	}
	// It also queues again the purges whose message was lost (their markers are in the table).
	q.purges.queue.GrantSendMessages(scheduler)

	// The job names are the scheduler's (internal/schedule).
	newDailyRule(c, "DailySchedule", scheduler, "audits", "the daily audits", s.dailyHourUTC)
	newDailyRule(c, "MultistepSchedule", scheduler, "multistep", "the daily multistep runs", s.multistepHourUTC)
	newDailyRule(c, "UxSchedule", scheduler, "ux", "the daily user-experience data collection", s.uxHourUTC)
	// Exports of the day before, once it is over; retention passes after them.
	newDailyRule(c, "ExportSchedule", scheduler, "exports", "the daily Parquet exports", exportHourUTC)
	newDailyRule(c, "RetentionSchedule", scheduler, "retention", "the daily retention passes", retentionHourUTC)

	// The series tests and multistep runs still without an outcome after their queue's
	// deadline (read from the queues' own attributes, which sending to them grants) are ended
	// or queued again by every invocation; this rule invokes it between the daily ones.
	every := sweepPeriod(q.audits, q.runs)
	newRule(c, "SweepSchedule", scheduler, "sweep",
		fmt.Sprintf("openvitals: end or queue again the work overdue in its queue, every %d minutes", int(every.Minutes())),
		awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(every.Minutes()))))
	return scheduler
}

// exportHourUTC and retentionHourUTC are the UTC hours of the daily exports (of the day
// before, whose audits and collections are over) and retention passes.
const (
	exportHourUTC    = 1
	retentionHourUTC = 2
)

// sweepsPerDeadline is how many sweeps of overdue work run within the shortest deadline of the
// swept queues: work ends or is queued again at most a sixth of its deadline late.
const sweepsPerDeadline = 6

// sweepPeriod is how often overdue work is swept: a sweepsPerDeadline-th of the shortest
// deadline of the queues, in whole minutes.
func sweepPeriod(queues ...*workQueue) time.Duration {
	shortest := queues[0].deadline()
	for _, q := range queues[1:] {
		shortest = min(shortest, q.deadline())
	}
	return max(time.Minute, (shortest / sweepsPerDeadline).Truncate(time.Minute))
}

// newDailyRule creates a rule invoking scheduler at hour:00 UTC every day with an event naming
// job, shaped as EventBridge's scheduled events are.
func newDailyRule(scope constructs.Construct, id string, scheduler awslambda.IFunction, job, what string, hour int) {
	newRule(scope, id, scheduler, job, fmt.Sprintf("openvitals: queue %s at %02d:00 UTC", what, hour),
		awsevents.Schedule_Cron(&awsevents.CronOptions{
			Minute: jsii.String("0"),
			Hour:   jsii.String(strconv.Itoa(hour)),
		}))
}

// newRule creates a rule invoking scheduler on schedule with an event naming job, shaped as
// EventBridge's scheduled events are.
func newRule(scope constructs.Construct, id string, scheduler awslambda.IFunction, job, description string, schedule awsevents.Schedule) {
	awsevents.NewRule(scope, jsii.String(id), &awsevents.RuleProps{
		Description: jsii.String(description),
		Schedule:    schedule,
		Targets: &[]awsevents.IRuleTarget{
			awseventstargets.NewLambdaFunction(scheduler, &awseventstargets.LambdaFunctionProps{
				Event: awsevents.RuleTargetInput_FromObject(map[string]any{
					"source":      "openvitals.schedule",
					"detail-type": "Scheduled Event",
					"time":        awsevents.EventField_Time(),
					"detail":      map[string]any{"jobs": []string{job}},
				}),
				RetryAttempts: jsii.Number(2),
				MaxEventAge:   awscdk.Duration_Hours(jsii.Number(2)),
			}),
		},
	})
}
