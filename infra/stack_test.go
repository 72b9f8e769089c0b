package main

import (
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// cdkContext returns the "context" of the repository's cdk.json, so the
// tests synthesize with the same feature flags `cdk deploy` uses.
func cdkContext(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatalf("read cdk.json: %v", err)
	}
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("parse cdk.json: %v", err)
	}
	return cfg.Context
}

// functionsDir stands in for what `make build` writes: one directory per
// function holding a placeholder bootstrap, so that synthesis needs no build.
var functionsDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "openvitals-functions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := writeBootstraps(dir, "placeholder"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	functionsDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// functionDirs returns the functions `make build` builds: the directories under functions/
// that hold a main.go, as the Makefile derives LAMBDA_FUNCTIONS.
func functionDirs() ([]string, error) {
	mains, err := filepath.Glob("../functions/*/main.go")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range mains {
		names = append(names, filepath.Base(filepath.Dir(m)))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("no ../functions/*/main.go: run the tests in infra/")
	}
	return names, nil
}

// writeBootstraps writes dir/<function>/bootstrap for every function directory, each
// holding content and the function's name.
func writeBootstraps(dir, content string) error {
	names, err := functionDirs()
	if err != nil {
		return err
	}
	for _, fn := range names {
		if err := os.MkdirAll(filepath.Join(dir, fn), 0o755); err != nil {
			return err
		}
		body := []byte(content + " " + fn + "\n")
		if err := os.WriteFile(filepath.Join(dir, fn, "bootstrap"), body, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// synthesized is one synthesized app.
type synthesized struct {
	app  awscdk.App
	o    *openvitalsStack
	tmpl assertions.Template
}

// synth builds the stack with props (FunctionsDir defaults to the placeholders) and extra
// context over cdk.json's, and synthesizes it.
func synth(t *testing.T, props *openvitalsStackProps, extra map[string]any) synthesized {
	t.Helper()
	ctx := cdkContext(t)
	for k, v := range extra {
		ctx[k] = v
	}
	var p openvitalsStackProps
	if props != nil {
		p = *props
	}
	if p.FunctionsDir == "" {
		p.FunctionsDir = functionsDir
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	o, err := newOpenvitalsStack(app, "OpenvitalsStack", &p)
	if err != nil {
		t.Fatalf("newOpenvitalsStack: %v", err)
	}
	return synthesized{app: app, o: o, tmpl: assertions.Template_FromStack(o.stack, nil)}
}

var (
	synthOnce sync.Once
	synthed   synthesized
)

// openvitals synthesizes the stack with the default settings once for all tests: synthesis
// goes through the jsii Node.js process and costs seconds.
func openvitals(t *testing.T) (*openvitalsStack, assertions.Template) {
	t.Helper()
	synthOnce.Do(func() { synthed = synth(t, nil, nil) })
	if synthed.o == nil {
		t.Fatal("synthesis failed")
	}
	return synthed.o, synthed.tmpl
}

// check runs a CDK assertion, which panics with a readable diff on a
// mismatch, and turns the panic into a test failure.
func check(t *testing.T, what string, assert func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	assert()
}

// logicalID returns the CloudFormation logical id of the L1 resource behind
// the construct at path (e.g. "Purge/PurgeDLQ") in stack.
func logicalID(t *testing.T, stack awscdk.Stack, path ...string) string {
	t.Helper()
	node := stack.Node()
	for _, p := range path {
		child := node.TryFindChild(jsii.String(p))
		if child == nil {
			t.Fatalf("no construct %q under %s", p, *node.Path())
		}
		node = child.Node()
	}
	cfn, ok := node.DefaultChild().(awscdk.CfnElement)
	if !ok {
		t.Fatalf("%s has no CloudFormation resource", *node.Path())
	}
	return *stack.GetLogicalId(cfn)
}

func TestTableKeySchemaAndBilling(t *testing.T) {
	_, tmpl := openvitals(t)
	check(t, "one table", func() { tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1)) })
	check(t, "table properties", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"KeySchema": []any{
				map[string]any{"AttributeName": "PK", "KeyType": "HASH"},
				map[string]any{"AttributeName": "SK", "KeyType": "RANGE"},
			},
			"AttributeDefinitions": []any{
				map[string]any{"AttributeName": "PK", "AttributeType": "S"},
				map[string]any{"AttributeName": "SK", "AttributeType": "S"},
			},
			"BillingMode": "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": map[string]any{
				"PointInTimeRecoveryEnabled": true,
			},
		})
	})
}

func TestTableTTL(t *testing.T) {
	_, tmpl := openvitals(t)
	check(t, "TTL", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"TimeToLiveSpecification": map[string]any{"AttributeName": "expires", "Enabled": true},
		})
	})
}

func TestDataIsRetained(t *testing.T) {
	_, tmpl := openvitals(t)
	for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::S3::Bucket"} {
		check(t, typ+" retained", func() {
			tmpl.HasResource(jsii.String(typ), map[string]any{
				"DeletionPolicy":      "Retain",
				"UpdateReplacePolicy": "Retain",
			})
		})
	}
}

func TestBucketIsPrivateEncryptedAndSSLOnly(t *testing.T) {
	o, tmpl := openvitals(t)
	check(t, "three buckets: the reports', real users' and exports'", func() { tmpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(3)) })
	for _, path := range [][]string{{"Storage", "Bucket"}, {"Storage", "RumBucket"}, {"Exports", "Bucket"}} {
		id := strings.Join(path, "/")
		bucket := logicalID(t, o.stack, path...)
		props := resources(tmpl, "AWS::S3::Bucket")[bucket]
		block, _ := json.Marshal(props["PublicAccessBlockConfiguration"])
		if string(block) != `{"BlockPublicAcls":true,"BlockPublicPolicy":true,"IgnorePublicAcls":true,"RestrictPublicBuckets":true}` {
			t.Errorf("%s: public access block %s", id, block)
		}
		enc, _ := json.Marshal(props["BucketEncryption"])
		if !strings.Contains(string(enc), `"SSEAlgorithm":"AES256"`) {
			t.Errorf("%s: encryption %s", id, enc)
		}
		check(t, id+": bucket policy denies plain HTTP", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
				"Bucket": map[string]any{"Ref": bucket},
				"PolicyDocument": map[string]any{
					"Statement": assertions.Match_ArrayWith(&[]any{
						assertions.Match_ObjectLike(&map[string]any{
							"Effect":    "Deny",
							"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
						}),
					}),
				},
			})
		})
	}
}

// Real-user data is kept rumRetentionDays (400 by default), apart from the reports'; the
// aggregator expires the days' pointers and indexes in the table after as many days.
func TestRealUserDataRetention(t *testing.T) {
	for _, c := range []struct {
		ctx  map[string]any
		days float64
	}{{nil, 400}, {map[string]any{"rumRetentionDays": "60"}, 60}} {
		var o *openvitalsStack
		var tmpl assertions.Template
		if c.ctx == nil {
			o, tmpl = openvitals(t)
		} else {
			s := synth(t, nil, c.ctx)
			o, tmpl = s.o, s.tmpl
		}
		bucket := logicalID(t, o.stack, "Storage", "RumBucket")
		rules := resources(tmpl, "AWS::S3::Bucket")[bucket]["LifecycleConfiguration"]
		raw, _ := json.Marshal(rules)
		if !strings.Contains(string(raw), fmt.Sprintf(`"ExpirationInDays":%v`, c.days)) || !strings.Contains(string(raw), `"Status":"Enabled"`) {
			t.Errorf("retention %v: the RUM bucket's rules %s", c.days, raw)
		}
		env := functionEnv(t, o, tmpl, "rum-aggregator")
		if got := env["OPENVITALS_RUM_RETENTION_DAYS"]; got != fmt.Sprint(c.days) {
			t.Errorf("retention %v: the aggregator is told %v", c.days, got)
		}
	}
}

// Beacons have an entry with no request price: the RUM function's URL, public. Its flood cap
// is the function's reserved concurrency, only where rumMaxConcurrency asks for one (a new
// account refuses any reservation).
func TestRUMFunctionURL(t *testing.T) {
	o, tmpl := openvitals(t)
	rum := fnID(t, o, "rum")
	urls := resources(tmpl, "AWS::Lambda::Url")
	if len(urls) != 1 {
		t.Fatalf("%d function URLs, want the RUM function's", len(urls))
	}
	for _, u := range urls {
		raw, _ := json.Marshal(u)
		if !strings.Contains(string(raw), `"AuthType":"NONE"`) || !strings.Contains(string(raw), `"TargetFunctionArn":{"Fn::GetAtt":["`+rum+`","Arn"]}`) {
			t.Errorf("function URL %s", raw)
		}
	}
	perms := resources(tmpl, "AWS::Lambda::Permission")
	public := false
	for _, p := range perms {
		raw, _ := json.Marshal(p)
		public = public || strings.Contains(string(raw), `"FunctionUrlAuthType":"NONE"`) && strings.Contains(string(raw), `"Principal":"*"`)
	}
	if !public {
		t.Error("no permission lets anyone invoke the RUM function by its URL")
	}
	if _, ok := resources(tmpl, "AWS::Lambda::Function")[rum]["ReservedConcurrentExecutions"]; ok {
		t.Error("the RUM function reserves concurrency by default")
	}
	// Invoked per page view: Lambda's own lines of each invocation are left out of its log.
	logging, _ := json.Marshal(resources(tmpl, "AWS::Lambda::Function")[rum]["LoggingConfig"])
	if !strings.Contains(string(logging), `"LogFormat":"JSON"`) || !strings.Contains(string(logging), `"SystemLogLevel":"WARN"`) {
		t.Errorf("the RUM function's logging %s: want JSON with Lambda's own lines at WARN", logging)
	}
	s := synth(t, nil, map[string]any{"rumMaxConcurrency": "25"})
	if got := resources(s.tmpl, "AWS::Lambda::Function")[fnID(t, s.o, "rum")]["ReservedConcurrentExecutions"]; got != float64(25) {
		t.Errorf("rumMaxConcurrency=25: reserved concurrency %v", got)
	}
}

