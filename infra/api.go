package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// apiTimeoutSeconds: an HTTP API waits at most 30 s for its integration; stop just before.
const apiTimeoutSeconds = 29

// envTrustViewerCountry tells the rum function whether CloudFront-Viewer-Country is
// trustworthy: "true" or "false".
const envTrustViewerCountry = "OPENVITALS_TRUST_VIEWER_COUNTRY"

// rumGroup is the endpoint group of the public RUM routes (the snippet and the beacons),
// throttled with the RUM settings rather than the API's.
const rumGroup = "rum"

// apiGroup is what infra declares of an endpoint group of the route table: its function's
// description, and the access and settings its handlers need (configure).
type apiGroup struct {
	description string
	configure   func(fn awslambda.Function, d apiDeps)
}

// apiDeps are what the API's functions may be granted.
type apiDeps struct {
	*shared
	// purges, audits, runs, beacons, notifications and ux are the queues the API sends work to.
	purges, audits, runs, beacons, notifications, ux *workQueue
}

// apiGroups declares every endpoint group the route table may name (a directory under
// functions/). Each function gets only the grants its handlers use.
var apiGroups = map[string]apiGroup{
	"websites": {"openvitals API: websites, the Search Console integration and the OpenAPI document", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
		// Deleting a website queues the purge of what it left.
		d.purges.queue.GrantSendMessages(fn)
		// The Search Console credential is stored encrypted with this key.
		d.credentialsKey.GrantRead(fn, nil)
		fn.AddEnvironment(jsii.String(envCredentialsKeySecret), d.credentialsKey.SecretArn(), nil)
		// An export on demand writes a day's Parquet files (reading the audits' diagnostics
		// and the day's real-user tables); data settings are checked against the stack's
		// retention.
		d.data.exports.bucket.GrantPut(fn, nil)
		d.data.bucket.GrantRead(fn, nil)
		d.data.rumBucket.GrantRead(fn, nil)
		setRetentionBounds(fn, d.settings)
	}},
	"pages": {"openvitals API: page settings and test profiles", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
		// Deleting a page queues the purge of its results; adding pages queues the fetch of
		// their user-experience history to the ux worker.
		d.purges.queue.GrantSendMessages(fn)
		d.ux.queue.GrantSendMessages(fn)
		// Test profiles' headers, cookies, passwords and typed values are sealed with this key.
		d.credentialsKey.GrantRead(fn, nil)
		fn.AddEnvironment(jsii.String(envCredentialsKeySecret), d.credentialsKey.SecretArn(), nil)
	}},
	"budgets": {"openvitals API: performance budgets", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
	}},
	"multistep": {"openvitals API: multistep tests and their runs", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
		// Deleting a test queues the purge of what it left; runs are queued on demand (one test,
		// or every test of a website).
		d.purges.queue.GrantSendMessages(fn)
		d.runs.queue.GrantSendMessages(fn)
		// A failed run's screenshot is served from the bucket.
		d.data.bucket.GrantRead(fn, nil)
	}},
	"lab": {"openvitals API: lab results, opportunities and audits on demand", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
		// Opportunity details come from the stored reports; audits are queued on demand.
		d.data.bucket.GrantRead(fn, nil)
		d.audits.queue.GrantSendMessages(fn)
	}},
	"field": {"openvitals API: real-user monitoring reports per page and per country", func(fn awslambda.Function, d apiDeps) {
		// Field-testing reports only read the RUM rollups: the days' pointers and indexes in
		// the table, then the tables they need from the days' objects.
		d.data.table.GrantReadData(fn)
		d.data.rumBucket.GrantRead(fn, nil)
	}},
	"events": {"openvitals API: events and notification channels", func(fn awslambda.Function, d apiDeps) {
		d.data.table.GrantReadWriteData(fn)
		// Channel URLs and signing secrets are stored encrypted with this key.
		d.credentialsKey.GrantRead(fn, nil)
		fn.AddEnvironment(jsii.String(envCredentialsKeySecret), d.credentialsKey.SecretArn(), nil)
		// A channel's test is queued to the notifier.
		d.notifications.queue.GrantSendMessages(fn)
	}},
	// The dashboard's files: public and embedded; it needs no data and no grant (the page calls
	// the other functions with the user's key).
	"web": {"openvitals dashboard: the web interface's files under /app/", func(awslambda.Function, apiDeps) {}},
	rumGroup: {"openvitals RUM: serves the snippet and collects beacons (public, by its function URL and the API)", func(fn awslambda.Function, d apiDeps) {
		// The snippet looks the website up; collect checks the beacon against it and queues it.
		d.data.table.GrantReadData(fn)
		d.beacons.queue.GrantSendMessages(fn)
		fn.AddEnvironment(jsii.String(envTrustViewerCountry), jsii.String(strconv.FormatBool(d.trustViewerCountry)), nil)
	}},
}

// api is the HTTP API with one function per endpoint group of the route table.
type api struct {
	// url is the base URL of the `$default` stage.
	url *string
	// rumURL is the RUM function's own URL (ends in /): the snippet embedded from it sends its
	// beacons there, with no request price of API Gateway's.
	rumURL *string
}

