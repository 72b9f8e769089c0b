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
	// AuditMaxConcurrency is how many audits may run at once, one per worker (2 to 1000).
	// Default DefaultAuditMaxConcurrency.
	AuditMaxConcurrency *int
	// MultistepMaxConcurrency is how many multistep runs may play at once, one per worker
	// (2 to 1000). Default DefaultMultistepMaxConcurrency.
	MultistepMaxConcurrency *int
}

// Construct ids of the functions, by directory name under functions/.
var functionIDs = map[string]string{
	"websites":              "Websites",
	"pages":                 "Pages",
	"budgets":               "Budgets",
	"multistep":             "Multistep",
	"lab":                   "Lab",
	"scheduler":             "Scheduler",
	"purge-worker":          "PurgeWorker",
	AuditWorkerFunction:     "AuditWorker",
	MultistepWorkerFunction: "MultistepWorker",
}

// NewOpenvitalsStack creates the whole openvitals deployment: the shared storage (table,
// bucket, purge, audit and multistep queues), the HTTP API with one function per endpoint
// group, the daily schedule with its scheduler, the audit and multistep workers (container
// functions of one image with Chromium and Lighthouse) and the purge worker. Each function gets only the access its code needs.
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

	storage := NewStorage(stack, "Storage")

	// Every function gets every resource's name: service.New opens every queue (a URL costs
	// no call at start), whether or not the function may use them.
	env := func() map[string]*string {
		return map[string]*string{
			"OPENVITALS_TABLE":           storage.Table.TableName(),
			"OPENVITALS_BUCKET":          storage.Bucket.BucketName(),
			"OPENVITALS_PURGE_QUEUE":     storage.PurgeQueue.QueueUrl(),
			"OPENVITALS_AUDIT_QUEUE":     storage.AuditQueue.QueueUrl(),
			"OPENVITALS_MULTISTEP_QUEUE": storage.MultistepQueue.QueueUrl(),
		}
	}
	goFunction := func(name, description string, memoryMB float64, timeout awscdk.Duration) awslambda.Function {
		return newGoFunction(stack, functionIDs[name], filepath.Join(cfg.functionsDir, name), goFunctionProps{
			description: description, memoryMB: memoryMB, timeout: timeout, environment: env(),
		})
	}
	apiFunction := func(name, description string) awslambda.Function {
		fn := goFunction(name, description, APIMemoryMB, awscdk.Duration_Seconds(jsii.Number(APITimeoutSeconds)))
		storage.Table.GrantReadWriteData(fn)
		return fn
	}

	// ---- API ----------------------------------------------------------------------------
	websites := apiFunction("websites", "openvitals API: websites and the OpenAPI document")
	pages := apiFunction("pages", "openvitals API: page settings")
	budgets := apiFunction("budgets", "openvitals API: performance budgets")
	multistep := apiFunction("multistep", "openvitals API: multistep tests and their runs")
	lab := apiFunction("lab", "openvitals API: lab results, opportunities and audits on demand")
	// Deleting a website, a page or a multistep test queues the purge of what it left.
	for _, fn := range []awslambda.Function{websites, pages, multistep} {
		storage.PurgeQueue.GrantSendMessages(fn)
	}
	// Lab serves opportunity details from the stored reports and queues audits on demand.
	storage.Bucket.GrantRead(lab, nil)
	storage.AuditQueue.GrantSendMessages(lab)
	// Multistep queues runs on demand (one test, or every test of a website).
	storage.MultistepQueue.GrantSendMessages(multistep)

	api := newHTTPAPI(stack, "Api", map[string]awslambda.IFunction{
		"websites": websites, "pages": pages, "budgets": budgets, "multistep": multistep, "lab": lab,
	})

	// ---- daily audits and multistep runs -------------------------------------------------
	scheduler := goFunction("scheduler", "openvitals scheduler: queues the daily audit of every page and device, and the daily multistep runs",
		APIMemoryMB, awscdk.Duration_Minutes(jsii.Number(SchedulerTimeoutMinutes)))
	// Reads websites and pages, and marks what it queued so that a second run the same day
	// queues nothing twice.
	storage.Table.GrantReadWriteData(scheduler)
	storage.AuditQueue.GrantSendMessages(scheduler)
	storage.MultistepQueue.GrantSendMessages(scheduler)
	// It also queues again the purges whose message was lost (their markers are in the table).
	storage.PurgeQueue.GrantSendMessages(scheduler)
	awsevents.NewRule(stack, jsii.String("DailyAudits"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("openvitals: queue the daily audits at %02d:00 UTC", cfg.dailyHourUTC)),
		Schedule: awsevents.Schedule_Cron(&awsevents.CronOptions{
			Minute: jsii.String("0"),
			Hour:   jsii.String(strconv.Itoa(cfg.dailyHourUTC)),
		}),
		Targets: &[]awsevents.IRuleTarget{
			// Running the scheduler again the same day is harmless, so let EventBridge retry.
			awseventstargets.NewLambdaFunction(scheduler, &awseventstargets.LambdaFunctionProps{
				RetryAttempts: jsii.Number(2),
				MaxEventAge:   awscdk.Duration_Hours(jsii.Number(2)),
			}),
		},
	})

	auditWorker := newAuditWorker(stack, functionIDs[AuditWorkerFunction], cfg, env())
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
	multistepWorker := newMultistepWorker(stack, functionIDs[MultistepWorkerFunction], cfg, env())
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

	// ---- purges -------------------------------------------------------------------------
	purgeWorker := goFunction("purge-worker", "openvitals purge worker: removes every item and object a deletion left",
		APIMemoryMB, awscdk.Duration_Seconds(jsii.Number(PurgeWorkerTimeoutSeconds)))
	storage.Table.GrantReadWriteData(purgeWorker)
	// Lists a prefix, then deletes it.
	storage.Bucket.GrantRead(purgeWorker, nil)
	storage.Bucket.GrantDelete(purgeWorker, nil)
	purgeWorker.AddEventSource(awslambdaeventsources.NewSqsEventSource(storage.PurgeQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(PurgeBatchSize),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	// ---- outputs ------------------------------------------------------------------------
	// Outputs let operators and `make` targets find the generated names without
	// hard-coding any of them.
	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       api.Url(),
		Description: jsii.String("Base URL of the openvitals REST API"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{
		Value:       storage.Table.TableName(),
		Description: jsii.String("DynamoDB table holding every openvitals entity"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("BucketName"), &awscdk.CfnOutputProps{
		Value:       storage.Bucket.BucketName(),
		Description: jsii.String("S3 bucket for raw audit reports and screenshots"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("PurgeQueueUrl"), &awscdk.CfnOutputProps{
		Value:       storage.PurgeQueue.QueueUrl(),
		Description: jsii.String("SQS queue feeding the purge worker"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("AuditQueueUrl"), &awscdk.CfnOutputProps{
		Value:       storage.AuditQueue.QueueUrl(),
		Description: jsii.String("SQS queue feeding the audit worker"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("AuditDLQUrl"), &awscdk.CfnOutputProps{
		Value:       storage.AuditDLQ.QueueUrl(),
		Description: jsii.String("Audits that failed every attempt (the page shows the last error)"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("MultistepQueueUrl"), &awscdk.CfnOutputProps{
		Value:       storage.MultistepQueue.QueueUrl(),
		Description: jsii.String("SQS queue feeding the multistep worker"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("MultistepDLQUrl"), &awscdk.CfnOutputProps{
		Value:       storage.MultistepDLQ.QueueUrl(),
		Description: jsii.String("Multistep runs whose message failed every attempt"),
	})

	return stack, nil
}