func TestPurgeQueueRedrivesToDLQ(t *testing.T) {
	o, tmpl := openvitals(t)
	dlq := dlqID(t, o.stack, "purge")
	purge := queueID(t, o.stack, "purge")
	check(t, "sixteen queues (purge, audit, multistep, fanout, beacon, rum, ux and notify, each with a DLQ)", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(16))
	})

	redriven := *tmpl.FindResources(jsii.String("AWS::SQS::Queue"), map[string]any{
		"Properties": map[string]any{
			"VisibilityTimeout": 300,
			"RedrivePolicy": map[string]any{
				"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}},
				"maxReceiveCount":     5,
			},
		},
	})
	if _, ok := redriven[purge]; !ok || len(redriven) != 1 {
		t.Errorf("want only queue %s with a 300 s visibility timeout redriving to %s after 3 receives; matched %v",
			purge, dlq, keys(redriven))
	}
	for _, q := range []string{purge, dlq} {
		check(t, q+" denies plain HTTP", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), map[string]any{
				"Queues": []any{map[string]any{"Ref": q}},
				"PolicyDocument": map[string]any{
					"Statement": assertions.Match_ArrayWith(&[]any{
						assertions.Match_ObjectLike(&map[string]any{
							"Effect":    "Deny",
							"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
						}),
					}),
				},
			})
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestNoHardCodedNames(t *testing.T) {
	_, tmpl := openvitals(t)
	for typ, prop := range map[string]string{
		"AWS::DynamoDB::Table":  "TableName",
		"AWS::S3::Bucket":       "BucketName",
		"AWS::SQS::Queue":       "QueueName",
		"AWS::Lambda::Function": "FunctionName",
		"AWS::IAM::Role":        "RoleName",
		"AWS::Events::Rule":     "Name",
	} {
		found := *tmpl.FindResources(jsii.String(typ), map[string]any{
			"Properties": map[string]any{prop: assertions.Match_AnyValue()},
		})
		if len(found) > 0 {
			t.Errorf("%s sets %s: let CloudFormation generate it", typ, prop)
		}
	}
}

func TestOutputs(t *testing.T) {
	o, tmpl := openvitals(t)
	want := map[string]any{
		"TableName":           map[string]any{"Ref": logicalID(t, o.stack, "Storage", "Table")},
		"BucketName":          map[string]any{"Ref": logicalID(t, o.stack, "Storage", "Bucket")},
		"PurgeQueueUrl":       map[string]any{"Ref": queueID(t, o.stack, "purge")},
		"AuditQueueUrl":       map[string]any{"Ref": queueID(t, o.stack, "audit")},
		"AuditDLQUrl":         map[string]any{"Ref": dlqID(t, o.stack, "audit")},
		"MultistepQueueUrl":   map[string]any{"Ref": queueID(t, o.stack, "multistep")},
		"MultistepDLQUrl":     map[string]any{"Ref": dlqID(t, o.stack, "multistep")},
		"FanoutQueueUrl":      map[string]any{"Ref": queueID(t, o.stack, "fanout")},
		"FanoutDLQUrl":        map[string]any{"Ref": dlqID(t, o.stack, "fanout")},
		"PurgeDLQUrl":         map[string]any{"Ref": dlqID(t, o.stack, "purge")},
		"RumQueueUrl":         map[string]any{"Ref": queueID(t, o.stack, "rum")},
		"RumDLQUrl":           map[string]any{"Ref": dlqID(t, o.stack, "rum")},
		"BeaconQueueUrl":      map[string]any{"Ref": queueID(t, o.stack, "beacon")},
		"BeaconDLQUrl":        map[string]any{"Ref": dlqID(t, o.stack, "beacon")},
		"UxQueueUrl":          map[string]any{"Ref": queueID(t, o.stack, "ux")},
		"UxDLQUrl":            map[string]any{"Ref": dlqID(t, o.stack, "ux")},
		"NotifyQueueUrl":      map[string]any{"Ref": queueID(t, o.stack, "notify")},
		"NotifyDLQUrl":        map[string]any{"Ref": dlqID(t, o.stack, "notify")},
		"CruxApiKeySecretArn": map[string]any{"Ref": logicalID(t, o.stack, "CruxApiKey")},
		"AlarmTopicArn":       map[string]any{"Ref": logicalID(t, o.stack, "Alarms", "Topic")},
		"CreateAdminKey": map[string]any{"Fn::Join": []any{"", []any{
			"AWS_REGION=", map[string]any{"Ref": "AWS::Region"},
			" OPENVITALS_TABLE=", map[string]any{"Ref": logicalID(t, o.stack, "Storage", "Table")},
			" go run ./cmd/keys create -account ACCOUNT -role admin",
		}}},
		"SetCruxApiKey": map[string]any{"Fn::Join": []any{"", []any{
			"aws secretsmanager put-secret-value --region ", map[string]any{"Ref": "AWS::Region"},
			" --secret-id ", map[string]any{"Ref": logicalID(t, o.stack, "CruxApiKey")},
			" --secret-string YOUR_CRUX_API_KEY",
		}}},
		"ApiUrl": map[string]any{"Fn::Join": []any{"", []any{
			"https://", map[string]any{"Ref": logicalID(t, o.stack, "Api", "Api")},
			".execute-api.", map[string]any{"Ref": "AWS::Region"}, ".", map[string]any{"Ref": "AWS::URLSuffix"}, "/",
		}}},
		"DashboardUrl": map[string]any{"Fn::Join": []any{"", []any{
			"https://", map[string]any{"Ref": logicalID(t, o.stack, "Api", "Api")},
			".execute-api.", map[string]any{"Ref": "AWS::Region"}, ".", map[string]any{"Ref": "AWS::URLSuffix"}, "/app",
		}}},
		"RumBucketName":    map[string]any{"Ref": logicalID(t, o.stack, "Storage", "RumBucket")},
		"ExportBucketName": map[string]any{"Ref": logicalID(t, o.stack, "Exports", "Bucket")},
		"AthenaWorkgroup":  map[string]any{"Ref": keys(resources(tmpl, "AWS::Athena::WorkGroup"))[0]},
		"RumUrl":           map[string]any{"Fn::GetAtt": []any{logicalID(t, o.stack, "Api", "Rum", "FunctionUrl"), "FunctionUrl"}},
	}
	for id, value := range want {
		check(t, "output "+id, func() {
			tmpl.HasOutput(jsii.String(id), map[string]any{"Value": value})
		})
	}
	if got := keys(*tmpl.FindOutputs(jsii.String("*"), map[string]any{})); len(got) != len(want) {
		t.Errorf("outputs %v, want %d", got, len(want))
	}
	// The output's command must name the program that creates keys.
	if _, err := os.Stat("../cmd/keys/main.go"); err != nil {
		t.Errorf("CreateAdminKey runs ./cmd/keys: %v", err)
	}
}

// broadManagedPolicy matches AWS managed policies that grant a whole service
// (or everything): the design allows only per-function grants.
var broadManagedPolicy = regexp.MustCompile(`FullAccess|AdministratorAccess|PowerUserAccess`)

// broadManagedPolicies lists "logicalID: policy" for every resource in the
// template JSON that attaches a policy matching broadManagedPolicy.
func broadManagedPolicies(tmpl map[string]any) []string {
	var found []string
	resources, _ := tmpl["Resources"].(map[string]any)
	for id, r := range resources {
		props, _ := r.(map[string]any)["Properties"].(map[string]any)
		// Roles, users and groups attach managed policies through
		// ManagedPolicyArns; an ARN is often an Fn::Join, so look at every string in it.
		for _, s := range stringsIn(props["ManagedPolicyArns"]) {
			if broadManagedPolicy.MatchString(s) {
				found = append(found, fmt.Sprintf("%s: %s", id, s))
			}
		}
	}
	sort.Strings(found)
	return found
}

// stringsIn returns every string found anywhere inside v.
func stringsIn(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}

func TestNoManagedFullAccessPolicies(t *testing.T) {
	_, tmpl := openvitals(t)
	if found := broadManagedPolicies(*tmpl.ToJSON()); len(found) > 0 {
		t.Errorf("managed policies broader than a per-function grant:\n%s", strings.Join(found, "\n"))
	}
}

// TestBroadManagedPolicyDetector proves the check above can fail: a role with
// AmazonDynamoDBFullAccess must be reported.
func TestBroadManagedPolicyDetector(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Bad"), nil)
	awsiam.NewRole(stack, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		ManagedPolicies: &[]awsiam.IManagedPolicy{
			awsiam.ManagedPolicy_FromAwsManagedPolicyName(jsii.String("AmazonDynamoDBFullAccess")),
		},
	})
	found := broadManagedPolicies(*assertions.Template_FromStack(stack, nil).ToJSON())
	if len(found) != 1 || !strings.Contains(found[0], "AmazonDynamoDBFullAccess") {
		t.Fatalf("detector found %q, want the AmazonDynamoDBFullAccess role", found)
	}
}

// TestAssertionsFailOnMismatch proves check reports a mismatch instead of
// passing silently: a wrong billing mode must make the assertion panic.
func TestAssertionsFailOnMismatch(t *testing.T) {
	_, tmpl := openvitals(t)
	panicked := func() (p bool) {
		defer func() { p = recover() != nil }()
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{"BillingMode": "PROVISIONED"})
		return false
	}()
	if !panicked {
		t.Fatal("HasResourceProperties accepted a wrong BillingMode")
	}
}

// ---- template helpers ---------------------------------------------------------------

// resources returns the template's resources of type typ, by logical id.
func resources(tmpl assertions.Template, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	all, _ := (*tmpl.ToJSON())["Resources"].(map[string]any)
	for id, r := range all {
		r, _ := r.(map[string]any)
		if r["Type"] == typ {
			props, _ := r["Properties"].(map[string]any)
			out[id] = props
		}
	}
	return out
}

// fnID is the logical id of the function the stack deploys from functions/<name> (e.g.
// "scheduler").
func fnID(t *testing.T, o *openvitalsStack, name string) string {
	t.Helper()
	fn, ok := o.functions[name]
	if !ok {
		t.Fatalf("the stack deploys no function %s", name)
	}
	cfn, ok := fn.Node().DefaultChild().(awscdk.CfnElement)
	if !ok {
		t.Fatalf("function %s has no CloudFormation resource", name)
	}
	return *o.stack.GetLogicalId(cfn)
}

