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

// writeBootstraps writes dir/<function>/bootstrap for every function, each
// holding content and the function's name.
func writeBootstraps(dir, content string) error {
	for _, fn := range allFunctions() {
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
	app   awscdk.App
	stack awscdk.Stack
	tmpl  assertions.Template
}

// synth builds OpenvitalsStack with props (FunctionsDir defaults to the
// placeholders) and extra context over cdk.json's, and synthesizes it.
func synth(t *testing.T, props *OpenvitalsStackProps, extra map[string]any) synthesized {
	t.Helper()
	ctx := cdkContext(t)
	for k, v := range extra {
		ctx[k] = v
	}
	var p OpenvitalsStackProps
	if props != nil {
		p = *props
	}
	if p.FunctionsDir == "" {
		p.FunctionsDir = functionsDir
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	stack, err := NewOpenvitalsStack(app, "OpenvitalsStack", &p)
	if err != nil {
		t.Fatalf("NewOpenvitalsStack: %v", err)
	}
	return synthesized{app: app, stack: stack, tmpl: assertions.Template_FromStack(stack, nil)}
}

var (
	synthOnce sync.Once
	synthed   synthesized
)

// openvitals synthesizes OpenvitalsStack with the default settings once for
// all tests: synthesis goes through the jsii Node.js process and costs seconds.
func openvitals(t *testing.T) (awscdk.Stack, assertions.Template) {
	t.Helper()
	synthOnce.Do(func() { synthed = synth(t, nil, nil) })
	if synthed.stack == nil {
		t.Fatal("synthesis failed")
	}
	return synthed.stack, synthed.tmpl
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
// the construct at path (e.g. "Storage/PurgeDLQ") in stack.
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
	stack, tmpl := openvitals(t)
	check(t, "one bucket", func() { tmpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), jsii.Number(1)) })
	check(t, "public access block", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"PublicAccessBlockConfiguration": map[string]any{
				"BlockPublicAcls":       true,
				"BlockPublicPolicy":     true,
				"IgnorePublicAcls":      true,
				"RestrictPublicBuckets": true,
			},
			"BucketEncryption": map[string]any{
				"ServerSideEncryptionConfiguration": []any{
					map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
				},
			},
		})
	})
	bucket := logicalID(t, stack, "Storage", "Bucket")
	check(t, "bucket policy denies plain HTTP", func() {
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

func TestPurgeQueueRedrivesToDLQ(t *testing.T) {
	stack, tmpl := openvitals(t)
	dlq := logicalID(t, stack, "Storage", "PurgeDLQ")
	purge := logicalID(t, stack, "Storage", "purge")
	check(t, "twelve queues (purge, audit, multistep, beacon, rum and field, each with a DLQ)", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(12))
	})

	redriven := *tmpl.FindResources(jsii.String("AWS::SQS::Queue"), map[string]any{
		"Properties": map[string]any{
			"VisibilityTimeout": 300,
			"RedrivePolicy": map[string]any{
				"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}},
				"maxReceiveCount":     3,
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
	stack, tmpl := openvitals(t)
	want := map[string]any{
		"TableName":           map[string]any{"Ref": logicalID(t, stack, "Storage", "Table")},
		"BucketName":          map[string]any{"Ref": logicalID(t, stack, "Storage", "Bucket")},
		"PurgeQueueUrl":       map[string]any{"Ref": logicalID(t, stack, "Storage", "purge")},
		"AuditQueueUrl":       map[string]any{"Ref": logicalID(t, stack, "Storage", "audit")},
		"AuditDLQUrl":         map[string]any{"Ref": logicalID(t, stack, "Storage", "AuditDLQ")},
		"MultistepQueueUrl":   map[string]any{"Ref": logicalID(t, stack, "Storage", "multistep")},
		"MultistepDLQUrl":     map[string]any{"Ref": logicalID(t, stack, "Storage", "MultistepDLQ")},
		"PurgeDLQUrl":         map[string]any{"Ref": logicalID(t, stack, "Storage", "PurgeDLQ")},
		"RumQueueUrl":         map[string]any{"Ref": logicalID(t, stack, "Storage", "rum")},
		"RumDLQUrl":           map[string]any{"Ref": logicalID(t, stack, "Storage", "RumDLQ")},
		"FieldQueueUrl":       map[string]any{"Ref": logicalID(t, stack, "Storage", "field")},
		"FieldDLQUrl":         map[string]any{"Ref": logicalID(t, stack, "Storage", "FieldDLQ")},
		"CruxApiKeySecretArn": map[string]any{"Ref": logicalID(t, stack, "CruxApiKey")},
		"AlarmTopicArn":       map[string]any{"Ref": logicalID(t, stack, "Alarms", "Topic")},
		"CreateAdminKey": map[string]any{"Fn::Join": []any{"", []any{
			"AWS_REGION=", map[string]any{"Ref": "AWS::Region"},
			" OPENVITALS_TABLE=", map[string]any{"Ref": logicalID(t, stack, "Storage", "Table")},
			" go run ./functions/keys create -account ACCOUNT -role admin",
		}}},
		"SetCruxApiKey": map[string]any{"Fn::Join": []any{"", []any{
			"aws secretsmanager put-secret-value --region ", map[string]any{"Ref": "AWS::Region"},
			" --secret-id ", map[string]any{"Ref": logicalID(t, stack, "CruxApiKey")},
			" --secret-string YOUR_CRUX_API_KEY",
		}}},
		"ApiUrl": map[string]any{"Fn::Join": []any{"", []any{
			"https://", map[string]any{"Ref": logicalID(t, stack, "Api")},
			".execute-api.", map[string]any{"Ref": "AWS::Region"}, ".", map[string]any{"Ref": "AWS::URLSuffix"}, "/",
		}}},
	}
	for id, value := range want {
		check(t, "output "+id, func() {
			tmpl.HasOutput(jsii.String(id), map[string]any{"Value": value})
		})
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

// fnID is the logical id of the function with construct id id (e.g. "Scheduler").
func fnID(t *testing.T, stack awscdk.Stack, id string) string {
	t.Helper()
	return logicalID(t, stack, id)
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
	stack, tmpl := openvitals(t)
	check(t, "three rules", func() { tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(3)) })
	for id, job := range map[string]string{"DailySchedule": "audits", "MultistepSchedule": "multistep", "FieldSchedule": "field"} {
		rule := resources(tmpl, "AWS::Events::Rule")[logicalID(t, stack, id)]
		if rule == nil {
			t.Fatalf("no rule %s", id)
		}
		if rule["ScheduleExpression"] != "cron(0 3 * * ? *)" || rule["State"] != "ENABLED" {
			t.Errorf("%s: %v, %v; want daily at 03:00 UTC", id, rule["ScheduleExpression"], rule["State"])
		}
		targets := rule["Targets"].([]any)
		target := targets[0].(map[string]any)
		arn, _ := json.Marshal(target["Arn"])
		if len(targets) != 1 || !strings.Contains(string(arn), fnID(t, stack, "Scheduler")) {
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
	check(t, "EventBridge may invoke the scheduler", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
			"Action":       "lambda:InvokeFunction",
			"Principal":    "events.amazonaws.com",
			"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID(t, stack, "Scheduler"), "Arn"}},
			"SourceArn":    map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "FieldSchedule"), "Arn"}},
		})
	})
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
	baseTag := imageTag(t, base, fnID(t, synthed.stack, "AuditWorker"))

	// A property, with a different audit worker binary: the image must change.
	other := t.TempDir()
	if err := writeBootstraps(other, "another build"); err != nil {
		t.Fatal(err)
	}
	hour := 17
	s := synth(t, &OpenvitalsStackProps{DailyHourUTC: &hour, FunctionsDir: other}, nil)
	check(t, "hour 17 from a property", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{"ScheduleExpression": "cron(0 17 * * ? *)"})
	})
	if tag := imageTag(t, s.tmpl, fnID(t, s.stack, "AuditWorker")); tag == baseTag {
		t.Errorf("a different audit worker binary kept image %s: the image would not be rebuilt", tag)
	}

	// The context, as `cdk deploy -c dailyHourUtc=0` passes it (a string), with
	// the same binaries in another directory: the image must stay the same.
	same := t.TempDir()
	if err := writeBootstraps(same, "placeholder"); err != nil {
		t.Fatal(err)
	}
	s = synth(t, &OpenvitalsStackProps{FunctionsDir: same}, map[string]any{
		ContextDailyHourUTC: "0", ContextAuditMaxConcurrency: 5, ContextMultistepMaxConcurrency: "7",
		ContextFieldHourUTC: "22",
	})
	rules := resources(s.tmpl, "AWS::Events::Rule")
	for id, want := range map[string]string{"DailySchedule": "cron(0 0 * * ? *)", "MultistepSchedule": "cron(0 0 * * ? *)", "FieldSchedule": "cron(0 22 * * ? *)"} {
		if got := rules[logicalID(t, s.stack, id)]["ScheduleExpression"]; got != want {
			t.Errorf("%s from the context: %v, want %s (multistep follows dailyHourUtc, field has its own)", id, got, want)
		}
	}
	check(t, "audit concurrency 5 from the context", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.stack, "AuditWorker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 5},
		})
	})
	check(t, "multistep concurrency 7 from the context", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.stack, "MultistepWorker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 7},
		})
	})
	if tag := imageTag(t, s.tmpl, fnID(t, s.stack, "AuditWorker")); tag != baseTag {
		t.Errorf("the same binaries in another directory changed the image from %s to %s", baseTag, tag)
	}

	// Only the multistep worker rebuilt: the shared image must change for both functions.
	ms := t.TempDir()
	if err := writeBootstraps(ms, "placeholder"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ms, MultistepWorkerFunction, "bootstrap"), []byte("new multistep build\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := 9
	s = synth(t, &OpenvitalsStackProps{FunctionsDir: ms, MultistepMaxConcurrency: &n}, nil)
	check(t, "multistep concurrency 9 from a property", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":  map[string]any{"Ref": fnID(t, s.stack, "MultistepWorker")},
			"ScalingConfig": map[string]any{"MaximumConcurrency": 9},
		})
	})
	for _, fn := range []string{"AuditWorker", "MultistepWorker"} {
		if tag := imageTag(t, s.tmpl, fnID(t, s.stack, fn)); tag == baseTag {
			t.Errorf("%s: a new multistep worker binary kept image %s: the image would not be rebuilt", fn, tag)
		}
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	ints := func(n int) *int { return &n }
	cases := []struct {
		name    string
		props   OpenvitalsStackProps
		context map[string]any
		want    string
	}{
		{"hour 24", OpenvitalsStackProps{DailyHourUTC: ints(24)}, nil, ContextDailyHourUTC},
		{"hour -1", OpenvitalsStackProps{DailyHourUTC: ints(-1)}, nil, ContextDailyHourUTC},
		{"multistep hour 24", OpenvitalsStackProps{MultistepHourUTC: ints(24)}, nil, ContextMultistepHourUTC},
		{"context field hour text", OpenvitalsStackProps{}, map[string]any{ContextFieldHourUTC: "noon"}, ContextFieldHourUTC},
		{"context hour 24", OpenvitalsStackProps{}, map[string]any{ContextDailyHourUTC: "24"}, ContextDailyHourUTC},
		{"context hour 24 (number)", OpenvitalsStackProps{}, map[string]any{ContextDailyHourUTC: 24}, ContextDailyHourUTC},
		{"context hour 3.5", OpenvitalsStackProps{}, map[string]any{ContextDailyHourUTC: 3.5}, ContextDailyHourUTC},
		{"context hour text", OpenvitalsStackProps{}, map[string]any{ContextDailyHourUTC: "three"}, ContextDailyHourUTC},
		{"concurrency 1", OpenvitalsStackProps{AuditMaxConcurrency: ints(1)}, nil, ContextAuditMaxConcurrency},
		{"multistep concurrency 1", OpenvitalsStackProps{MultistepMaxConcurrency: ints(1)}, nil, ContextMultistepMaxConcurrency},
		{"context multistep concurrency 1001", OpenvitalsStackProps{}, map[string]any{ContextMultistepMaxConcurrency: "1001"}, ContextMultistepMaxConcurrency},
		{"no binaries", OpenvitalsStackProps{FunctionsDir: t.TempDir()}, nil, "make build"},
		{"report retention 30 days", OpenvitalsStackProps{ReportRetentionDays: ints(30)}, nil, ContextReportRetentionDays},
		{"context report retention text", OpenvitalsStackProps{}, map[string]any{ContextReportRetentionDays: "a year"}, ContextReportRetentionDays},
		{"API throttle rate 0", OpenvitalsStackProps{APIThrottleRate: ints(0)}, nil, ContextAPIThrottleRate},
		{"context RUM burst 5001", OpenvitalsStackProps{}, map[string]any{ContextRUMThrottleBurst: "5001"}, ContextRUMThrottleBurst},
		{"context trustViewerCountry maybe", OpenvitalsStackProps{}, map[string]any{ContextTrustViewerCountry: "maybe"}, ContextTrustViewerCountry},
		{"alarm e-mail without @", OpenvitalsStackProps{AlarmEmail: "ops.example.com"}, nil, ContextAlarmEmail},
		{"context alarm e-mail with a name", OpenvitalsStackProps{}, map[string]any{ContextAlarmEmail: "Ops <ops@example.com>"}, ContextAlarmEmail},
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
			stack, err := NewOpenvitalsStack(app, "OpenvitalsStack", &p)
			if err == nil || stack != nil {
				t.Fatalf("accepted: stack %v, err %v", stack, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
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
	stack, tmpl := openvitals(t)
	dlq := logicalID(t, stack, "Storage", "AuditDLQ")
	audit := logicalID(t, stack, "Storage", "audit")
	queues := resources(tmpl, "AWS::SQS::Queue")
	q := queues[audit]
	want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(3)}
	if got := q["RedrivePolicy"]; !reflect.DeepEqual(got, want) {
		t.Errorf("audit queue redrive policy %v, want %v", got, want)
	}
	worker := resources(tmpl, "AWS::Lambda::Function")[fnID(t, stack, "AuditWorker")]
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
	purge := queues[logicalID(t, stack, "Storage", "purge")]
	pw := resources(tmpl, "AWS::Lambda::Function")[fnID(t, stack, "PurgeWorker")]
	if v, to := purge["VisibilityTimeout"].(float64), pw["Timeout"].(float64); v < 6*to {
		t.Errorf("purge queue visibility timeout %v s < 6 × the purge worker's %v s", v, to)
	}
}

func TestMultistepQueueRedrivesToDLQ(t *testing.T) {
	stack, tmpl := openvitals(t)
	dlq := logicalID(t, stack, "Storage", "MultistepDLQ")
	ms := logicalID(t, stack, "Storage", "multistep")
	queues := resources(tmpl, "AWS::SQS::Queue")
	q := queues[ms]
	want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(3)}
	if got := q["RedrivePolicy"]; !reflect.DeepEqual(got, want) {
		t.Errorf("multistep queue redrive policy %v, want %v", got, want)
	}
	worker := resources(tmpl, "AWS::Lambda::Function")[fnID(t, stack, "MultistepWorker")]
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
	stack, tmpl := openvitals(t)
	check(t, "six event sources", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(6))
	})
	check(t, "RUM rebatcher: up to 2,000 beacons gathered for up to 30 s, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":                   map[string]any{"Ref": fnID(t, stack, "RumBatcher")},
			"EventSourceArn":                 map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "beacon"), "Arn"}},
			"BatchSize":                      RUMBatcherBatchSize,
			"MaximumBatchingWindowInSeconds": RUMBatcherWindowSeconds,
			"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "RUM aggregator: batches of 10 from the FIFO queue, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, stack, "RumAggregator")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "rum"), "Arn"}},
			"BatchSize":             10,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "field collector: one website at a time, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, stack, "FieldCollector")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "field"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
	check(t, "multistep worker: one run at a time, partial failures, 2 at most", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, stack, "MultistepWorker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "multistep"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": DefaultMultistepMaxConcurrency},
		})
	})
	check(t, "audit worker: one message at a time, partial failures, 2 at most", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, stack, "AuditWorker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "audit"), "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         map[string]any{"MaximumConcurrency": DefaultAuditMaxConcurrency},
		})
	})
	check(t, "purge worker: batches of 10, partial failures", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": fnID(t, stack, "PurgeWorker")},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{logicalID(t, stack, "Storage", "purge"), "Arn"}},
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
		"OPENVITALS_PURGE_QUEUE":     map[string]any{"Ref": logicalID(t, stack, "Storage", "purge")},
		"OPENVITALS_AUDIT_QUEUE":     map[string]any{"Ref": logicalID(t, stack, "Storage", "audit")},
		"OPENVITALS_MULTISTEP_QUEUE": map[string]any{"Ref": logicalID(t, stack, "Storage", "multistep")},
		"OPENVITALS_RUM_QUEUE":       map[string]any{"Ref": logicalID(t, stack, "Storage", "rum")},
		"OPENVITALS_FIELD_QUEUE":     map[string]any{"Ref": logicalID(t, stack, "Storage", "field")},
	}
}

