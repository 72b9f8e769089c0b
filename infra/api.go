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
}

// APIDefaultGroup serves every request no route matches (the `$default` route), so that an
// unknown path or method gets the service's problem+json 404 or 405, as it does locally,
// rather than API Gateway's own {"message":"Not Found"}.
const APIDefaultGroup = "websites"

// newHTTPAPI creates the HTTP API (payload format 2.0, `$default` stage deployed
// automatically) with one Lambda integration per endpoint group. functions maps a group to
// its function and must hold every group APIRoutes names.
func newHTTPAPI(scope constructs.Construct, id string, functions map[string]awslambda.IFunction) awsapigatewayv2.HttpApi {
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

	api := awsapigatewayv2.NewHttpApi(scope, jsii.String(id), &awsapigatewayv2.HttpApiProps{
		Description:        jsii.String("openvitals REST API"),
		CreateDefaultStage: jsii.Bool(true),
		DefaultIntegration: integration(APIDefaultGroup),
	})
	for _, r := range APIRoutes {
		api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(r.Path),
			Methods:     &[]awsapigatewayv2.HttpMethod{r.Method},
			Integration: integration(r.Group),
		})
	}
	return api
}