// queuePaths are the construct paths of each work queue and of its dead-letter queue.
var queuePaths = map[string][2][]string{
	"purge":     {{"Purge", "PurgeQueue"}, {"Purge", "PurgeDLQ"}},
	"audit":     {{"Audit", "AuditQueue"}, {"Audit", "AuditDLQ"}},
	"multistep": {{"Multistep", "MultistepQueue"}, {"Multistep", "MultistepDLQ"}},
	"fanout":    {{"Fanout", "FanoutQueue"}, {"Fanout", "FanoutDLQ"}},
	"beacon":    {{"Rum", "BeaconQueue"}, {"Rum", "BeaconDLQ"}},
	"rum":       {{"Rum", "RumQueue"}, {"Rum", "RumDLQ"}},
	"ux":        {{"Ux", "UxQueue"}, {"Ux", "UxDLQ"}},
	"notify":    {{"Notify", "NotifyQueue"}, {"Notify", "NotifyDLQ"}},
}

// queueID is the logical id of work queue name ("audit").
func queueID(t *testing.T, stack awscdk.Stack, name string) string {
	t.Helper()
	return logicalID(t, stack, queuePaths[name][0]...)
}

// dlqID is the logical id of the dead-letter queue of work queue name.
func dlqID(t *testing.T, stack awscdk.Stack, name string) string {
	t.Helper()
	return logicalID(t, stack, queuePaths[name][1]...)
}

// getAttArn returns the logical id in {"Fn::GetAtt": [id, "Arn"]}, or "".
func getAttArn(v any) string {
	m, _ := v.(map[string]any)
	ga, _ := m["Fn::GetAtt"].([]any)
	if len(ga) == 2 && ga[1] == "Arn" {
		id, _ := ga[0].(string)
		return id
	}
	return ""
}

// statement is one IAM policy statement, with Action always a list.
type statement struct {
	Effect   string
	Actions  []string
	Resource any
}

// functionStatements returns every statement of the policies attached to the
// role of function fn (logical id).
func functionStatements(t *testing.T, tmpl assertions.Template, fn string) []statement {
	t.Helper()
	props, ok := resources(tmpl, "AWS::Lambda::Function")[fn]
	if !ok {
		t.Fatalf("no function %s", fn)
	}
	role := getAttArn(props["Role"])
	if role == "" {
		t.Fatalf("function %s has no role of its own: %v", fn, props["Role"])
	}
	var docs []any
	if rp, ok := resources(tmpl, "AWS::IAM::Role")[role]; ok {
		pols, _ := rp["Policies"].([]any)
		for _, p := range pols {
			docs = append(docs, p.(map[string]any)["PolicyDocument"])
		}
	}
	for _, p := range resources(tmpl, "AWS::IAM::Policy") {
		for _, r := range p["Roles"].([]any) {
			if ref, _ := r.(map[string]any)["Ref"].(string); ref == role {
				docs = append(docs, p["PolicyDocument"])
			}
		}
	}
	var out []statement
	for _, d := range docs {
		for _, st := range d.(map[string]any)["Statement"].([]any) {
			st := st.(map[string]any)
			s := statement{Resource: st["Resource"]}
			s.Effect, _ = st["Effect"].(string)
			switch a := st["Action"].(type) {
			case string:
				s.Actions = []string{a}
			case []any:
				for _, x := range a {
					s.Actions = append(s.Actions, x.(string))
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// actionMatches tells whether an IAM action pattern (with * wildcards, any case)
// covers action.
func actionMatches(pattern, action string) bool {
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(strings.ToLower(pattern)), `\*`, ".*") + "$"
	return regexp.MustCompile(re).MatchString(strings.ToLower(action))
}

// allows tells whether some Allow statement grants action on a resource that
// mentions the logical id resource ("" for any resource).
func allows(stmts []statement, action, resource string) bool {
	for _, s := range stmts {
		if s.Effect != "Allow" {
			continue
		}
		for _, a := range s.Actions {
			if !actionMatches(a, action) {
				continue
			}
			if resource == "" || slices.Contains(stringsIn(s.Resource), resource) {
				return true
			}
		}
	}
	return false
}

// actionsWithPrefix lists the allowed actions starting with prefix (e.g. "s3:").
func actionsWithPrefix(stmts []statement, prefix string) []string {
	var out []string
	for _, s := range stmts {
		for _, a := range s.Actions {
			if s.Effect == "Allow" && strings.HasPrefix(strings.ToLower(a), prefix) {
				out = append(out, a)
			}
		}
	}
	return out
}

// ---- schedule -----------------------------------------------------------------------

func TestDailyRulesRunSchedulerAtDefaultHour(t *testing.T) {
	o, tmpl := openvitals(t)
	check(t, "five daily rules and the sweep rule", func() { tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(6)) })
	for id, job := range map[string]string{"DailySchedule": "audits", "MultistepSchedule": "multistep", "UxSchedule": "ux"} {
		rule := resources(tmpl, "AWS::Events::Rule")[logicalID(t, o.stack, "Schedules", id)]
		if rule == nil {
			t.Fatalf("no rule %s", id)
		}
		if rule["ScheduleExpression"] != "cron(0 3 * * ? *)" || rule["State"] != "ENABLED" {
			t.Errorf("%s: %v, %v; want daily at 03:00 UTC", id, rule["ScheduleExpression"], rule["State"])
		}
		targets := rule["Targets"].([]any)
		target := targets[0].(map[string]any)
		arn, _ := json.Marshal(target["Arn"])
		if len(targets) != 1 || !strings.Contains(string(arn), fnID(t, o, "scheduler")) {
			t.Errorf("%s targets %v; want the scheduler", id, targets)
		}
		// The event names the job and carries the scheduled time, as the scheduler reads them.
		in, _ := json.Marshal(target["InputTransformer"])
		for _, want := range []string{`\"jobs\":[\"` + job + `\"]`, "$.time", `\"detail-type\":\"Scheduled Event\"`} {
			if !strings.Contains(string(in), want) {
				t.Errorf("%s: input %s lacks %s", id, in, want)
			}
		}
	}
	for _, id := range []string{"DailySchedule", "MultistepSchedule", "UxSchedule", "SweepSchedule"} {
		check(t, "EventBridge may invoke the scheduler for "+id, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"Principal":    "events.amazonaws.com",
				"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID(t, o, "scheduler"), "Arn"}},
				"SourceArn":    map[string]any{"Fn::GetAtt": []any{logicalID(t, o.stack, "Schedules", id), "Arn"}},
			})
		})
	}
}

// TestSweepRuleRunsSchedulerWithinTheDeadlines: the scheduler is invoked for the sweep of
// overdue work (an event naming only the sweep) six times within the shortest deadline of the
// audit and multistep queues (a visibility timeout per delivery: 150 minutes for the multistep
// queue, 30 minutes by 5 receives), and it may read those queues' attributes, which give it the deadlines, and queue
// overdue work again.
func TestSweepRuleRunsSchedulerWithinTheDeadlines(t *testing.T) {
	o, tmpl := openvitals(t)
	rule := resources(tmpl, "AWS::Events::Rule")[logicalID(t, o.stack, "Schedules", "SweepSchedule")]
	if rule == nil {
		t.Fatal("no sweep rule")
	}
	queues := resources(tmpl, "AWS::SQS::Queue")
	shortest := 0.0
	for _, name := range []string{"audit", "multistep"} {
		q := queues[queueID(t, o.stack, name)]
		vis, _ := q["VisibilityTimeout"].(float64)
		receives, _ := q["RedrivePolicy"].(map[string]any)["maxReceiveCount"].(float64)
		if d := vis * receives; shortest == 0 || d < shortest {
			shortest = d
		}
	}
	if want := fmt.Sprintf("rate(%d minutes)", int(shortest/60/6)); rule["ScheduleExpression"] != want || shortest != 150*60 {
		t.Errorf("sweep rule %v, want %s (a sixth of the shortest deadline, %v s)", rule["ScheduleExpression"], want, shortest)
	}
	targets := rule["Targets"].([]any)
	target := targets[0].(map[string]any)
	arn, _ := json.Marshal(target["Arn"])
	in, _ := json.Marshal(target["InputTransformer"])
	if len(targets) != 1 || !strings.Contains(string(arn), fnID(t, o, "scheduler")) || !strings.Contains(string(in), `\"jobs\":[\"sweep\"]`) || !strings.Contains(string(in), "$.time") {
		t.Errorf("sweep rule targets %v, input %s; want the scheduler, with an event naming the sweep and its time", targets, in)
	}
	stmts := functionStatements(t, tmpl, fnID(t, o, "scheduler"))
	for _, name := range []string{"audit", "multistep"} {
		for _, action := range []string{"sqs:GetQueueAttributes", "sqs:SendMessage"} {
			if !allows(stmts, action, queueID(t, o.stack, name)) {
				t.Errorf("the scheduler may not %s on the %s queue", action, name)
			}
		}
	}
	for _, action := range []string{"dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} {
		if !allows(stmts, action, logicalID(t, o.stack, "Storage", "Table")) {
			t.Errorf("the scheduler may not %s on the table", action)
		}
	}
}

// imageTag returns the tag of the container image of function fn: the hash of
// its image asset.
func imageTag(t *testing.T, tmpl assertions.Template, fn string) string {
	t.Helper()
	props := resources(tmpl, "AWS::Lambda::Function")[fn]
	uri := stringsIn(props["Code"].(map[string]any)["ImageUri"])
	if len(uri) != 1 || !strings.Contains(uri[0], ":") {
		t.Fatalf("function %s has no image URI: %v", fn, props["Code"])
	}
	return uri[0][strings.LastIndex(uri[0], ":")+1:]
}