// TestEveryFunctionGetsTheSharedEnvironment: service.FromEnv opens every queue at start, so
// a function without one of these variables would not start.
func TestEveryFunctionGetsTheSharedEnvironment(t *testing.T) {
	stack, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	for name, id := range functionIDs {
		props, ok := fns[fnID(t, stack, id)]
		if !ok {
			t.Errorf("%s: no function", name)
			continue
		}
		env, _ := props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		for k, want := range sharedEnv(t, stack) {
			if got := vars[k]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s = %v, want %v", name, k, got, want)
			}
		}
	}
}

func TestGoFunctions(t *testing.T) {
	stack, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	if len(fns) != len(functionIDs) {
		t.Errorf("%d functions, want %d: %v", len(fns), len(functionIDs), keys(fns))
	}
	zip := regexp.MustCompile(`^[0-9a-f]{64}\.zip$`)
	for _, name := range goFunctions {
		props := fns[fnID(t, stack, functionIDs[name])]
		if props["Runtime"] != "provided.al2023" || props["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v, handler %v, want provided.al2023 and bootstrap", name, props["Runtime"], props["Handler"])
		}
		if a := props["Architectures"]; !reflect.DeepEqual(a, []any{"arm64"}) {
			t.Errorf("%s: architectures %v, want arm64", name, a)
		}
		code, _ := props["Code"].(map[string]any)
		if key, _ := code["S3Key"].(string); !zip.MatchString(key) {
			t.Errorf("%s: code %v, want a zip asset", name, code)
		}
	}
}

