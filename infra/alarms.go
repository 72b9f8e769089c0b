package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// depthAlarm says when a queue's depth (messages visible, the largest count in each period)
// is a problem: at least Threshold messages in each of Periods consecutive periods.
type depthAlarm struct {
	Threshold     float64
	PeriodMinutes float64
	Periods       float64
	// Why tells the operator what the alarm means and what to do.
	Why string
}

// QueueDepthAlarms say, per work queue (WorkQueue.Name), how deep a backlog may grow before an
// alarm. A queue that drains is healthy however deep it gets for a while: each threshold is a
// backlog that outlives the time its work should take.
var QueueDepthAlarms = map[string]depthAlarm{
	// A purge takes seconds.
	"purge": {1, 5, 6, "purges have waited for 30 minutes: is the purge worker failing or throttled?"},
	// The daily burst of audits drains at about one audit a minute per worker.
	"audit": {1, 60, 12, "audits have waited for 12 hours: raise auditMaxConcurrency, or look at the audit worker's errors"},
	// A run takes at most three minutes.
	"multistep": {1, 60, 6, "multistep runs have waited for 6 hours: raise multistepMaxConcurrency, or look at the multistep worker's errors"},
	// Beacons arrive all the time; the rebatcher takes up to 2,000 every 30 seconds.
	"beacon": {50000, 5, 3, "over 50,000 beacons have waited for 15 minutes: is the RUM rebatcher failing or throttled?"},
	// Regrouped batches of up to 400 views; the aggregator folds ten at a time.
	"rum": {1000, 5, 3, "over 1,000 beacon batches have waited for 15 minutes: is the RUM aggregator failing or throttled?"},
	// One message per website and day, one collector at a time.
	"field": {1, 60, 6, "field data collections have waited for 6 hours: look at the field collector's errors"},
}

// DLQAlarmThreshold: any message in a dead-letter queue is work that failed every attempt.
const DLQAlarmThreshold = 1

// newAlarms creates the alarm topic (with alarmEmail subscribed unless it is "") and, for each
// work queue, an alarm on its depth and one on its dead-letter queue's. Each alarm notifies the
// topic when it fires and when it clears.
func newAlarms(scope constructs.Construct, id string, queues []WorkQueue, alarmEmail string) awssns.Topic {
	c := constructs.NewConstruct(scope, jsii.String(id))
	// Not encrypted: CloudWatch can only publish to an encrypted topic through a customer
	// managed KMS key, and an alarm carries nothing secret (a queue name and a count).
	topic := awssns.NewTopic(c, jsii.String("Topic"), &awssns.TopicProps{
		DisplayName: jsii.String("openvitals alarms"),
	})
	if alarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(alarmEmail), nil))
	}
	action := awscloudwatchactions.NewSnsAction(topic)

	add := func(alarmID string, metric awscloudwatch.Metric, threshold, periods float64, description string) {
		alarm := metric.CreateAlarm(c, jsii.String(alarmID), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String(description),
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(periods),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			// SQS stops sending metrics for a queue idle for hours: no data is an empty queue.
			TreatMissingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		alarm.AddAlarmAction(action)
		alarm.AddOkAction(action)
	}
	for _, q := range queues {
		d, ok := QueueDepthAlarms[q.Name]
		if !ok {
			panic("no depth alarm settings for queue " + q.Name)
		}
		add(alarmID(q.Name, "Depth"), q.Queue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(d.PeriodMinutes)),
			Statistic: jsii.String("Maximum"),
		}), d.Threshold, d.Periods, "openvitals "+q.Name+" queue: "+d.Why)
		add(alarmID(q.Name, "DLQ"), q.DLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(5)),
			Statistic: jsii.String("Maximum"),
		}), DLQAlarmThreshold, 1, fmt.Sprintf(
			"openvitals %s dead-letter queue: messages failed %d times; look at the consumer's logs, then redrive them from the console", q.Name, MaxReceiveCount))
	}
	return topic
}

// alarmID is the construct id of a queue's alarm: "AuditDepth", "AuditDLQ".
func alarmID(queue, what string) string {
	return string(queue[0]-'a'+'A') + queue[1:] + what
}