func TestDailyHourIsConfigurable(t *testing.T) {
	_, base := openvitals(t)
	baseTag := imageTag(t, base, fnID(t, synthed.o, "audit-worker"))

	// A property, with a different audit worker binary: the image must change.
	other := t.TempDir()
	if err := writeBootstraps(other, "another build"); err != nil {
		t.Fatal(err)
	}
	hour := 17
	s := synth(t, &openvitalsStackProps{DailyHourUTC: &hour, FunctionsDir: other}, nil)
	check(t, "hour 17 from a property", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{"ScheduleExpression": "cron(0 17 * * ? *)"})
	})
	if tag := imageTag(t, s.tmpl, fnID(t, s.o, "audit-worker")); tag == baseTag {
		t.Errorf("a different audit worker binary kept image %s: the image would not be rebuilt", tag)
	}

	// The context, as `cdk deploy -c dailyHourUtc=0` passes it (a string), with
	// the same binaries in another directory: the image must stay the same.
	same := t.TempDir()
	if err := writeBootstraps(same, "placeholder"); err != nil {
		t.Fatal(err)
	}
	s = synth(t, &openvitalsStackProps{FunctionsDir: same}, map[string]any{
		contextDailyHourUTC: "0", contextAuditMaxConcurrency: 5, contextMultistepMaxConcurrency: "7",
		contextUXHourUTC: "22", contextAuditMemoryMB: "2048",
	})
	rules := resources(s.tmpl, "AWS::Events::Rule")
	for id, want := range map[string]string{"DailySchedule": "cron(0 0 * * ? *)", "MultistepSchedule": "cron(0 0 * * ? *)", "UxSchedule": "cron(0 22 * * ? *)"} {
		if got := rules[logicalID(t, s.o.stack, "Schedules", id)]["ScheduleExpression"]; got != want {
			t.Errorf("%s from the context: %v, want %s (multistep follows dailyHourUtc, ux has its own)", id, got, want)
		}
	}
	check(t, "audit concurrency 5 from the context", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.o, "audit-worker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 5},
		})
	})
	check(t, "multistep concurrency 7 from the context", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.o, "multistep-worker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 7},
		})
	})
	if mem := resources(s.tmpl, "AWS::Lambda::Function")[fnID(t, s.o, "audit-worker")]["MemorySize"]; mem != 2048.0 {
		t.Errorf("audit worker memory %v MB, want the context's 2048", mem)
	}
	if tag := imageTag(t, s.tmpl, fnID(t, s.o, "audit-worker")); tag != baseTag {
		t.Errorf("the same binaries in another directory changed the image from %s to %s", baseTag, tag)
	}

	// Only the multistep worker rebuilt: the shared image must change for both functions.
	ms := t.TempDir()
	if err := writeBootstraps(ms, "placeholder"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ms, multistepWorkerFunction, "bootstrap"), []byte("new multistep build\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := 9
	s = synth(t, &openvitalsStackProps{FunctionsDir: ms, MultistepMaxConcurrency: &n}, nil)
	check(t, "multistep concurrency 9 from a property", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.o, "multistep-worker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 9},
		})
	})
	for _, fn := range browserFunctions {
		if tag := imageTag(t, s.tmpl, fnID(t, s.o, fn)); tag == baseTag {
			t.Errorf("%s: a new multistep worker binary kept image %s: the image would not be rebuilt", fn, tag)
		}
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	ints := func(n int) *int { return &n }
	cases := []struct {
		name    string
		props   openvitalsStackProps
		context map[string]any
		want    string
	}{
		{"hour 24", openvitalsStackProps{DailyHourUTC: ints(24)}, nil, contextDailyHourUTC},
		{"hour -1", openvitalsStackProps{DailyHourUTC: ints(-1)}, nil, contextDailyHourUTC},
		{"multistep hour 24", openvitalsStackProps{MultistepHourUTC: ints(24)}, nil, contextMultistepHourUTC},
		{"ux hour 24", openvitalsStackProps{UXHourUTC: ints(24)}, nil, contextUXHourUTC},
		{"context ux hour text", openvitalsStackProps{}, map[string]any{contextUXHourUTC: "noon"}, contextUXHourUTC},
		{"context hour 24", openvitalsStackProps{}, map[string]any{contextDailyHourUTC: "24"}, contextDailyHourUTC},
		{"context hour 24 (number)", openvitalsStackProps{}, map[string]any{contextDailyHourUTC: 24}, contextDailyHourUTC},
		{"context hour 3.5", openvitalsStackProps{}, map[string]any{contextDailyHourUTC: 3.5}, contextDailyHourUTC},
		{"context hour text", openvitalsStackProps{}, map[string]any{contextDailyHourUTC: "three"}, contextDailyHourUTC},
		{"concurrency 1", openvitalsStackProps{AuditMaxConcurrency: ints(1)}, nil, contextAuditMaxConcurrency},
		{"no audits a day", openvitalsStackProps{AuditsPerDay: ints(0)}, nil, contextAuditsPerDay},
		{"context audits of 16 minutes", openvitalsStackProps{}, map[string]any{contextAuditSeconds: "960"}, contextAuditSeconds},
		{"context audit window of 25 hours", openvitalsStackProps{}, map[string]any{contextAuditWindowHours: 25}, contextAuditWindowHours},
		{"audit worker of 1,769 MB", openvitalsStackProps{AuditMemoryMB: ints(1769)}, nil, contextAuditMemoryMB},
		{"context audit worker of 10,241 MB", openvitalsStackProps{}, map[string]any{contextAuditMemoryMB: "10241"}, contextAuditMemoryMB},
		{"multistep concurrency 1", openvitalsStackProps{MultistepMaxConcurrency: ints(1)}, nil, contextMultistepMaxConcurrency},
		{"context multistep concurrency 1001", openvitalsStackProps{}, map[string]any{contextMultistepMaxConcurrency: "1001"}, contextMultistepMaxConcurrency},
		{"no binaries", openvitalsStackProps{FunctionsDir: t.TempDir()}, nil, "make build"},
		{"no ux worker binary", openvitalsStackProps{FunctionsDir: withoutBootstrap(t, "ux-worker")}, nil, "functions/ux-worker"},
		{"no routes file", openvitalsStackProps{RoutesFile: filepath.Join(t.TempDir(), "routes.json")}, nil, "route table"},
		{"routes of a group infra does not know", openvitalsStackProps{RoutesFile: routesFile(t, `{"defaultGroup": "websites", "routes": [
			{"group": "websites", "method": "GET", "pattern": "/websites", "access": "viewer"},
			{"group": "reports", "method": "GET", "pattern": "/{websiteID}/reports", "access": "viewer"}]}`)}, nil, `"reports" has no settings in infra`},
		{"report retention 30 days", openvitalsStackProps{ReportRetentionDays: ints(30)}, nil, contextReportRetentionDays},
		{"real-user retention 30 days", openvitalsStackProps{}, map[string]any{contextRUMRetentionDays: "30"}, contextRUMRetentionDays},
		{"RUM function's concurrency -1", openvitalsStackProps{RUMMaxConcurrency: ints(-1)}, nil, contextRUMMaxConcurrency},
		{"context report retention text", openvitalsStackProps{}, map[string]any{contextReportRetentionDays: "a year"}, contextReportRetentionDays},
		{"API throttle rate 0", openvitalsStackProps{APIThrottleRate: ints(0)}, nil, contextAPIThrottleRate},
		{"context RUM burst 5001", openvitalsStackProps{}, map[string]any{contextRUMThrottleBurst: "5001"}, contextRUMThrottleBurst},
		{"context trustViewerCountry maybe", openvitalsStackProps{}, map[string]any{contextTrustViewerCountry: "maybe"}, contextTrustViewerCountry},
		{"alarm e-mail without @", openvitalsStackProps{AlarmEmail: "ops.example.com"}, nil, contextAlarmEmail},
		{"context alarm e-mail with a name", openvitalsStackProps{}, map[string]any{contextAlarmEmail: "Ops <ops@example.com>"}, contextAlarmEmail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range c.context {
				ctx[k] = v
			}
			app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
			p := c.props
			if p.FunctionsDir == "" {
				p.FunctionsDir = functionsDir
			}
			o, err := newOpenvitalsStack(app, "OpenvitalsStack", &p)
			if err == nil || o != nil {
				t.Fatalf("accepted: stack %v, err %v", o, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// withoutBootstrap returns a functions directory holding every bootstrap but name's.
func withoutBootstrap(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeBootstraps(dir, "placeholder"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, name, "bootstrap")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// routesFile writes a route table holding content and returns its path.
func routesFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "routes.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// elfHeader returns a minimal 64-bit little-endian ELF executable header for machine.
func elfHeader(machine elf.Machine) []byte {
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(h[18:], uint16(machine))
	binary.LittleEndian.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(h[52:], 64) // e_ehsize
	binary.LittleEndian.PutUint16(h[54:], 56) // e_phentsize
	binary.LittleEndian.PutUint16(h[58:], 64) // e_shentsize
	return h
}

func TestBinariesForAnotherArchitectureAreRefused(t *testing.T) {
	dir := t.TempDir()
	for machine, ok := range map[elf.Machine]bool{elf.EM_AARCH64: true, elf.EM_X86_64: false} {
		path := filepath.Join(dir, machine.String())
		if err := os.WriteFile(path, elfHeader(machine), 0o755); err != nil {
			t.Fatal(err)
		}
		err := checkBootstrap(path)
		if ok && err != nil {
			t.Errorf("%s refused: %v", machine, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "GOARCH=arm64")) {
			t.Errorf("%s: want a refusal naming GOARCH=arm64, got %v", machine, err)
		}
	}
}

// ---- queues and workers -------------------------------------------------------------

func TestAuditQueueRedrivesToDLQ(t *testing.T) {
	o, tmpl := openvitals(t)
	dlq := dlqID(t, o.stack, "audit")
	audit := queueID(t, o.stack, "audit")
	queues := resources(tmpl, "AWS::SQS::Queue")
	q := queues[audit]
	want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(5)}
	if got := q["RedrivePolicy"]; !reflect.DeepEqual(got, want) {
		t.Errorf("audit queue redrive policy %v, want %v", got, want)
	}
	worker := resources(tmpl, "AWS::Lambda::Function")[fnID(t, o, "audit-worker")]
	vis, _ := q["VisibilityTimeout"].(float64)
	timeout, _ := worker["Timeout"].(float64)
	if vis < 6*timeout || vis < 15*60 {
		t.Errorf("audit queue visibility timeout %v s: want at least 6 × the worker's %v s", vis, timeout)
	}
	if _, ok := queues[dlq]["RedrivePolicy"]; ok {
		t.Error("the audit DLQ redrives itself")
	}
	if r := queues[dlq]["MessageRetentionPeriod"]; r != float64(14*24*3600) {
		t.Errorf("audit DLQ retention %v, want 14 days", r)
	}
	check(t, "audit DLQ denies plain HTTP", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), map[string]any{
			"Queues": []any{map[string]any{"Ref": dlq}},
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
				assertions.Match_ObjectLike(&map[string]any{"Effect": "Deny"}),
			})},
		})
	})

	// The purge queue must also outlast its worker six times over.
	purge := queues[queueID(t, o.stack, "purge")]
	pw := resources(tmpl, "AWS::Lambda::Function")[fnID(t, o, "purge-worker")]
	if v, to := purge["VisibilityTimeout"].(float64), pw["Timeout"].(float64); v < 6*to {
		t.Errorf("purge queue visibility timeout %v s < 6 × the purge worker's %v s", v, to)
	}
}

