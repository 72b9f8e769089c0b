package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
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

var (
	synthOnce sync.Once
	synthed   awscdk.Stack
	template  assertions.Template
)

// openvitals synthesizes OpenvitalsStack once for all tests: synthesis goes
// through the jsii Node.js process and costs seconds.
func openvitals(t *testing.T) (awscdk.Stack, assertions.Template) {
	t.Helper()
	ctx := cdkContext(t)
	synthOnce.Do(func() {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
		synthed = NewOpenvitalsStack(app, "OpenvitalsStack", nil)
		template = assertions.Template_FromStack(synthed, nil)
	})
	return synthed, template
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
	check(t, "two queues", func() { tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(2)) })

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
		"AWS::DynamoDB::Table": "TableName",
		"AWS::S3::Bucket":      "BucketName",
		"AWS::SQS::Queue":      "QueueName",
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
		"TableName":     map[string]any{"Ref": logicalID(t, stack, "Storage", "Table")},
		"BucketName":    map[string]any{"Ref": logicalID(t, stack, "Storage", "Bucket")},
		"PurgeQueueUrl": map[string]any{"Ref": logicalID(t, stack, "Storage", "purge")},
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
