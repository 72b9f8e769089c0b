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
// is a problem: at least threshold messages in each of periods consecutive periods. A queue
// that drains is healthy however deep it gets for a while: each threshold is a backlog that
// outlives the time its work should take.
type depthAlarm struct {
	threshold     float64
	periodMinutes float64
	periods       float64
	// why tells the operator what the alarm means and what to do.
	why string
}

// ageAlarm says when the age of a queue's oldest message is a problem: at least hours in each
// of periods consecutive periods of periodMinutes.
type ageAlarm struct {
	hours         float64
	periodMinutes float64
	periods       float64
	// why tells the operator what the alarm means and what to do.
	why string
}

// dlqAlarmThreshold: any message in a dead-letter queue is work that failed every attempt.
const dlqAlarmThreshold = 1

// newAlarmTopic creates the topic every alarm notifies (construct id/Topic), with alarmEmail
// subscribed unless it is "".
func newAlarmTopic(scope constructs.Construct, id string, alarmEmail string) awssns.Topic {
	c := constructs.NewConstruct(scope, jsii.String(id))
	// Not encrypted: CloudWatch can only publish to an encrypted topic through a customer
	// managed KMS key, and an alarm carries nothing secret (a queue name and a count).
	topic := awssns.NewTopic(c, jsii.String("Topic"), &awssns.TopicProps{
		DisplayName: jsii.String("openvitals alarms"),
	})
	if alarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(alarmEmail), nil))
	}
	return topic
}

// newQueueAlarms creates, under scope/Alarms, for each of a pipeline's queues an alarm on its
// depth (construct id <Name>Depth, as the queue's depthAlarm says), one on its dead-letter
// queue's (<Name>DLQ) and, when its ageAlarm is set, one on the age of its oldest message
// (<Name>Age). Each notifies topic when it fires and when it clears.
func newQueueAlarms(scope constructs.Construct, topic awssns.ITopic, queues ...*workQueue) {
	c := constructs.NewConstruct(scope, jsii.String("Alarms"))
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
		d := q.props.depth
		if d.threshold == 0 {
			panic("no depth alarm settings for queue " + q.name)
		}
		add(capitalize(q.name)+"Depth", q.queue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(d.periodMinutes)),
			Statistic: jsii.String("Maximum"),
		}), d.threshold, d.periods, "openvitals "+q.name+" queue: "+d.why)
		if a := q.props.oldest; a != nil {
			add(capitalize(q.name)+"Age", q.queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{
				Period:    awscdk.Duration_Minutes(jsii.Number(a.periodMinutes)),
				Statistic: jsii.String("Maximum"),
			}), a.hours*3600, a.periods, "openvitals "+q.name+" queue: "+a.why)
		}
		add(capitalize(q.name)+"DLQ", q.dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period:    awscdk.Duration_Minutes(jsii.Number(5)),
			Statistic: jsii.String("Maximum"),
		}), dlqAlarmThreshold, 1, fmt.Sprintf(
			"openvitals %s dead-letter queue: messages failed %d times; look at the consumer's logs, then redrive them from the console", q.name, maxReceiveCount))
	}
}