func TestMultistepQueueRedrivesToDLQ(t *testing.T) {
	o, tmpl := openvitals(t)
	dlq := dlqID(t, o.stack, "multistep")
	ms := queueID(t, o.stack, "multistep")
	queues := resources(tmpl, "AWS::SQS::Queue")
	q := queues[ms]
	want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(5)}
	if got := q["RedrivePolicy"]; !reflect.DeepEqual(got, want) {
		t.Errorf("multistep queue redrive policy %v, want %v", got, want)
	}
	worker := resources(tmpl, "AWS::Lambda::Function")[fnID(t, o, "multistep-worker")]
	vis, _ := q["VisibilityTimeout"].(float64)
	timeout, _ := worker["Timeout"].(float64)
	if timeout != 5*60 {
		t.Errorf("multistep worker timeout %v s, want 300", timeout)
	}
	if vis < 6*timeout {
		t.Errorf("multistep queue visibility timeout %v s: want at least 6 × the worker's %v s", vis, timeout)
	}
	if _, ok := queues[dlq]["RedrivePolicy"]; ok {
		t.Error("the multistep DLQ redrives itself")
	}
	if r := queues[dlq]["MessageRetentionPeriod"]; r != float64(14*24*3600) {
		t.Errorf("multistep DLQ retention %v, want 14 days", r)
	}
	for _, id := range []string{ms, dlq} {
		if queues[id]["SqsManagedSseEnabled"] != true {
			t.Errorf("queue %s is not encrypted (SqsManagedSseEnabled %v)", id, queues[id]["SqsManagedSseEnabled"])
		}
		check(t, id+" denies plain HTTP", func() {
			tmpl.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), map[string]any{
				"Queues": []any{map[string]any{"Ref": id}},
				"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
					assertions.Match_ObjectLike(&map[string]any{
						"Effect":    "Deny",
						"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
					}),
				})},
			})
		})
	}
}

func TestEventSources(t *testing.T) {
	o, tmpl := openvitals(t)
	check(t, "eight event sources", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(8))
	})
	check(t, "fan-out worker: one message at a time, partial failures, a few at once", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "fanout-worker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "fanout"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": fanoutWorkerMaxConcurrency},
		})
	})
	check(t, "RUM rebatcher: up to 2,000 beacons gathered for up to 30 s, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":                   map[string]any{"Ref": fnID(t, o, "rum-batcher")},
			"EventSourceArn":                 map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "beacon"), "Arn"}},
			"BatchSize":                      rumBatcherBatchSize,
			"MaximumBatchingWindowInSeconds": rumBatcherWindowSeconds,
			"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "RUM aggregator: batches of 10 from the FIFO queue, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "rum-aggregator")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "rum"), "Arn"}},
			"BatchSize":             10,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "ux worker: one website at a time, partial failures, 2 at most", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "ux-worker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "ux"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": uxWorkerMaxConcurrency},
		})
	})
	check(t, "multistep worker: one run at a time, partial failures, 2 at most", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "multistep-worker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "multistep"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": defaultMultistepMaxConcurrency},
		})
	})
	check(t, "audit worker: one message at a time, partial failures, as many as the default day's audits need (10)", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "audit-worker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "audit"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": 10},
		})
	})
	check(t, "purge worker: batches of 10, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, o, "purge-worker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{queueID(t, o.stack, "purge"), "Arn"}},
			"BatchSize":             10,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
}

// ---- functions ----------------------------------------------------------------------

// sharedEnv is the environment every function gets: the generated names of the
// shared resources, queues as URLs.
func sharedEnv(t *testing.T, stack awscdk.Stack) map[string]any {
	return map[string]any{
		"OPENVITALS_TABLE":           map[string]any{"Ref": logicalID(t, stack, "Storage", "Table")},
		"OPENVITALS_BUCKET":          map[string]any{"Ref": logicalID(t, stack, "Storage", "Bucket")},
		"OPENVITALS_PURGE_QUEUE":     map[string]any{"Ref": queueID(t, stack, "purge")},
		"OPENVITALS_AUDIT_QUEUE":     map[string]any{"Ref": queueID(t, stack, "audit")},
		"OPENVITALS_MULTISTEP_QUEUE": map[string]any{"Ref": queueID(t, stack, "multistep")},
		"OPENVITALS_FANOUT_QUEUE":    map[string]any{"Ref": queueID(t, stack, "fanout")},
		"OPENVITALS_BEACON_QUEUE":    map[string]any{"Ref": queueID(t, stack, "beacon")},
		"OPENVITALS_RUM_QUEUE":       map[string]any{"Ref": queueID(t, stack, "rum")},
		"OPENVITALS_UX_QUEUE":        map[string]any{"Ref": queueID(t, stack, "ux")},
	}
}

// TestEveryFunctionGetsTheSharedEnvironment: service.FromEnv opens every queue at start, so
// a function without one of these variables would not start.
func TestEveryFunctionGetsTheSharedEnvironment(t *testing.T) {
	o, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	for name := range o.functions {
		props, ok := fns[fnID(t, o, name)]
		if !ok {
			t.Errorf("%s: no function", name)
			continue
		}
		env, _ := props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k, want := range sharedEnv(t, o.stack) {
			if got := vars[k]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s = %v, want %v", name, k, got, want)
			}
		}
	}
}

// TestDeployedFunctionsAreTheFunctionDirectories: the stack deploys one function per
// directory of functions/ holding a main.go (what `make build` builds), and no other.
func TestDeployedFunctionsAreTheFunctionDirectories(t *testing.T) {
	o, tmpl := openvitals(t)
	dirs, err := functionDirs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, ok := o.functions[d]; !ok {
			t.Errorf("functions/%s is built, but the stack does not deploy it", d)
		}
	}
	for name := range o.functions {
		if !slices.Contains(dirs, name) {
			t.Errorf("the stack deploys %s, but there is no functions/%s/main.go", name, name)
		}
	}
	// What the stack recorded is what the template holds.
	fns := resources(tmpl, "AWS::Lambda::Function")
	if len(fns) != len(o.functions) {
		t.Errorf("%d functions in the template, %d deployed: %v", len(fns), len(o.functions), keys(fns))
	}
	for name := range o.functions {
		if _, ok := fns[fnID(t, o, name)]; !ok {
			t.Errorf("%s: not a function of the template", name)
		}
	}
}

func TestGoFunctions(t *testing.T) {
	o, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	asm := synthed.app.Synth(nil)
	zip := regexp.MustCompile(`^([0-9a-f]{64})\.zip$`)
	for name := range o.functions {
		if slices.Contains(browserFunctions, name) {
			continue
		}
		props := fns[fnID(t, o, name)]
		if props["Runtime"] != "provided.al2023" || props["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v, handler %v, want provided.al2023 and bootstrap", name, props["Runtime"], props["Handler"])
		}
		if a := props["Architectures"]; !reflect.DeepEqual(a, []any{"arm64"}) {
			t.Errorf("%s: architectures %v, want arm64", name, a)
		}
		code, _ := props["Code"].(map[string]any)
		key, _ := code["S3Key"].(string)
		m := zip.FindStringSubmatch(key)
		if m == nil {
			t.Errorf("%s: code %v, want a zip asset", name, code)
			continue
		}
		// The asset is the function's own bootstrap (each placeholder names its function).
		b, err := os.ReadFile(filepath.Join(*asm.Directory(), "asset."+m[1], "bootstrap"))
		if err != nil || string(b) != "placeholder "+name+"\n" {
			t.Errorf("%s runs the bootstrap %q (%v), want its own", name, b, err)
		}
	}
}

func TestAuditWorkerIsContainerFunction(t *testing.T) {
	o, tmpl := openvitals(t)
	env := sharedEnv(t, o.stack)
	env["OPENVITALS_AUDIT_RUNS"] = "3"
	env["OPENVITALS_NODE"] = imageNode
	env["OPENVITALS_LIGHTHOUSE_RUNNER"] = imageRunner
	env["OPENVITALS_CHROMIUM_BIN"] = imageChromium
	found := *tmpl.FindResources(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Properties": map[string]any{
			"PackageType":      "Image",
			"MemorySize":       assertions.Match_AnyValue(),
			"Timeout":          900,
			"Architectures":    []any{"arm64"},
			"EphemeralStorage": map[string]any{"Size": auditWorkerTmpMB},
			"Environment":      map[string]any{"Variables": env},
			"Code":             map[string]any{"ImageUri": assertions.Match_AnyValue()},
		},
	})
	id := fnID(t, o, "audit-worker")
	if _, ok := found[id]; !ok || len(found) != 1 {
		t.Fatalf("want only %s as a 15-minute arm64 image function with the browser paths; matched %v", id, keys(found))
	}
	checkEntrypoint(t, tmpl, id, auditWorkerFunction)
	props := resources(tmpl, "AWS::Lambda::Function")[id]
	if mem, _ := props["MemorySize"].(float64); mem != defaultAuditMemoryMB {
		t.Errorf("audit worker memory %v MB, want the default %d", mem, defaultAuditMemoryMB)
	}
	for _, p := range []string{"Handler", "Runtime"} {
		if _, ok := props[p]; ok {
			t.Errorf("image function sets %s", p)
		}
	}
}