func TestAuditWorkerIsContainerFunction(t *testing.T) {
	stack, tmpl := openvitals(t)
	env := sharedEnv(t, stack)
	env["OPENVITALS_AUDIT_RUNS"] = "3"
	env["OPENVITALS_NODE"] = ImageNode
	env["OPENVITALS_LIGHTHOUSE_RUNNER"] = ImageRunner
	env["OPENVITALS_CHROMIUM_BIN"] = ImageChromium
	found := *tmpl.FindResources(jsii.String("AWS::Lambda::Function"), map[string]any{
		"Properties": map[string]any{
			"PackageType":      "Image",
			"MemorySize":       assertions.Match_AnyValue(),
			"Timeout":          900,
			"Architectures":    []any{"arm64"},
			"EphemeralStorage": map[string]any{"Size": AuditWorkerTmpMB},
			"Environment":      map[string]any{"Variables": env},
			"Code":             map[string]any{"ImageUri": assertions.Match_AnyValue()},
		},
	})
	id := fnID(t, stack, "AuditWorker")
	if _, ok := found[id]; !ok || len(found) != 1 {
		t.Fatalf("want only %s as a 15-minute arm64 image function with the browser paths; matched %v", id, keys(found))
	}
	checkEntrypoint(t, tmpl, id, AuditWorkerFunction)
	props := resources(tmpl, "AWS::Lambda::Function")[id]
	if mem, _ := props["MemorySize"].(float64); mem < 3008 {
		t.Errorf("audit worker memory %v MB: Chromium and Lighthouse need at least 3008", mem)
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
	if ImageBinary(name) != "/opt/openvitals/"+name {
		t.Errorf("ImageBinary(%q) = %q", name, ImageBinary(name))
	}
}

func TestMultistepWorkerIsContainerFunction(t *testing.T) {
	stack, tmpl := openvitals(t)
	env := sharedEnv(t, stack)
	env["OPENVITALS_CHROMIUM_BIN"] = ImageChromium
	id := fnID(t, stack, "MultistepWorker")
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
	checkEntrypoint(t, tmpl, id, MultistepWorkerFunction)
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
	if a, m := imageTag(t, tmpl, fnID(t, stack, "AuditWorker")), imageTag(t, tmpl, id); a != m {
		t.Errorf("audit worker image %s, multistep worker image %s: want the same", a, m)
	}
}

// TestBrowserImageAsset reads the cloud assembly: the image is built from a
// copy of layers/browser without node_modules, for linux/arm64, with each browser
// worker's binary as the build context of its name the Dockerfile copies from, and
// both workers use it.
func TestBrowserImageAsset(t *testing.T) {
	stack, _ := openvitals(t)
	asm := synthed.app.Synth(nil)
	raw, err := os.ReadFile(filepath.Join(*asm.Directory(), *stack.ArtifactId()+".assets.json"))
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
		for _, fn := range []string{"AuditWorker", "MultistepWorker"} {
			if tag := imageTag(t, synthed.tmpl, fnID(t, stack, fn)); tag != hash {
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
		if _, err := os.Stat(filepath.Join(BrowserImageDir, "node_modules")); err != nil {
			t.Logf("note: %s/node_modules does not exist here, so its exclusion is not exercised", BrowserImageDir)
		}
	}
}

// dockerfileInstructions returns the instructions of a Dockerfile, continued lines joined and
// comments dropped.
func dockerfileInstructions(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(BrowserImageDir, "Dockerfile"))
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
		"OPENVITALS_NODE":              ImageNode,
		"OPENVITALS_LIGHTHOUSE_RUNNER": ImageRunner,
		"OPENVITALS_CHROMIUM_BIN":      ImageChromium,
		"HOME":                         "/tmp",
	} {
		if env[k] != want {
			t.Errorf("Dockerfile ENV %s=%q, the stack uses %q", k, env[k], want)
		}
	}
	// Only a default: the stack sets each function's entrypoint.
	if got := strings.Join(entrypoint, " "); got != `["`+ImageBinary(AuditWorkerFunction)+`"]` {
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
		if dest+"/"+fn != ImageBinary(fn) {
			t.Errorf("%s: installed as %s/%s, the stack runs %s", fn, dest, fn, ImageBinary(fn))
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
	script := filepath.Join(BrowserImageDir, "install.sh")
	run := func(args ...string) (string, error) {
		out, err := exec.Command("bash", append([]string{script}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := run(append(append([]string{"--dest", dest}, args...), "bootstraps")...); err != nil {
		t.Fatalf("install.sh bootstraps: %v\n%s", err, out)
	}
	for _, fn := range browserFunctions {
		path := filepath.Join(dest, strings.TrimPrefix(ImageBinary(fn), "/opt/openvitals/"))
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

func TestHTTPAPIRoutes(t *testing.T) {
	stack, tmpl := openvitals(t)
	check(t, "one HTTP API", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{"ProtocolType": "HTTP"})
	})
	check(t, "$default stage, deployed automatically", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"StageName": "$default", "AutoDeploy": true,
			"ApiId": map[string]any{"Ref": logicalID(t, stack, "Api")},
		})
	})

	want := map[string]string{
		"GET /websites":          "Websites",
		"POST /account/websites": "Websites",
		"DELETE /{websiteId}":    "Websites",
		"GET /openapi.json":      "Websites",
		"$default":               "Websites",

		"ANY /{websiteId}/settings/{proxy+}": "Pages",

		"ANY /{websiteId}/budgets":          "Budgets",
		"ANY /{websiteId}/budgets/{proxy+}": "Budgets",

		"ANY /{websiteId}/multistep":          "Multistep",
		"ANY /{websiteId}/multistep/{proxy+}": "Multistep",

		"ANY /{websiteId}/pages":          "Lab",
		"ANY /{websiteId}/pages/{proxy+}": "Lab",
		"ANY /{websiteId}/opportunities":  "Lab",
		"POST /{websiteId}/audits":        "Lab",

		"ANY /{websiteId}/integrations/{proxy+}": "Websites",

		"ANY /{websiteId}/field-testing/{proxy+}": "Field",

		"GET /rum/{file}":  "Rum",
		"POST /collect":    "Rum",
		"OPTIONS /collect": "Rum",
	}

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
	for key, fn := range want {
		if g, ok := got[key]; !ok {
			t.Errorf("no route %s", key)
		} else if w := fnID(t, stack, fn); g != w {
			t.Errorf("route %s -> %s, want %s (%s)", key, g, w, fn)
		}
	}
	for key, fn := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("unexpected route %s -> %s", key, fn)
		}
	}
	if n := len(integrations); n != 7 {
		t.Errorf("%d integrations, want one per endpoint group (7)", n)
	}

	// API Gateway may invoke each group's function.
	for _, fn := range []string{"Websites", "Pages", "Budgets", "Multistep", "Lab", "Field", "Rum"} {
		check(t, "API Gateway invokes "+fn, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"Principal":    "apigateway.amazonaws.com",
				"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID(t, stack, fn), "Arn"}},
			})
		})
	}
}

