package main

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// OpenvitalsStackProps configures OpenvitalsStack. Each field left unset is read from the
// CDK context (the Context* keys), else takes its default.
type OpenvitalsStackProps struct {
	awscdk.StackProps

	// FunctionsDir holds one sub-directory per function with its Linux arm64 `bootstrap`,
	// as `make build` writes them. A relative path is relative to infra/. Default
	// DefaultFunctionsDir.
	FunctionsDir string
	// DailyHourUTC is the UTC hour (0 to 23) of the daily audits. Default DefaultDailyHourUTC.
	DailyHourUTC *int
	// MultistepHourUTC and FieldHourUTC are the UTC hours of the daily multistep runs and
	// field-data collection. Default: DailyHourUTC.
	MultistepHourUTC *int
	FieldHourUTC     *int
	// AuditMaxConcurrency is how many audits may run at once, one per worker (2 to 1000).
	// Default DefaultAuditMaxConcurrency.
	AuditMaxConcurrency *int
	// MultistepMaxConcurrency is how many multistep runs may play at once, one per worker
	// (2 to 1000). Default DefaultMultistepMaxConcurrency.
	MultistepMaxConcurrency *int
	// ReportRetentionDays is how long S3 keeps a report or screenshot (MinReportRetentionDays
	// to 3650). Default DefaultReportRetentionDays.
	ReportRetentionDays *int
	// APIThrottleRate and APIThrottleBurst limit each route of the API (requests per second,
	// 1 to MaxThrottleRate and MaxThrottleBurst). Defaults DefaultAPIThrottleRate and
	// DefaultAPIThrottleBurst.
	APIThrottleRate, APIThrottleBurst *int
	// RUMThrottleRate and RUMThrottleBurst limit each public RUM route. Defaults
	// DefaultRUMThrottleRate and DefaultRUMThrottleBurst.
	RUMThrottleRate, RUMThrottleBurst *int
	// TrustViewerCountry makes the RUM function take a beacon's country from the
	// CloudFront-Viewer-Country header: set it only when CloudFront is in front of the API.
	// Default false.
	TrustViewerCountry *bool
	// AlarmEmail, when set, is subscribed to the alarm topic.
	AlarmEmail string
}

// Construct ids of the functions, by directory name under functions/.
var functionIDs = map[string]string{
	"websites":              "Websites",
	"pages":                 "Pages",
	"budgets":               "Budgets",
	"multistep":             "Multistep",
	"lab":                   "Lab",
	"field":                 "Field",
	"rum":                   "Rum",
	"scheduler":             "Scheduler",
	"purge-worker":          "PurgeWorker",
	"rum-aggregator":        "RumAggregator",
	"rum-batcher":           "RumBatcher",
	"field-collector":       "FieldCollector",
	AuditWorkerFunction:     "AuditWorker",
	MultistepWorkerFunction: "MultistepWorker",
}

// Environment variables the stack sets beyond the shared ones (sharedEnvironment).
const (
	// EnvTrustViewerCountry tells the rum function whether CloudFront-Viewer-Country is
	// trustworthy: "true" or "false".
	EnvTrustViewerCountry = "OPENVITALS_TRUST_VIEWER_COUNTRY"
	// EnvCruxAPIKeySecret is the ARN of the secret holding the CrUX API key (empty until the
	// operator puts the key in).
	EnvCruxAPIKeySecret = "OPENVITALS_CRUX_API_KEY_SECRET"
	// EnvCredentialsKeySecret is the ARN of the secret holding the key that encrypts stored
	// Search Console credentials (see newCredentialsKey for its format).
	EnvCredentialsKeySecret = "OPENVITALS_CREDENTIALS_KEY_SECRET"
)

// sharedEnvironment is what every function gets: the generated names of the table and the
// bucket, and every queue's URL. service.FromEnv opens every queue at start (a URL costs no
// call), whether or not the function may use it: a URL grants nothing.
func sharedEnvironment(s *Storage) map[string]*string {
	return map[string]*string{
		"OPENVITALS_TABLE":           s.Table.TableName(),
		"OPENVITALS_BUCKET":          s.Bucket.BucketName(),
		"OPENVITALS_PURGE_QUEUE":     s.PurgeQueue.QueueUrl(),
		"OPENVITALS_AUDIT_QUEUE":     s.AuditQueue.QueueUrl(),
		"OPENVITALS_MULTISTEP_QUEUE": s.MultistepQueue.QueueUrl(),
		"OPENVITALS_RUM_QUEUE":       s.RUMQueue.QueueUrl(),
		"OPENVITALS_BEACON_QUEUE":    s.BeaconQueue.QueueUrl(),
		"OPENVITALS_FIELD_QUEUE":     s.FieldQueue.QueueUrl(),
	}
}

