package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// shared holds what every pipeline may use: the settings, the data, the secrets and the alarm
// topic.
type shared struct {
	settings
	data *data
	// cruxKey holds the Chrome UX Report API key, credentialsKey the key that encrypts the
	// stored Search Console credentials.
	cruxKey, credentialsKey awssecretsmanager.Secret
	alarmTopic              awssns.Topic
	// notifications is the queue the workers send events to (the notify pipeline's).
	notifications *workQueue
}

// queuePipeline is a pipeline that owns work queues. Every function gets every queue's URL,
// so a pipeline creates its queues (and their alarms) when constructed, and its functions
// once every queue exists.
type queuePipeline interface {
	workQueues() []*workQueue
	addFunctions(fns *functionFactory)
}

// pipelineBase is what every pipeline holds: its construct, what the pipelines share and its
// work queues, which newPipelineBase creates with their dead-letter queues and alarms.
type pipelineBase struct {
	c      constructs.Construct
	s      *shared
	queues []*workQueue
}

// queueSpec names a work queue of a pipeline and says how it differs from the others.
type queueSpec struct {
	name  string
	props queueProps
}

// newPipelineBase creates the construct scope/id and in it a work queue per spec, each with
// its dead-letter queue, and their alarms.
func newPipelineBase(scope constructs.Construct, id string, s *shared, specs ...queueSpec) pipelineBase {
	p := pipelineBase{c: constructs.NewConstruct(scope, jsii.String(id)), s: s}
	for _, spec := range specs {
		p.queues = append(p.queues, newWorkQueue(p.c, spec.name, spec.props))
	}
	newQueueAlarms(p.c, s.alarmTopic, p.queues...)
	return p
}

// oneQueuePipeline is a pipeline of one work queue, which feeds its worker.
type oneQueuePipeline struct {
	pipelineBase
	queue *workQueue
}

// newOneQueuePipeline creates the construct scope/id and in it the work queue of spec, as
// newPipelineBase does.
func newOneQueuePipeline(scope constructs.Construct, id string, s *shared, spec queueSpec) oneQueuePipeline {
	p := newPipelineBase(scope, id, s, spec)
	return oneQueuePipeline{pipelineBase: p, queue: p.queues[0]}
}

// workQueues returns the pipeline's work queues, in the order of its specs.
func (p *pipelineBase) workQueues() []*workQueue { return p.queues }

// openvitalsStack is the synthesizable stack and what was deployed in it.
type openvitalsStack struct {
	stack awscdk.Stack
	// functions are the deployed functions by directory name under functions/.
	functions map[string]awslambda.Function
	// queues are every pipeline's work queues.
	queues []*workQueue
}

// newOpenvitalsStack creates the whole openvitals deployment: the shared data, secrets and
// alarm topic, then one construct per pipeline (purges, lab audits, multistep runs, the daily
// fan-out, user-experience data, RUM, notifications), the HTTP API and the daily schedules.
// Each function gets only the access its code needs.
func newOpenvitalsStack(scope constructs.Construct, id string, props *openvitalsStackProps) (o *openvitalsStack, err error) {
	cfg, err := resolveSettings(scope, props)
	if err != nil {
		return nil, err
	}
	defer recoverBootstrapError(&o, &err)
	stack := awscdk.NewStack(scope, &id, &cfg.stackProps)
	s := &shared{
		settings:       cfg,
		data:           newData(stack, "Storage", cfg.reportRetentionDays, cfg.rumRetentionDays),
		cruxKey:        newCruxAPIKey(stack, "CruxApiKey"),
		credentialsKey: newCredentialsKey(stack, "CredentialsKey"),
		alarmTopic:     newAlarmTopic(stack, "Alarms", cfg.alarmEmail),
	}
	s.data.exports = newExports(stack, "Exports", cfg.exportRetentionDays, cfg.exportTables)
	// The notify pipeline first: the workers of the others queue events to it.
	notify := newNotifyPipeline(stack, "Notify", s)
	s.notifications = notify.queue
	purge := newPurgePipeline(stack, "Purge", s)
	audit := newAuditPipeline(stack, "Audit", s)
	multistep := newMultistepPipeline(stack, "Multistep", s)
	ux := newUXPipeline(stack, "Ux", s)
	rum := newRUMPipeline(stack, "Rum", s)
	daily := scheduledQueues{audits: audit.queue, runs: multistep.queue, ux: ux.queue, purges: purge.queue}
	fanout := newFanoutPipeline(stack, "Fanout", s, daily)
	daily.fanout = fanout.queue

	// Every function gets every queue's URL: all the queues first, then the functions.
	var queues []*workQueue
	pipelines := []queuePipeline{purge, audit, multistep, fanout, ux, rum, notify}
	for _, p := range pipelines {
		queues = append(queues, p.workQueues()...)
	}
	fns := newFunctionFactory(cfg, sharedEnvironment(s.data, queues))
	for _, p := range pipelines {
		p.addFunctions(fns)
	}
	api := newAPI(stack, "Api", fns, apiDeps{shared: s, purges: purge.queue, audits: audit.queue, runs: multistep.queue, beacons: rum.beacons, notifications: notify.queue, ux: ux.queue})
	notify.setAPIURL(api.url)
	scheduler := newSchedules(stack, "Schedules", s, fns, daily)
	// Every function exists now: a purge passes again for as long as the longest can run.
	purge.settleAfter(fns.longestTimeout, scheduler)
	addOutputs(stack, s, api, queues)
	return &openvitalsStack{stack: stack, functions: fns.deployed, queues: queues}, nil
}

// recoverBootstrapError turns the functionFactory's panic over a missing binary into the
// error newOpenvitalsStack returns; any other panic goes on.
func recoverBootstrapError(o **openvitalsStack, err *error) {
	r := recover()
	if r == nil {
		return
	}
	be, ok := r.(bootstrapError)
	if !ok {
		panic(r)
	}
	*o, *err = nil, be.error
}