// ---- least privilege ----------------------------------------------------------------

func TestLeastPrivilege(t *testing.T) {
	stack, tmpl := openvitals(t)
	table := logicalID(t, stack, "Storage", "Table")
	bucket := logicalID(t, stack, "Storage", "Bucket")
	purgeQ := logicalID(t, stack, "Storage", "purge")
	auditQ := logicalID(t, stack, "Storage", "audit")
	multistepQ := logicalID(t, stack, "Storage", "multistep")
	rumQ := logicalID(t, stack, "Storage", "rum")
	beaconQ := logicalID(t, stack, "Storage", "beacon")
	fieldQ := logicalID(t, stack, "Storage", "field")
	crux := logicalID(t, stack, "CruxApiKey")
	credentials := logicalID(t, stack, "CredentialsKey")
	const getSecret = "secretsmanager:GetSecretValue"

	type grant struct {
		action, resource string
		want             bool
	}
	cases := map[string][]grant{
		"Scheduler": {
			{"dynamodb:Query", table, true}, {"dynamodb:PutItem", table, true},
			{"sqs:SendMessage", auditQ, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", multistepQ, true},
			{"sqs:SendMessage", fieldQ, true}, {"sqs:SendMessage", rumQ, false},
			{"s3:GetObject", "", false}, {"s3:PutObject", "", false}, {"sqs:ReceiveMessage", "", false},
			{getSecret, "", false},
		},
		"AuditWorker": {
			{"dynamodb:PutItem", table, true}, {"s3:PutObject", bucket, true},
			{"s3:GetObject", "", false}, {"s3:DeleteObject", "", false},
			{"sqs:ReceiveMessage", auditQ, true}, {"sqs:DeleteMessage", auditQ, true},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", purgeQ, false}, {"sqs:ReceiveMessage", multistepQ, false},
		},
		"MultistepWorker": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:PutItem", table, true}, {"dynamodb:UpdateItem", table, true},
			{"s3:PutObject", bucket, true},
			{"s3:GetObject", "", false}, {"s3:DeleteObject", "", false}, {"s3:ListBucket", "", false},
			{"sqs:ReceiveMessage", multistepQ, true}, {"sqs:DeleteMessage", multistepQ, true},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", auditQ, false}, {"sqs:ReceiveMessage", purgeQ, false},
		},
		"PurgeWorker": {
			{"dynamodb:DeleteItem", table, true}, {"s3:ListBucket", bucket, true}, {"s3:DeleteObject", bucket, true},
			{"s3:PutObject", "", false}, {"sqs:ReceiveMessage", purgeQ, true},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", auditQ, false}, {"sqs:ReceiveMessage", multistepQ, false},
		},
		"Lab": {
			{"dynamodb:Query", table, true}, {"s3:GetObject", bucket, true}, {"sqs:SendMessage", auditQ, true},
			{"s3:PutObject", "", false}, {"s3:DeleteObject", "", false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:SendMessage", multistepQ, false},
		},
		"Websites": {
			{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", multistepQ, false},
			{getSecret, credentials, true}, {getSecret, crux, false}, {"secretsmanager:PutSecretValue", "", false},
		},
		"Field": {
			{"dynamodb:Query", table, true}, {"dynamodb:GetItem", table, true},
			{"dynamodb:PutItem", "", false}, {"dynamodb:UpdateItem", "", false}, {"dynamodb:DeleteItem", "", false},
			{"sqs:SendMessage", "", false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"Rum": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:Query", table, true},
			{"dynamodb:PutItem", "", false}, {"dynamodb:UpdateItem", "", false}, {"dynamodb:DeleteItem", "", false},
			{"sqs:SendMessage", beaconQ, true}, {"sqs:SendMessage", rumQ, false}, {"sqs:SendMessage", purgeQ, false},
			{"sqs:SendMessage", fieldQ, false}, {"sqs:ReceiveMessage", "", false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"RumBatcher": {
			{"sqs:ReceiveMessage", beaconQ, true}, {"sqs:DeleteMessage", beaconQ, true}, {"sqs:SendMessage", rumQ, true},
			{"sqs:SendMessage", beaconQ, false}, {"sqs:ReceiveMessage", rumQ, false}, {"dynamodb:GetItem", "", false},
			{"dynamodb:PutItem", "", false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"RumAggregator": {
			{"dynamodb:GetItem", table, true}, {"dynamodb:PutItem", table, true}, {"dynamodb:UpdateItem", table, true},
			{"sqs:ReceiveMessage", rumQ, true}, {"sqs:DeleteMessage", rumQ, true},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", fieldQ, false}, {"s3:GetObject", "", false}, {getSecret, "", false},
		},
		"FieldCollector": {
			{"dynamodb:Query", table, true}, {"dynamodb:PutItem", table, true},
			{"sqs:ReceiveMessage", fieldQ, true}, {"sqs:DeleteMessage", fieldQ, true},
			{getSecret, crux, true}, {getSecret, credentials, true}, {"secretsmanager:PutSecretValue", "", false},
			{"sqs:SendMessage", "", false}, {"sqs:ReceiveMessage", rumQ, false}, {"s3:GetObject", "", false},
		},
		"Pages": {{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", auditQ, false}, {"sqs:SendMessage", multistepQ, false}},
		"Multistep": {
			{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", purgeQ, true}, {"sqs:SendMessage", multistepQ, true},
			{"sqs:SendMessage", auditQ, false}, {"sqs:ReceiveMessage", "", false}, {"s3:PutObject", "", false},
		},
		"Budgets": {{"dynamodb:PutItem", table, true}, {"sqs:SendMessage", "", false}},
	}
	for _, fn := range []string{"Pages", "Budgets", "Multistep", "Lab", "AuditWorker", "MultistepWorker", "PurgeWorker"} {
		cases[fn] = append(cases[fn], grant{getSecret, "", false}, grant{"sqs:SendMessage", rumQ, false}, grant{"sqs:SendMessage", fieldQ, false})
	}
	for name, id := range functionIDs {
		if _, ok := cases[id]; !ok {
			t.Errorf("function %s: no expected grants", name)
		}
	}
	for fn, grants := range cases {
		stmts := functionStatements(t, tmpl, fnID(t, stack, fn))
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
	if s3 := actionsWithPrefix(functionStatements(t, tmpl, fnID(t, stack, "Scheduler")), "s3:"); len(s3) > 0 {
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
