package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// notifierTimeoutSeconds bounds one batch: each channel's attempt takes at most 10 seconds,
// and the messages of a batch are delivered together.
const notifierTimeoutSeconds = 30

// notifyVisibilityTimeoutSeconds is six times the notifier's timeout, as AWS advises for SQS
// event sources. Retries are new, delayed messages; the visibility only covers a notifier
// that stopped.
const notifyVisibilityTimeoutSeconds = 6 * notifierTimeoutSeconds

// notifyBatchSize is how many notifications one invocation delivers.
const notifyBatchSize = 10

// notifyPipeline delivers events: the audit, multistep and user-experience workers record
// them and queue them (the API queues channel tests), the notifier sends them to the
// websites' webhooks, Slack and email, retrying failed channels for 24 hours.
type notifyPipeline struct {
	oneQueuePipeline
	// notifier is the notifier, once addFunctions has created it.
	notifier awslambda.Function
}

// newNotifyPipeline creates the notification queue, its dead-letter queue and their alarms
// under scope/id; addFunctions adds the notifier.
func newNotifyPipeline(scope constructs.Construct, id string, s *shared) *notifyPipeline {
	p := newOneQueuePipeline(scope, id, s, queueSpec{"notify", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(notifyVisibilityTimeoutSeconds)),
		// A notification takes seconds; retries wait in the queue on purpose (delayed), so
		// only a long backlog of visible messages is a problem.
		depth:          depthAlarm{100, 5, 3, "notifications have piled up for 15 minutes: is the notifier failing or throttled?"},
		description:    "SQS queue feeding the notifier",
		dlqDescription: "Notifications whose channel failed for 24 hours, or that could not be read",
	}})
	return &notifyPipeline{oneQueuePipeline: p}
}

// addFunctions creates the notifier, fed by the notification queue.
func (p *notifyPipeline) addFunctions(fns *functionFactory) {
	env := map[string]*string{envCredentialsKeySecret: p.s.credentialsKey.SecretArn()}
	if p.s.emailFrom != "" {
		env["OPENVITALS_EMAIL_FROM"] = jsii.String(p.s.emailFrom)
	}
	p.notifier = fns.goFunction(p.c, "notifier", goFunctionProps{
		description: "openvitals notifier: delivers events to webhooks, Slack and email",
		memoryMB:    defaultMemoryMB,
		timeout:     awscdk.Duration_Seconds(jsii.Number(notifierTimeoutSeconds)),
		environment: env,
	})
	// Reads events and channels, records deliveries.
	p.s.data.table.GrantReadWriteData(p.notifier)
	// Opens the sealed channel URLs and secrets.
	p.s.credentialsKey.GrantRead(p.notifier, nil)
	// Queues a failed channel's retry to its own queue.
	p.queue.queue.GrantSendMessages(p.notifier)
	if p.s.emailFrom != "" {
		stack := awscdk.Stack_Of(p.c)
		var identities []*string
		for _, identity := range sesIdentities(p.s.emailFrom) {
			identities = append(identities, stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("ses"), Resource: jsii.String("identity"), ResourceName: jsii.String(identity),
			}))
		}
		p.notifier.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:SendEmail"),
			Resources: &identities,
		}))
	}
	p.queue.feed(p.notifier, awslambdaeventsources.SqsEventSourceProps{
		BatchSize: jsii.Number(notifyBatchSize),
		// Deliver at once: the goal is seconds from a change to its webhook.
		MaxBatchingWindow: awscdk.Duration_Seconds(jsii.Number(0)),
	})
}

// setAPIURL gives the notifier the API's URL, for the links in notifications.
func (p *notifyPipeline) setAPIURL(url *string) {
	p.notifier.AddEnvironment(jsii.String("OPENVITALS_API_URL"), url, nil)
}

// sesIdentities are the SES identities that may send as from: the address itself and its
// domain (either may be the verified one).
func sesIdentities(from string) []string {
	_, domain, _ := strings.Cut(from, "@")
	return []string{from, domain}
}