// newAPI creates, under scope/id, one Go function per endpoint group of the route table and
// the HTTP API (payload format 2.0, construct id Api, which API Gateway also shows as its
// name) routing each path of the table to its group's function whatever the method: the
// group's own mux then matches the method, answering 405 with Allow as problem details, as it
// does locally. Its `$default` stage is deployed automatically and throttled per route.
func newAPI(scope constructs.Construct, id string, fns *functionFactory, d apiDeps) *api {
	c := constructs.NewConstruct(scope, jsii.String(id))
	integrations, groupFns := newGroupFunctions(c, fns, d)
	httpAPI := awsapigatewayv2.NewHttpApi(c, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("openvitals REST API"),
		// The stage is created below, with throttling, which the default stage cannot take.
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: integrations[d.routes.DefaultGroup],
	})
	// The public RUM routes carry a request per page view of every site: their own throttle.
	rumRoutes := map[string]throttle{}
	var rumRouteConstructs []constructs.IDependable
	for _, p := range d.routes.paths() {
		added := httpAPI.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(p.path),
			Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
			Integration: integrations[p.group],
		})
		if p.group == rumGroup {
			rumRoutes[string(awsapigatewayv2.HttpMethod_ANY)+" "+p.path] = d.rumThrottle
			for _, r := range *added {
				rumRouteConstructs = append(rumRouteConstructs, r)
			}
		}
	}
	stage := newThrottledStage(httpAPI, d.apiThrottle, rumRoutes, rumRouteConstructs)
	rumURL := newRUMEntry(groupFns[rumGroup], d.rumMaxConcurrency).Url()
	// The dashboard names the RUM entry in the snippet it shows.
	if web, ok := groupFns["web"]; ok {
		web.AddEnvironment(jsii.String(envRUMURL), rumURL, nil)
	}
	return &api{url: stage.Url(), rumURL: rumURL}
}

// envRUMURL gives the web function the RUM function's URL, for the dashboard's snippet.
const envRUMURL = "OPENVITALS_RUM_URL"

// newRUMEntry gives the RUM function a public function URL: the snippet's and the beacons'
// entry priced for volume (a function URL has no request price; API Gateway's $1 per million
// was half of what a beacon cost). Its routes on the API stay, throttled, for pages that embed
// the snippet from the API's URL. The function URL's flood cap is the function's reserved
// concurrency (maxConcurrency, 0: none reserved): requests over it are answered 429 by Lambda
// and not billed. A website's beacons over its daily limit are refused before they are queued
// either way.
func newRUMEntry(fn awslambda.Function, maxConcurrency int) awslambda.FunctionUrl {
	if maxConcurrency > 0 {
		fn.Node().DefaultChild().(awslambda.CfnFunction).SetReservedConcurrentExecutions(jsii.Number(float64(maxConcurrency)))
	}
	return fn.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		// Public like the API's RUM routes; CORS is the function's own (it answers preflights).
		AuthType: awslambda.FunctionUrlAuthType_NONE,
	})
}

// newGroupFunctions creates, under scope, the function of each endpoint group of the route
// table (construct id constructID(group)), configured as apiGroups says, and returns their
// integrations and functions by group.
func newGroupFunctions(scope constructs.Construct, fns *functionFactory, d apiDeps) (map[string]awsapigatewayv2integrations.HttpLambdaIntegration, map[string]awslambda.Function) {
	integrations := map[string]awsapigatewayv2integrations.HttpLambdaIntegration{}
	groupFns := map[string]awslambda.Function{}
	for _, g := range d.routes.groups() {
		fn := fns.goFunction(scope, g, goFunctionProps{
			description: apiGroups[g].description,
			memoryMB:    defaultMemoryMB,
			timeout:     awscdk.Duration_Seconds(jsii.Number(apiTimeoutSeconds)),
			// The RUM function is invoked once per page view of every website.
			quietPlatform: g == rumGroup,
		})
		apiGroups[g].configure(fn, d)
		integrations[g] = awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(g), fn, nil)
		groupFns[g] = fn
	}
	return integrations, groupFns
}

// newThrottledStage adds the `$default` stage to httpAPI, each route throttled to def, and
// each route key of routeThrottles to its own throttle instead (API Gateway applies a limit
// to each route on its own). routes are the routes routeThrottles names.
func newThrottledStage(httpAPI awsapigatewayv2.HttpApi, def throttle, routeThrottles map[string]throttle, routes []constructs.IDependable) awsapigatewayv2.HttpStage {
	stage := httpAPI.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(float64(def.rate)),
			BurstLimit: jsii.Number(float64(def.burst)),
		},
	})
	// The L2 stage has no per-route settings: set them on the CloudFormation resource. A
	// stage naming a route that does not exist yet fails, hence the dependencies.
	settings := map[string]any{}
	for key, t := range routeThrottles {
		settings[key] = map[string]any{
			"ThrottlingRateLimit":  t.rate,
			"ThrottlingBurstLimit": t.burst,
		}
	}
	stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetRouteSettings(settings)
	for _, r := range routes {
		stage.Node().AddDependency(r)
	}
	return stage
}