// checkEntrypoint checks that image function fn (logical id) runs the binary of function
// name, and nothing else: no command, no working directory of its own.
func checkEntrypoint(t *testing.T, tmpl assertions.Template, fn, name string) {
	t.Helper()
	props := resources(tmpl, "AWS::Lambda::Function")[fn]
	want := map[string]any{"EntryPoint": []any{"/opt/openvitals/" + name}}
	if got := props["ImageConfig"]; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: ImageConfig %v, want %v", name, got, want)
	}
	if imageBinary(name) != "/opt/openvitals/"+name {
		t.Errorf("imageBinary(%q) = %q", name, imageBinary(name))
	}
}

func TestMultistepWorkerIsContainerFunction(t *testing.T) {
	o, tmpl := openvitals(t)
	env := sharedEnv(t, o.stack)
	env["OPENVITALS_CHROMIUM_BIN"] = imageChromium
	id := fnID(t, o, "multistep-worker")
	found := *tmpl.FindResources(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Properties": map[string]any{
			"PackageType":   "Image",
			"MemorySize":    2048,
			"Timeout":       300,
			"Architectures": []any{"arm64"},
			"Environment":   map[string]any{"Variables": env},
			"Code":          map[string]any{"ImageUri": assertions.Match_AnyValue()},
		},
	})
	if _, ok := found[id]; !ok || len(found) != 1 {
		t.Fatalf("want only %s as a 5-minute 2048 MB arm64 image function with Chromium's path; matched %v", id, keys(found))
	}
	checkEntrypoint(t, tmpl, id, multistepWorkerFunction)
	props := resources(tmpl, "AWS::Lambda::Function")[id]
	for _, p := range []string{"Handler", "Runtime"} {
		if _, ok := props[p]; ok {
			t.Errorf("image function sets %s", p)
		}
	}
	// A run stops after 3 minutes; the function must outlive it.
	if to, _ := props["Timeout"].(float64); to < 3*60+60 {
		t.Errorf("multistep worker timeout %v s leaves no time after a 3-minute run", to)
	}
	// The same image as the audit worker: one build, one push.
	if a, m := imageTag(t, tmpl, fnID(t, o, "audit-worker")), imageTag(t, tmpl, id); a != m {
		t.Errorf("audit worker image %s, multistep worker image %s: want the same", a, m)
	}
}

