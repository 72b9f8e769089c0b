package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// APIRoute is one route of the HTTP API: a method (ANY for every method) and a path pattern,
// served by the function of an endpoint group (a directory name under functions/).
type APIRoute struct {
	Method awsapigatewayv2.HttpMethod
	Path   string
	Group  string
}

// APIRoutes send each request to the function serving its endpoint group (spec/api.md). A
// group's own mux then matches the exact method and path, answering 404 and 405 as problem
// details, which is why most routes take ANY method and a greedy {proxy+} tail. API Gateway
// prefers the most specific route, so /openapi.json and /websites win over /{websiteId}.
var APIRoutes = []APIRoute{
	{awsapigatewayv2.HttpMethod_GET, "/websites", "websites"},
	{awsapigatewayv2.HttpMethod_POST, "/account/websites", "websites"},
	{awsapigatewayv2.HttpMethod_DELETE, "/{websiteId}", "websites"},
	{awsapigatewayv2.HttpMethod_GET, "/openapi.json", "websites"},

	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/settings/{proxy+}", "pages"},

	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/budgets", "budgets"},
	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/budgets/{proxy+}", "budgets"},

	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/multistep", "multistep"},
	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/multistep/{proxy+}", "multistep"},

	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/pages", "lab"},
	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/pages/{proxy+}", "lab"},
	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/opportunities", "lab"},
	{awsapigatewayv2.HttpMethod_POST, "/{websiteId}/audits", "lab"},

	// Search Console integration: PUT, GET and DELETE (the websites group).
	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/integrations/{proxy+}", "websites"},

	{awsapigatewayv2.HttpMethod_ANY, "/{websiteId}/field-testing/{proxy+}", "field"},
}

// PublicRoutes are the routes anyone may call, without an API key: the RUM snippet that sites
// embed and the beacons browsers send. The rum function answers CORS preflights itself
// (OPTIONS /collect), so the API has no CORS configuration of its own.
var PublicRoutes = []APIRoute{
	{awsapigatewayv2.HttpMethod_GET, "/rum/{file}", "rum"},
	{awsapigatewayv2.HttpMethod_POST, "/collect", "rum"},
	{awsapigatewayv2.HttpMethod_OPTIONS, "/collect", "rum"},
}

// RouteKey is the route's key as API Gateway writes it ("POST /collect").
func (r APIRoute) RouteKey() string { return string(r.Method) + " " + r.Path }

// APIDefaultGroup serves every request no route matches (the `$default` route), so that an
// unknown path or method gets the service's problem+json 404 or 405, as it does locally,
// rather than API Gateway's own {"message":"Not Found"}.
const APIDefaultGroup = "websites"

// newHTTPAPI creates the HTTP API (payload format 2.0) with one Lambda integration per
// endpoint group and its `$default` stage, deployed automatically. Each route is throttled to
// api, each public route to rum instead (API Gateway applies a limit to each route on its
// own). functions maps a group to its function and must hold every group the routes name.
func newHTTPAPI(scope constructs.Construct, id string, functions map[string]awslambda.IFunction, api, rum throttle) (awsapigatewayv2.HttpApi, awsapigatewayv2.HttpStage) {
	integrations := map[string]awsapigatewayv2integrations.HttpLambdaIntegration{}
	integration := func(group string) awsapigatewayv2integrations.HttpLambdaIntegration {
		if in, ok := integrations[group]; ok {
			return in
		}
		fn, ok := functions[group]
		if !ok {
			panic("no function for endpoint group " + group)
		}
		in := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(group), fn, nil)
		integrations[group] = in
		return in
	}

	httpAPI := awsapigatewayv2.NewHttpApi(scope, jsii.String(id), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("openvitals REST API"),
		// The stage is created below, with throttling, which the default stage cannot take.
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: integration(APIDefaultGroup),
	})
	var public []constructs.IDependable
	for i, r := range append(append([]APIRoute{}, APIRoutes...), PublicRoutes...) {
		routes := httpAPI.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(r.Path),
			Methods:     &[]awsapigatewayv2.HttpMethod{r.Method},
			Integration: integration(r.Group),
		})
		if i >= len(APIRoutes) {
			for _, route := range *routes {
				public = append(public, route)
			}
		}
	}

	stage := httpAPI.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(float64(api.rate)),
			BurstLimit: jsii.Number(float64(api.burst)),
		},
	})
	// The L2 stage has no per-route settings: set them on the CloudFormation resource. A
	// stage naming a route that does not exist yet fails, hence the dependencies.
	settings := map[string]any{}
	for _, r := range PublicRoutes {
		settings[r.RouteKey()] = map[string]any{
			"ThrottlingRateLimit":  rum.rate,
			"ThrottlingBurstLimit": rum.burst,
		}
	}
	cfnStage := stage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	cfnStage.SetRouteSettings(settings)
	for _, d := range public {
		stage.Node().AddDependency(d)
	}
	return httpAPI, stage
}