// NewOpenvitalsStack creates the whole openvitals deployment: the shared storage (table,
// bucket, and the purge, audit, multistep, RUM and field queues), the HTTP API with one
// function per endpoint group and the public RUM routes, the daily schedule with its
// scheduler, the audit and multistep workers (container functions of one image with Chromium
// and Lighthouse), the purge worker, the RUM aggregator, the field collector, the secrets of
// the field data, and an alarm on every queue. Each function gets only the access its code
// needs.
func NewOpenvitalsStack(scope constructs.Construct, id string, props *OpenvitalsStackProps) (awscdk.Stack, error) {
	cfg, err := resolveSettings(scope, props)
	if err != nil {
		return nil, err
	}
	var sprops awscdk.StackProps
	if props != nil {
		sprops = props.StackProps
	}
	stack := awscdk.NewStack(scope, &id, &sprops)

	storage := NewStorage(stack, "Storage", StorageProps{ReportRetentionDays: cfg.reportRetentionDays})
	cruxKey := newCruxAPIKey(stack, "CruxApiKey")
	credentialsKey := newCredentialsKey(stack, "CredentialsKey")

	goFunction := func(name, description string, memoryMB float64, timeout awscdk.Duration, extraEnv map[string]*string) awslambda.Function {
		return newGoFunction(stack, functionIDs[name], filepath.Join(cfg.functionsDir, name), goFunctionProps{
			description: description, memoryMB: memoryMB, timeout: timeout,
			environment: withEnv(sharedEnvironment(storage), extraEnv),
		})
	}
	apiTimeout := awscdk.Duration_Seconds(jsii.Number(APITimeoutSeconds))
	apiFunction := func(name, description string, extraEnv map[string]*string) awslambda.Function {
		fn := goFunction(name, description, APIMemoryMB, apiTimeout, extraEnv)
		storage.Table.GrantReadWriteData(fn)
		return fn
	}

	// ---- API ----------------------------------------------------------------------------
	websites := apiFunction("websites", "openvitals API: websites, the Search Console integration and the OpenAPI document",
		map[string]*string{EnvCredentialsKeySecret: credentialsKey.SecretArn()})
	pages := apiFunction("pages", "openvitals API: page settings", nil)
	budgets := apiFunction("budgets", "openvitals API: performance budgets", nil)
	multistep := apiFunction("multistep", "openvitals API: multistep tests and their runs", nil)
	lab := apiFunction("lab", "openvitals API: lab results, opportunities and audits on demand", nil)
	// Deleting a website, a page or a multistep test queues the purge of what it left.
	for _, fn := range []awslambda.Function{websites, pages, multistep} {
		storage.PurgeQueue.GrantSendMessages(fn)
	}
	// The Search Console credential is stored encrypted with this key.
	credentialsKey.GrantRead(websites, nil)
	// Lab serves opportunity details from the stored reports and queues audits on demand.
	storage.Bucket.GrantRead(lab, nil)
	storage.AuditQueue.GrantSendMessages(lab)
	// Multistep queues runs on demand (one test, or every test of a website).
	storage.MultistepQueue.GrantSendMessages(multistep)

	// Field-testing reports only read the RUM rollups.
	field := goFunction("field", "openvitals API: real-user monitoring reports per page and per country", APIMemoryMB, apiTimeout, nil)
	storage.Table.GrantReadData(field)

	// The public RUM routes: the snippet looks the website up, collect checks the beacon
	// against it and queues it.
	rum := goFunction("rum", "openvitals RUM: serves the snippet and collects beacons (public)", APIMemoryMB, apiTimeout,
		map[string]*string{EnvTrustViewerCountry: jsii.String(strconv.FormatBool(cfg.trustViewerCountry))})
	storage.Table.GrantReadData(rum)
	storage.BeaconQueue.GrantSendMessages(rum)

	_, stage := newHTTPAPI(stack, "Api", map[string]awslambda.IFunction{
		"websites": websites, "pages": pages, "budgets": budgets, "multistep": multistep, "lab": lab,
		"field": field, "rum": rum,
	}, cfg.apiThrottle, cfg.rumThrottle)

	// ---- daily audits, multistep runs and field data --------------------------------------
	scheduler := goFunction("scheduler", "openvitals scheduler: queues the daily audits of every page and device, the daily multistep runs and the daily field data collection",
		APIMemoryMB, awscdk.Duration_Minutes(jsii.Number(SchedulerTimeoutMinutes)), nil)
	// Reads websites and pages, and marks what it queued so that a second run the same day
	// queues nothing twice.
	storage.Table.GrantReadWriteData(scheduler)
	storage.AuditQueue.GrantSendMessages(scheduler)
	storage.MultistepQueue.GrantSendMessages(scheduler)
	storage.FieldQueue.GrantSendMessages(scheduler)
	// It also queues again the purges whose message was lost (their markers are in the table).
	storage.PurgeQueue.GrantSendMessages(scheduler)
	// One rule per daily job, each at its own hour; the event names the job. A job queues
	// nothing it queued already that day, so EventBridge may retry.
	for _, r := range []struct {
		id, job, what string
		hour          int
	}{
		{"DailySchedule", "audits", "the daily audits", cfg.dailyHourUTC},
		{"MultistepSchedule", "multistep", "the daily multistep runs", cfg.multistepHourUTC},
		{"FieldSchedule", "field", "the daily field-data collection", cfg.fieldHourUTC},
	} {
		awsevents.NewRule(stack, jsii.String(r.id), &awsevents.RuleProps{
			Description: jsii.String(fmt.Sprintf("openvitals: queue %s at %02d:00 UTC", r.what, r.hour)),
			Schedule: awsevents.Schedule_Cron(&awsevents.CronOptions{
				Minute: jsii.String("0"),
				Hour:   jsii.String(strconv.Itoa(r.hour)),
			}),
			Targets: &[]awsevents.IRuleTarget{
				awseventstargets.NewLambdaFunction(scheduler, &awseventstargets.LambdaFunctionProps{
					Event: awsevents.RuleTargetInput_FromObject(map[string]any{
						"source":      "openvitals.schedule",
						"detail-type": "Scheduled Event",
						"time":        awsevents.EventField_Time(),
						"detail":      map[string]any{"jobs": []string{r.job}},
					}),
					RetryAttempts: jsii.Number(2),
					MaxEventAge:   awscdk.Duration_Hours(jsii.Number(2)),
				}),
			},
		})
	}

	auditWorker := newAuditWorker(stack, functionIDs[AuditWorkerFunction], cfg, sharedEnvironment(storage))
	storage.Table.GrantReadWriteData(auditWorker)
	storage.Bucket.GrantPut(auditWorker, nil)
	// One message per invocation: a worker audits one page at a time (two Lighthouse runs at
	// once skew each other's timings), and a failure is retried alone.
	auditWorker.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.AuditQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(cfg.auditMaxConcurrency)),
	}))

	// ---- multistep runs ------------------------------------------------------------------
	multistepWorker := newMultistepWorker(stack, functionIDs[MultistepWorkerFunction], cfg, sharedEnvironment(storage))
	// Records the run (testing, then completed or failed) and a screenshot of a failure.
	storage.Table.GrantReadWriteData(multistepWorker)
	storage.Bucket.GrantPut(multistepWorker, nil)
	// One run per invocation: two journeys at once would skew each other's timings, and a
	// failure is retried alone.
	multistepWorker.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.MultistepQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(float64(cfg.multistepMaxConcurrency)),
	}))

	// ---- real-user monitoring ------------------------------------------------------------
	// The rebatcher turns the beacon queue's single views into per-website batches for the
	// aggregator's FIFO queue.
	rumBatcher := goFunction("rum-batcher", "openvitals RUM rebatcher: regroups beacons per website for the aggregator",
		APIMemoryMB, awscdk.Duration_Seconds(jsii.Number(RUMBatcherTimeoutSeconds)), nil)
	storage.RUMQueue.GrantSendMessages(rumBatcher)
	rumBatcher.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.BeaconQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(RUMBatcherBatchSize),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(RUMBatcherWindowSeconds)),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	rumAggregator := goFunction("rum-aggregator", "openvitals RUM aggregator: folds beacons into daily rollups per page and country",
		RUMAggregatorMemoryMB, awscdk.Duration_Seconds(jsii.Number(RUMAggregatorTimeoutSeconds)), nil)
	// Reads the rollups and writes them back merged (and its dedupe markers).
	storage.Table.GrantReadWriteData(rumAggregator)
	rumAggregator.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.RUMQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(RUMAggregatorBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	// ---- field data ------------------------------------------------------------------------
	fieldCollector := newGoFunction(stack, functionIDs["field-collector"], filepath.Join(cfg.functionsDir, "field-collector"), goFunctionProps{
		description: "openvitals field collector: a website's Chrome UX Report and Search Console data, once a day",
		memoryMB:    APIMemoryMB,
		timeout:     awscdk.Duration_Minutes(jsii.Number(FieldCollectorTimeoutMinutes)),
		environment: withEnv(sharedEnvironment(storage), map[string]*string{
			EnvCruxAPIKeySecret:     cruxKey.SecretArn(),
			EnvCredentialsKeySecret: credentialsKey.SecretArn(),
		}),
		reservedConcurrency: FieldCollectorConcurrency,
	})
	storage.Table.GrantReadWriteData(fieldCollector)
	cruxKey.GrantRead(fieldCollector, nil)
	credentialsKey.GrantRead(fieldCollector, nil)
	// One website per invocation, so that a failing one is retried alone.
	fieldCollector.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.FieldQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	// ---- purges -------------------------------------------------------------------------
	purgeWorker := goFunction("purge-worker", "openvitals purge worker: removes every item and object a deletion left",
		APIMemoryMB, awscdk.Duration_Seconds(jsii.Number(PurgeWorkerTimeoutSeconds)), nil)
	storage.Table.GrantReadWriteData(purgeWorker)
	// Lists a prefix, then deletes it.
	storage.Bucket.GrantRead(purgeWorker, nil)
	storage.Bucket.GrantDelete(purgeWorker, nil)
	purgeWorker.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.PurgeQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(PurgeBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	// ---- alarms -------------------------------------------------------------------------
	alarms := newAlarms(stack, "Alarms", storage.WorkQueues(), cfg.alarmEmail)

	// ---- outputs ------------------------------------------------------------------------
	// Outputs let operators and `make` targets find the generated names without
	// hard-coding any of them.
	output := func(id string, value *string, description string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	output("ApiUrl", stage.Url(), "Base URL of the openvitals REST API")
	output("TableName", storage.Table.TableName(), "DynamoDB table holding every openvitals entity")
	output("CreateAdminKey", awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("AWS_REGION="), stack.Region(), jsii.String(" OPENVITALS_TABLE="), storage.Table.TableName(),
		jsii.String(" go run ./functions/keys create -account ACCOUNT -role admin"),
	}), "Create the first admin API key: run this from the repository with AWS credentials that may write the table, ACCOUNT replaced by your account name; it prints the key once")
	output("BucketName", storage.Bucket.BucketName(), "S3 bucket for raw audit reports and screenshots")
	output("CruxApiKeySecretArn", cruxKey.SecretArn(), "Secret for the Chrome UX Report API key, blank until you set it; the field collector skips CrUX until then")
	output("SetCruxApiKey", awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("aws secretsmanager put-secret-value --region "), stack.Region(),
		jsii.String(" --secret-id "), cruxKey.SecretArn(), jsii.String(" --secret-string YOUR_CRUX_API_KEY"),
	}), "Store the CrUX API key (a Google Cloud API key with the Chrome UX Report API enabled)")
	output("AlarmTopicArn", alarms.TopicArn(), "SNS topic the queue alarms notify: subscribe to it (or deploy with -c alarmEmail=...)")
	for _, q := range []struct {
		id          string
		queue       awssqs.Queue
		description string
	}{
		{"PurgeQueueUrl", storage.PurgeQueue, "SQS queue feeding the purge worker"},
		{"PurgeDLQUrl", storage.PurgeDLQ, "Purges that failed every attempt (their markers stay in the table)"},
		{"AuditQueueUrl", storage.AuditQueue, "SQS queue feeding the audit worker"},
		{"AuditDLQUrl", storage.AuditDLQ, "Audits that failed every attempt (the page shows the last error)"},
		{"MultistepQueueUrl", storage.MultistepQueue, "SQS queue feeding the multistep worker"},
		{"MultistepDLQUrl", storage.MultistepDLQ, "Multistep runs whose message failed every attempt"},
		{"BeaconQueueUrl", storage.BeaconQueue, "SQS queue carrying beacons from collect to the RUM rebatcher"},
		{"BeaconDLQUrl", storage.BeaconDLQ, "Beacons the rebatcher could not pass on"},
		{"RumQueueUrl", storage.RUMQueue, "SQS FIFO queue carrying regrouped beacons to the RUM aggregator"},
		{"RumDLQUrl", storage.RUMDLQ, "Beacons that failed every attempt"},
		{"FieldQueueUrl", storage.FieldQueue, "SQS queue feeding the field collector"},
		{"FieldDLQUrl", storage.FieldDLQ, "Field data collections that failed every attempt"},
	} {
		output(q.id, q.queue.QueueUrl(), q.description)
	}

	return stack, nil
}