// TestBrowserImageAsset reads the cloud assembly: the image is built from a
// copy of layers/browser without node_modules, for linux/arm64, with each browser
// worker's binary as the build context of its name the Dockerfile copies from, and
// both workers use it.
func TestBrowserImageAsset(t *testing.T) {
	o, _ := openvitals(t)
	asm := synthed.app.Synth(nil)
	raw, err := os.ReadFile(filepath.Join(*asm.Directory(), *o.stack.ArtifactId()+".assets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		DockerImages map[string]struct {
			Source struct {
				Directory           string            `json:"directory"`
				Platform            string            `json:"platform"`
				DockerBuildContexts map[string]string `json:"dockerBuildContexts"`
			} `json:"source"`
		} `json:"dockerImages"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.DockerImages) != 1 {
		t.Fatalf("%d docker images, want 1", len(manifest.DockerImages))
	}
	for hash, img := range manifest.DockerImages {
		if img.Source.Platform != "linux/arm64" {
			t.Errorf("image platform %q, want linux/arm64", img.Source.Platform)
		}
		want := map[string]string{}
		for _, fn := range browserFunctions {
			want[fn] = filepath.Join(functionsDir, fn)
		}
		if got := img.Source.DockerBuildContexts; !reflect.DeepEqual(got, want) {
			t.Errorf("build contexts %v, want %v", got, want)
		}
		for _, fn := range browserFunctions {
			if tag := imageTag(t, synthed.tmpl, fnID(t, o, fn)); tag != hash {
				t.Errorf("%s image tag %s, asset %s", fn, tag, hash)
			}
		}
		staged := filepath.Join(*asm.Directory(), img.Source.Directory)
		for _, f := range []string{"Dockerfile", "package.json", "package-lock.json", "runner.mjs"} {
			if _, err := os.Stat(filepath.Join(staged, f)); err != nil {
				t.Errorf("image context lacks %s: %v", f, err)
			}
		}
		if _, err := os.Stat(filepath.Join(staged, "node_modules")); !os.IsNotExist(err) {
			t.Errorf("image context holds node_modules (err %v)", err)
		}
		if _, err := os.Stat(filepath.Join(browserImageDir, "node_modules")); err != nil {
			t.Logf("note: %s/node_modules does not exist here, so its exclusion is not exercised", browserImageDir)
		}
	}
}

// dockerfileInstructions returns the instructions of a Dockerfile, continued lines joined and
// comments dropped.
func dockerfileInstructions(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(browserImageDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cur := ""
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		if l = cur + l; strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
		cur = ""
	}
	return lines
}

// TestDockerfileMatchesStack keeps layers/browser/Dockerfile and the stack in
// step: the paths the function is given are the image's, every install step is
// install.sh's, each binary comes from the build context the stack passes and is
// installed where the stack's entrypoint expects it.
func TestDockerfileMatchesStack(t *testing.T) {
	env := map[string]string{}
	var entrypoint, froms, runs []string
	for _, l := range dockerfileInstructions(t) {
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "ENV":
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		case "ENTRYPOINT":
			entrypoint = f[1:]
		case "FROM":
			froms = append(froms, strings.Join(f[1:], " "))
		case "RUN":
			runs = append(runs, strings.Join(f[1:], " "))
		}
	}
	for k, want := range map[string]string{
		"OPENVITALS_NODE":              imageNode,
		"OPENVITALS_LIGHTHOUSE_RUNNER": imageRunner,
		"OPENVITALS_CHROMIUM_BIN":      imageChromium,
		"HOME":                         "/tmp",
	} {
		if env[k] != want {
			t.Errorf("Dockerfile ENV %s=%q, the stack uses %q", k, env[k], want)
		}
	}
	// Only a default: the stack sets each function's entrypoint.
	if got := strings.Join(entrypoint, " "); got != `["`+imageBinary(auditWorkerFunction)+`"]` {
		t.Errorf("ENTRYPOINT %s", got)
	}
	if len(froms) == 0 || !strings.HasPrefix(froms[len(froms)-1], "debian:bookworm") {
		t.Errorf("final stage %q: want Debian 12, the Chromium the tests measure with", froms)
	}

	// Every RUN is the install script (so what make deps runs is what builds the image), and
	// together they run each of its steps.
	steps := map[string]bool{}
	var install string // the RUN that installs the binaries
	for _, r := range runs {
		f := strings.Fields(r)
		i := slices.IndexFunc(f, func(s string) bool { return strings.HasSuffix(s, "/install.sh") || s == "./install.sh" })
		if i < 0 {
			t.Errorf("RUN %s: every install step belongs in install.sh", r)
			continue
		}
		for _, s := range f[i+1:] {
			if s == "&&" {
				break
			}
			steps[s] = true
			if s == "bootstraps" {
				install = r
			}
		}
		if strings.Contains(r, "apt-get install") || strings.Contains(r, "npm ci") {
			t.Errorf("RUN %s installs by itself, beside install.sh", r)
		}
	}
	for _, s := range []string{"packages", "npm", "bootstraps", "check"} {
		if !steps[s] {
			t.Errorf("no RUN of install.sh's %s step: %q", s, runs)
		}
	}
	f := strings.Fields(install)
	dest := ""
	if i := slices.Index(f, "--dest"); i >= 0 && i+1 < len(f) {
		dest = f[i+1]
	}
	for _, fn := range browserFunctions {
		// --mount=type=bind,from=<fn>,target=<dir> and --bootstrap <fn>=<dir>/bootstrap
		target := ""
		for _, s := range f {
			opts, ok := strings.CutPrefix(s, "--mount=")
			if !ok || !strings.Contains(","+opts+",", ",from="+fn+",") {
				continue
			}
			for _, o := range strings.Split(opts, ",") {
				if v, ok := strings.CutPrefix(o, "target="); ok {
					target = v
				}
			}
		}
		if target == "" {
			t.Errorf("%s: no RUN --mount of the build context %q beside the bootstraps step: %q", fn, fn, install)
			continue
		}
		if i := slices.Index(f, fn+"="+target+"/bootstrap"); i < 1 || f[i-1] != "--bootstrap" {
			t.Errorf("%s: install.sh is not given --bootstrap %s=%s/bootstrap: %q", fn, fn, target, install)
		}
		if dest+"/"+fn != imageBinary(fn) {
			t.Errorf("%s: installed as %s/%s, the stack runs %s", fn, dest, fn, imageBinary(fn))
		}
	}
}

// TestInstallScriptInstallsBootstraps runs layers/browser/install.sh's bootstraps step, the one
// step `make deps` does not run here, the way the Dockerfile does, into a temporary directory.
func TestInstallScriptInstallsBootstraps(t *testing.T) {
	src, dest := t.TempDir(), t.TempDir()
	var args []string
	for _, fn := range browserFunctions {
		if err := os.WriteFile(filepath.Join(src, fn), []byte("binary of "+fn), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--bootstrap", fn+"="+filepath.Join(src, fn))
	}
	script := filepath.Join(browserImageDir, "install.sh")
	run := func(args ...string) (string, error) {
		out, err := exec.Command("bash", append([]string{script}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(append(append([]string{"--dest", dest}, args...), "bootstraps")...); err != nil {
		t.Fatalf("install.sh bootstraps: %v\n%s", err, out)
	}
	for _, fn := range browserFunctions {
		path := filepath.Join(dest, strings.TrimPrefix(imageBinary(fn), "/opt/openvitals/"))
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", fn, err)
			continue
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s installed with mode %v, want 0755 (Lambda runs the image as another user)", fn, fi.Mode().Perm())
		}
		if b, _ := os.ReadFile(path); string(b) != "binary of "+fn {
			t.Errorf("%s installed with content %q", fn, b)
		}
	}
	// A missing binary (make build not run) fails the build instead of making an image without it.
	if out, err := run("--dest", dest, "--bootstrap", "audit-worker="+filepath.Join(src, "missing"), "bootstraps"); err == nil {
		t.Errorf("install.sh accepted a missing bootstrap:\n%s", out)
	}
}

// ---- HTTP API -----------------------------------------------------------------------

// apiRoutes reads the route table the main module writes, as the stack does at synthesis.
func apiRoutes(t *testing.T) (defaultGroup string, routes []endpoint) {
	t.Helper()
	raw, err := os.ReadFile("../internal/api/routes.json")
	if err != nil {
		t.Fatal(err)
	}
	var rt struct {
		DefaultGroup string `json:"defaultGroup"`
		Routes       []endpoint
	}
	if err := json.Unmarshal(raw, &rt); err != nil {
		t.Fatal(err)
	}
	if rt.DefaultGroup == "" || len(rt.Routes) == 0 {
		t.Fatalf("routes.json: no defaultGroup or no routes: %s", raw)
	}
	return rt.DefaultGroup, rt.Routes
}

// templateRoutes returns each route key of the template's HTTP API with the logical id of
// the function its integration invokes, checking that each is a Lambda proxy integration
// (payload 2.0) and that no key is defined twice.
func templateRoutes(t *testing.T, tmpl assertions.Template) map[string]string {
	t.Helper()
	integrations := resources(tmpl, "AWS::ApiGatewayV2::Integration")
	got := map[string]string{} // route key -> function logical id
	for id, r := range resources(tmpl, "AWS::ApiGatewayV2::Route") {
		key, _ := r["RouteKey"].(string)
		var integ string
		for _, s := range stringsIn(r["Target"]) {
			if _, ok := integrations[s]; ok {
				integ = s
			}
		}
		if integ == "" {
			t.Errorf("route %s (%s) targets no integration: %v", key, id, r["Target"])
			continue
		}
		i := integrations[integ]
		if i["IntegrationType"] != "AWS_PROXY" || i["PayloadFormatVersion"] != "2.0" {
			t.Errorf("route %s: integration %s is %v with payload %v, want AWS_PROXY 2.0",
				key, integ, i["IntegrationType"], i["PayloadFormatVersion"])
		}
		if _, dup := got[key]; dup {
			t.Errorf("route %s defined twice", key)
		}
		got[key] = getAttArn(i["IntegrationUri"])
	}
	return got
}

func TestHTTPAPIRoutes(t *testing.T) {
	o, tmpl := openvitals(t)
	check(t, "one HTTP API", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "HTTP"})
	})
	check(t, "$default stage, deployed automatically", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"StageName": "$default", "AutoDeploy": true,
			"ApiId": map[string]any{"Ref": logicalID(t, o.stack, "Api", "Api")},
		})
	})
	got := templateRoutes(t, tmpl)

	// Endpoints of the interface that do not depend on the route table's wildcard names. Every
	// route takes ANY method: the group's own mux answers 405 with Allow for a wrong one.
	for key, group := range map[string]string{
		"$default":              "websites",
		"ANY /websites":         "websites",
		"ANY /account/websites": "websites",
		"ANY /openapi.json":     "websites",
		"ANY /rum/{file}":       "rum",
		"ANY /collect":          "rum",
	} {
		if g, ok := got[key]; !ok {
			t.Errorf("no route %s", key)
		} else if w := fnID(t, o, group); g != w {
			t.Errorf("route %s -> %s, want %s (%s)", key, g, w, group)
		}
	}
	for key := range got {
		if key != "$default" && !strings.HasPrefix(key, "ANY /") {
			t.Errorf("route %s: want ANY, so that the group's mux answers a wrong method", key)
		}
	}

	// One integration, and one function API Gateway may invoke, per endpoint group.
	defaultGroup, routes := apiRoutes(t)
	groups := []string{defaultGroup}
	for _, r := range routes {
		groups = append(groups, r.Group)
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if n := len(resources(tmpl, "AWS::ApiGatewayV2::Integration")); n != len(groups) {
		t.Errorf("%d integrations, want one per endpoint group (%d: %v)", n, len(groups), groups)
	}
	for _, g := range groups {
		check(t, "API Gateway invokes "+g, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"Principal":    "apigateway.amazonaws.com",
				"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID(t, o, g), "Arn"}},
			})
		})
	}
}

// TestEveryEndpointIsRouted: each endpoint of the main module's route table reaches its
// group's function (a route ANY <path>, its pattern with {name...} as {name+}), unknown paths
// reach the default group's, and API Gateway routes nothing else.
func TestEveryEndpointIsRouted(t *testing.T) {
	o, tmpl := openvitals(t)
	got := templateRoutes(t, tmpl)
	defaultGroup, routes := apiRoutes(t)
	want := map[string]string{"$default": defaultGroup} // route key -> group
	for _, r := range routes {
		key := "ANY " + strings.ReplaceAll(r.Pattern, "...}", "+}")
		if g, ok := want[key]; ok && g != r.Group {
			t.Errorf("%s is declared by groups %s and %s", r.Pattern, g, r.Group)
		}
		want[key] = r.Group
		fn, ok := got[key]
		switch {
		case !ok:
			t.Errorf("%s %s (%s): no route %s", r.Method, r.Pattern, r.Group, key)
		case fn != fnID(t, o, r.Group):
			t.Errorf("%s %s: route %s -> %s, want the %s function %s", r.Method, r.Pattern, key, fn, r.Group, fnID(t, o, r.Group))
		}
	}
	if fn := got["$default"]; fn != fnID(t, o, defaultGroup) {
		t.Errorf("$default -> %s, want the %s function", fn, defaultGroup)
	}
	for key, fn := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("route %s -> %s is no endpoint of routes.json", key, fn)
		}
	}
}

// TestRouteTableIsChecked: a route table API Gateway cannot route as the handlers do is
// refused, naming what is wrong.
func TestRouteTableIsChecked(t *testing.T) {
	route := func(group, pattern string) string {
		return fmt.Sprintf(`{"group": %q, "method": "GET", "pattern": %q, "access": "viewer"}`, group, pattern)
	}
	table := func(defaultGroup string, routes ...string) string {
		return fmt.Sprintf(`{"defaultGroup": %q, "routes": [%s]}`, defaultGroup, strings.Join(routes, ","))
	}
	for _, c := range []struct {
		name, content, want string
	}{
		{"unknown group", table("websites", route("websites", "/websites"), route("reports", "/{websiteID}/reports")), `"reports" has no settings in infra`},
		{"unknown default group", table("home", route("websites", "/websites")), `"home" has no settings in infra`},
		{"pattern of two groups", table("websites", route("websites", "/{websiteID}/pages"), route("lab", "/{websiteID}/pages")), "declared by groups"},
		{"same shape", table("websites", route("lab", "/{websiteID}/pages/{pageID}"), route("lab", "/{siteID}/pages/{id}")), "cannot tell them apart"},
		{"prefix pattern", table("websites", route("lab", "/{websiteID}/pages/")), "no prefix routes"},
		{"end anchor", table("websites", route("lab", "/{websiteID}/pages/{$}")), "{$}"},
		{"partial wildcard", table("websites", route("lab", "/{websiteID}/page-{pageID}")), "whole segment"},
		{"host", table("websites", route("lab", "example.com/pages")), "starting with /"},
		{"no group", table("websites", route("", "/websites")), "no group"},
		{"no default group", table("", route("websites", "/websites")), "no defaultGroup"},
		{"no routes", table("websites"), "no routes"},
		{"not JSON", "routes:", "routes.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadRouteTable(routesFile(t, c.content))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}

	// A trailing {name...} is API Gateway's greedy {name+}; the same pattern declared twice
	// by one group (two methods) is one path.
	rt, err := loadRouteTable(routesFile(t, table("websites",
		route("websites", "/websites"), route("websites", "/websites"), route("lab", "/{websiteID}/files/{path...}"))))
	if err != nil {
		t.Fatal(err)
	}
	want := []apiPath{{"/websites", "websites"}, {"/{websiteID}/files/{path+}", "lab"}}
	if got := rt.paths(); !reflect.DeepEqual(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
}

// ---- least privilege ----------------------------------------------------------------

func TestLeastPrivilege(t *testing.T) {
	o, tmpl := openvitals(t)
	table := logicalID(t, o.stack, "Storage", "Table")
	bucket := logicalID(t, o.stack, "Storage", "Bucket")
	rumBucket := logicalID(t, o.stack, "Storage", "RumBucket")
	exportBucket := logicalID(t, o.stack, "Exports", "Bucket")
	purgeQ := queueID(t, o.stack, "purge")
	auditQ := queueID(t, o.stack, "audit")
	multistepQ := queueID(t, o.stack, "multistep")
	fanoutQ := queueID(t, o.stack, "fanout")
	rumQ := queueID(t, o.stack, "rum")
	beaconQ := queueID(t, o.stack, "beacon")
	uxQ := queueID(t, o.stack, "ux")
	notifyQ := queueID(t, o.stack, "notify")
	crux := logicalID(t, o.stack, "CruxApiKey")
	credentials := logicalID(t, o.stack, "CredentialsKey")
	const getSecret = "secretsmanager:GetSecretValue"

	type grant struct {
		action, resource string
		want             bool
	}
	cases := map[string][]grant{
		// Starts the fan-out; sweeps overdue audits and runs and lost purges.
		"scheduler": {
			{"dynamodb:Query", table, true}, {"dynamodb:PutItem", table, true},
			{"sqs:SendMessage", fanoutQ, true}, {"sqs:SendMessage", auditQ, true}, {"sqs:SendMessage", purgeQ, true},
			{"sqs:SendMessage", multistepQ, true}, {"sqs:SendMessage", uxQ, false}, {"sqs:SendMessage", notifyQ, false},
			{"sqs:SendMessage", rumQ, false},
			{"s3:GetObject", "", false}, {"s3:PutObject", "", false}, {"sqs:ReceiveMessage", "", false},
			{getSecret, "", false},
		},
		"fanout-worker": {
			{"dynamodb:Query", table, true}, {"dynamodb:UpdateItem", table, true}, {"dynamodb:GetItem", table, true},
			{"sqs:ReceiveMessage", fanoutQ, true}, {"sqs:DeleteMessage", fanoutQ, true}, {"sqs:SendMessage", fanoutQ, true},
			{"sqs:SendMessage", auditQ, true}, {"sqs:SendMessage", multistepQ, true}, {"sqs:SendMessage", uxQ, true},
			{"sqs:SendMessage", notifyQ, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", rumQ, false},
			{"sqs:ReceiveMessage", auditQ, false}, {"s3:PutObject", exportBucket, true},
			// The exports read the audits' diagnostics and the real-user tables, never the exports.
			{"s3:GetObject", bucket, true}, {"s3:GetObject", rumBucket, true}, {"s3:GetObject", exportBucket, false},
			{"s3:PutObject", bucket, false}, {"s3:DeleteObject", "", false}, {getSecret, "", false},
		},
		"audit-worker": {
			{"dynamodb:PutItem", table, true}, {"s3:PutObject", bucket, true},
			{"s3:GetObject", bucket, true}, {"s3:DeleteObject", bucket, true}, {"s3:DeleteObject", rumBucket, false},
			// Deletes the lab audits' objects only, never the whole bucket's.
			{"s3:DeleteObject", "/*/lighthouse/*", true}, {"s3:DeleteObject", "/*", false},
			{"sqs:ReceiveMessage", auditQ, true}, {"sqs:DeleteMessage", auditQ, true},
			{"sqs:SendMessage", notifyQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:ReceiveMessage", purgeQ, false}, {"sqs:ReceiveMessage", multistepQ, false},
			// Opens test profiles' sealed secrets.
			{getSecret, credentials, true}, {getSecret, crux, false},
		},
		"multistep-worker": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:PutItem", table, true}, {"dynamodb:UpdateItem", table, true},
			{"s3:PutObject", bucket, true},
			{"s3:GetObject", "", false}, {"s3:DeleteObject", "", false}, {"s3:ListBucket", "", false},
			{"sqs:ReceiveMessage", multistepQ, true}, {"sqs:DeleteMessage", multistepQ, true},
			{"sqs:SendMessage", notifyQ, true}, {"sqs:SendMessage", multistepQ, false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:ReceiveMessage", auditQ, false}, {"sqs:ReceiveMessage", purgeQ, false},
		},
		"purge-worker": {
			{"dynamodb:DeleteItem", table, true}, {"s3:ListBucket", bucket, true}, {"s3:DeleteObject", bucket, true},
			{"s3:ListBucket", rumBucket, true}, {"s3:DeleteObject", rumBucket, true}, {"s3:DeleteObject", exportBucket, true},
			{"s3:PutObject", "", false}, {"sqs:ReceiveMessage", purgeQ, true},
			// Its own queue only: a purge queues its next pass.
			{"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", multistepQ, false},
			{"sqs:ReceiveMessage", auditQ, false}, {"sqs:ReceiveMessage", multistepQ, false},
		},
		"lab": {
			{"dynamodb:Query", table, true}, {"s3:GetObject", bucket, true}, {"sqs:SendMessage", auditQ, true},
			{"s3:PutObject", "", false}, {"s3:DeleteObject", "", false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:SendMessage", multistepQ, false},
		},
		"websites": {
			{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", multistepQ, false},
			{"s3:PutObject", exportBucket, true}, {"s3:PutObject", bucket, false}, {"s3:DeleteObject", exportBucket, false},
			{"s3:GetObject", bucket, true}, {"s3:GetObject", rumBucket, true}, {"s3:PutObject", rumBucket, false},
			{getSecret, credentials, true}, {getSecret, crux, false}, {"secretsmanager:PutSecretValue", "", false},
		},
		"field": {
			{"dynamodb:Query", table, true}, {"dynamodb:GetItem", table, true}, {"dynamodb:BatchGetItem", table, true},
			{"dynamodb:PutItem", "", false}, {"dynamodb:UpdateItem", "", false}, {"dynamodb:DeleteItem", "", false},
			// Reads the days' tables by range; never the reports'.
			{"s3:GetObject", rumBucket, true}, {"s3:GetObject", bucket, false}, {"s3:PutObject", "", false},
			{"sqs:SendMessage", "", false}, {getSecret, "", false},
		},
		"rum": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:Query", table, true},
			{"dynamodb:PutItem", "", false}, {"dynamodb:UpdateItem", "", false}, {"dynamodb:DeleteItem", "", false},
			{"sqs:SendMessage", beaconQ, true}, {"sqs:SendMessage", rumQ, false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:SendMessage", uxQ, false}, {"sqs:ReceiveMessage", "", false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"rum-batcher": {
			{"sqs:ReceiveMessage", beaconQ, true}, {"sqs:DeleteMessage", beaconQ, true}, {"sqs:SendMessage", rumQ, true},
			{"sqs:GetQueueAttributes", rumQ, true}, {"sqs:SendMessage", beaconQ, false}, {"sqs:ReceiveMessage", rumQ, false},
			// Appends to the websites' logs, reading nothing back.
			{"dynamodb:BatchWriteItem", table, true}, {"dynamodb:GetItem", "", false}, {"dynamodb:Query", "", false},
			{"s3:PutObject", rumBucket, true}, {"s3:PutObject", bucket, false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"rum-aggregator": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:PutItem", table, true}, {"dynamodb:UpdateItem", table, true},
			{"sqs:ReceiveMessage", rumQ, true}, {"sqs:DeleteMessage", rumQ, true},
			{"s3:GetObject", rumBucket, true}, {"s3:PutObject", rumBucket, true}, {"s3:DeleteObject", rumBucket, true},
			{"s3:GetObject", bucket, false}, {"s3:PutObject", bucket, false},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", uxQ, false}, {getSecret, "", false},
		},
		"ux-worker": {
			{"dynamodb:Query", table, true}, {"dynamodb:PutItem", table, true},
			{"sqs:ReceiveMessage", uxQ, true}, {"sqs:DeleteMessage", uxQ, true},
			{getSecret, crux, true}, {getSecret, credentials, true}, {"secretsmanager:PutSecretValue", "", false},
			{"sqs:SendMessage", notifyQ, true}, {"sqs:SendMessage", uxQ, false}, {"sqs:SendMessage", auditQ, false},
			// Real users' daily values for regressions.
			{"sqs:ReceiveMessage", rumQ, false}, {"s3:GetObject", rumBucket, true}, {"s3:GetObject", bucket, false}, {"s3:PutObject", "", false},
		},
		"events": {
			{"dynamodb:PutItem", table, true}, {"dynamodb:Query", table, true}, {getSecret, credentials, true}, {getSecret, crux, false},
			{"sqs:SendMessage", notifyQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:ReceiveMessage", "", false}, {"s3:GetObject", "", false}, {"ses:SendEmail", "", false},
		},
		"notifier": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:PutItem", table, true}, {getSecret, credentials, true}, {getSecret, crux, false},
			{"sqs:ReceiveMessage", notifyQ, true}, {"sqs:DeleteMessage", notifyQ, true}, {"sqs:SendMessage", notifyQ, true},
			{"sqs:SendMessage", auditQ, false}, {"sqs:ReceiveMessage", auditQ, false}, {"s3:GetObject", "", false},
			// No emailFrom in the test stack: no SES permission at all.
			{"ses:SendEmail", "", false},
		},
		// Seals test profiles' secrets; queues new pages' field history to the ux worker.
		"pages": {{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", multistepQ, false},
			{"sqs:SendMessage", uxQ, true}, {"sqs:ReceiveMessage", uxQ, false}, {getSecret, credentials, true}, {getSecret, crux, false}},
		"multistep": {
			{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", multistepQ, true},
			// A failed run's screenshot is read from the bucket (GET .../runs/{r}/screenshot).
			{"s3:GetObject", bucket, true},
			{"sqs:SendMessage", auditQ, false}, {"sqs:ReceiveMessage", "", false}, {"s3:PutObject", "", false},
			{"s3:DeleteObject", "", false},
		},
		"budgets": {{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", "", false}},
		// The dashboard's files are embedded: no data, queue, bucket or secret.
		"web": {{"dynamodb:GetItem", "", false}, {"dynamodb:Query", "", false}, {"sqs:SendMessage", "", false}, {"s3:GetObject", "", false}, {getSecret, "", false}},
	}
	for _, fn := range []string{"budgets", "multistep", "lab", "multistep-worker", "purge-worker"} {
		cases[fn] = append(cases[fn], grant{getSecret, "", false})
	}
	for _, fn := range []string{"pages", "budgets", "multistep", "lab", "audit-worker", "multistep-worker", "purge-worker"} {
		cases[fn] = append(cases[fn], grant{"sqs:SendMessage", rumQ, false})
		if fn != "pages" {
			cases[fn] = append(cases[fn], grant{"sqs:SendMessage", uxQ, false})
		}
	}
	// Only the scheduler and the fan-out worker itself queue fan-out messages.
	for fn := range cases {
		if fn != "scheduler" && fn != "fanout-worker" {
			cases[fn] = append(cases[fn], grant{"sqs:SendMessage", fanoutQ, false})
		}
	}
	for name := range o.functions {
		if _, ok := cases[name]; !ok {
			t.Errorf("function %s: no expected grants", name)
		}
	}
	for fn, grants := range cases {
		stmts := functionStatements(t, tmpl, fnID(t, o, fn))
		for _, g := range grants {
			on := g.resource
			if on == "" {
				on = "any resource"
			}
			if got := allows(stmts, g.action, g.resource); got != g.want {
				t.Errorf("%s: %s on %s allowed = %v, want %v", fn, g.action, on, got, g.want)
			}
		}
		for _, s := range stmts {
			if slices.Contains(stringsIn(s.Resource), "*") {
				t.Errorf("%s: %v on every resource", fn, s.Actions)
			}
			for _, a := range s.Actions {
				if a == "*" || strings.HasSuffix(a, ":*") {
					t.Errorf("%s: action %s grants a whole service", fn, a)
				}
			}
		}
	}
	if s3 := actionsWithPrefix(functionStatements(t, tmpl, fnID(t, o, "scheduler")), "s3:"); len(s3) > 0 {
		t.Errorf("the scheduler has S3 permissions: %v", s3)
	}

	// Functions' roles carry only the basic execution role (logs), nothing broader.
	for id, r := range resources(tmpl, "AWS::IAM::Role") {
		for _, arn := range stringsIn(r["ManagedPolicyArns"]) {
			if strings.Contains(arn, ":iam::aws:policy/") && !strings.HasSuffix(arn, ":iam::aws:policy/service-role/AWSLambdaBasicExecutionRole") {
				t.Errorf("role %s has managed policy %s", id, arn)
			}
		}
	}
}
