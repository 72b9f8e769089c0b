package main

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// consumers names, per work queue, the function its event source feeds.
var consumers = map[string]string{
	"purge": "PurgeWorker", "audit": "AuditWorker", "multistep": "MultistepWorker",
	"beacon": "RumBatcher", "rum": "RumAggregator", "field": "FieldCollector",
}

// queueIDs are the construct ids (under Storage) of each work queue and its DLQ.
var queueIDs = map[string][2]string{
	"purge": {"purge", "PurgeDLQ"}, "audit": {"audit", "AuditDLQ"}, "multistep": {"multistep", "MultistepDLQ"},
	"beacon": {"beacon", "BeaconDLQ"}, "rum": {"rum", "RumDLQ"}, "field": {"field", "FieldDLQ"},
}

// TestEveryQueueHasADLQAndAlarms: each queue redrives to its own DLQ after 3 receives, outlasts
// its consumer's timeout six times, and has an alarm on its depth and one on its DLQ's, both
// notifying the alarm topic when they fire and when they clear.
func TestEveryQueueHasADLQAndAlarms(t *testing.T) {
	stack, tmpl := openvitals(t)
	queues := resources(tmpl, "AWS::SQS::Queue")
	fns := resources(tmpl, "AWS::Lambda::Function")
	alarms := resources(tmpl, "AWS::CloudWatch::Alarm")
	topic := logicalID(t, stack, "Alarms", "Topic")
	if len(queueIDs) != len(QueueDepthAlarms) || len(alarms) != 2*len(queueIDs) {
		t.Errorf("%d queues with depth settings, %d alarms: want one depth and one DLQ alarm per queue (%d)",
			len(QueueDepthAlarms), len(alarms), 2*len(queueIDs))
	}
	// alarmOn returns the alarm watching the depth of queue (logical id).
	alarmOn := func(queue string) map[string]any {
		for _, a := range alarms {
			dims, _ := a["Dimensions"].([]any)
			for _, d := range dims {
				d, _ := d.(map[string]any)
				if d["Name"] == "QueueName" && reflect.DeepEqual(d["Value"], map[string]any{"Fn::GetAtt": []any{queue, "QueueName"}}) &&
					a["MetricName"] == "ApproximateNumberOfMessagesVisible" && a["Namespace"] == "AWS/SQS" {
					return a
				}
			}
		}
		return nil
	}
	for name, ids := range queueIDs {
		q, dlq := logicalID(t, stack, "Storage", ids[0]), logicalID(t, stack, "Storage", ids[1])
		want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(3)}
		if got := queues[q]["RedrivePolicy"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s queue: redrive policy %v, want %v", name, got, want)
		}
		if _, ok := queues[dlq]["RedrivePolicy"]; ok {
			t.Errorf("%s DLQ redrives further", name)
		}
		if r := queues[dlq]["MessageRetentionPeriod"]; r != float64(14*24*3600) {
			t.Errorf("%s DLQ keeps messages %v s, want 14 days", name, r)
		}
		for _, id := range []string{q, dlq} {
			if queues[id]["SqsManagedSseEnabled"] != true {
				t.Errorf("%s: queue %s is not encrypted", name, id)
			}
		}
		timeout, _ := fns[fnID(t, stack, consumers[name])]["Timeout"].(float64)
		if vis, _ := queues[q]["VisibilityTimeout"].(float64); timeout == 0 || vis < 6*timeout {
			t.Errorf("%s queue: visibility timeout %v s, want at least 6 × its consumer's %v s", name, vis, timeout)
		}

		d := QueueDepthAlarms[name]
		for what, c := range map[string]struct {
			queue               string
			threshold, periods  float64
			periodSeconds       float64
			descriptionContains string
		}{
			"depth": {q, d.Threshold, d.Periods, d.PeriodMinutes * 60, d.Why},
			"DLQ":   {dlq, DLQAlarmThreshold, 1, 300, "dead-letter"},
		} {
			a := alarmOn(c.queue)
			if a == nil {
				t.Errorf("%s queue: no alarm on the %s", name, what)
				continue
			}
			if a["Threshold"] != c.threshold || a["EvaluationPeriods"] != c.periods || a["Period"] != c.periodSeconds ||
				a["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || a["Statistic"] != "Maximum" ||
				a["TreatMissingData"] != "notBreaching" {
				t.Errorf("%s queue, %s alarm: %v", name, what, a)
			}
			if desc, _ := a["AlarmDescription"].(string); !strings.Contains(desc, c.descriptionContains) {
				t.Errorf("%s queue, %s alarm: description %q says nothing of %q", name, what, desc, c.descriptionContains)
			}
			for _, actions := range []string{"AlarmActions", "OKActions"} {
				if got := a[actions]; !reflect.DeepEqual(got, []any{map[string]any{"Ref": topic}}) {
					t.Errorf("%s queue, %s alarm: %s %v, want the alarm topic", name, what, actions, got)
				}
			}
		}
	}
	if subs := resources(tmpl, "AWS::SNS::Subscription"); len(subs) != 0 {
		t.Errorf("subscriptions without alarmEmail: %v", subs)
	}
}

func TestAlarmEmailIsSubscribed(t *testing.T) {
	s := synth(t, nil, map[string]any{ContextAlarmEmail: "ops@example.com"})
	check(t, "e-mail subscription", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "email", "Endpoint": "ops@example.com",
			"TopicArn": map[string]any{"Ref": logicalID(t, s.stack, "Alarms", "Topic")},
		})
	})
}

func TestRUMQueueIsFIFO(t *testing.T) {
	stack, tmpl := openvitals(t)
	queues := resources(tmpl, "AWS::SQS::Queue")
	rum := queues[logicalID(t, stack, "Storage", "rum")]
	for k, want := range map[string]any{
		"FifoQueue": true,
		// Producers set MessageDeduplicationId: the same beacon twice is queued once.
		"ContentBasedDeduplication": false,
		"DeduplicationScope":        "messageGroup",
		"FifoThroughputLimit":       "perMessageGroupId",
	} {
		if rum[k] != want {
			t.Errorf("RUM queue %s = %v, want %v", k, rum[k], want)
		}
	}
	if dlq := queues[logicalID(t, stack, "Storage", "RumDLQ")]; dlq["FifoQueue"] != true {
		t.Errorf("RUM DLQ is not FIFO: %v", dlq)
	}
	// Every other queue is a standard one.
	fifo := 0
	for _, q := range queues {
		if q["FifoQueue"] == true {
			fifo++
		}
	}
	if fifo != 2 {
		t.Errorf("%d FIFO queues, want the RUM queue and its DLQ", fifo)
	}
}

func TestFieldCollectorRunsOneAtATime(t *testing.T) {
	stack, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	fc := fns[fnID(t, stack, "FieldCollector")]
	if fc["ReservedConcurrentExecutions"] != float64(1) {
		t.Errorf("field collector reserved concurrency %v, want 1 (CrUX allows 150 queries a minute)", fc["ReservedConcurrentExecutions"])
	}
	for name, id := range functionIDs {
		if id != "FieldCollector" {
			if r, ok := fns[fnID(t, stack, id)]["ReservedConcurrentExecutions"]; ok {
				t.Errorf("%s reserves concurrency %v", name, r)
			}
		}
	}
}

// functionEnv returns the environment variables of function id (construct id).
func functionEnv(t *testing.T, stack awscdk.Stack, tmpl assertions.Template, id string) map[string]any {
	t.Helper()
	env, _ := resources(tmpl, "AWS::Lambda::Function")[fnID(t, stack, id)]["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}

func TestFunctionsGetTheirSettingsAndSecrets(t *testing.T) {
	stack, tmpl := openvitals(t)
	crux := map[string]any{"Ref": logicalID(t, stack, "CruxApiKey")}
	credentials := map[string]any{"Ref": logicalID(t, stack, "CredentialsKey")}
	want := map[string]map[string]any{
		"Rum":            {EnvTrustViewerCountry: "false"},
		"FieldCollector": {EnvCruxAPIKeySecret: crux, EnvCredentialsKeySecret: credentials},
		"Websites":       {EnvCredentialsKeySecret: credentials},
	}
	specific := []string{EnvTrustViewerCountry, EnvCruxAPIKeySecret, EnvCredentialsKeySecret}
	for _, id := range functionIDs {
		vars := functionEnv(t, stack, tmpl, id)
		for _, k := range specific {
			w, wanted := want[id][k]
			if got, ok := vars[k]; ok != wanted || !reflect.DeepEqual(got, w) {
				t.Errorf("%s: %s = %v (set %v), want %v (set %v)", id, k, got, ok, w, wanted)
			}
		}
	}

	// Behind CloudFront, the country header can be trusted.
	s := synth(t, nil, map[string]any{ContextTrustViewerCountry: "true"})
	if v := functionEnv(t, s.stack, s.tmpl, "Rum")[EnvTrustViewerCountry]; v != "true" {
		t.Errorf("-c trustViewerCountry=true: %s = %v", EnvTrustViewerCountry, v)
	}
}

func TestSecrets(t *testing.T) {
	stack, tmpl := openvitals(t)
	secrets := resources(tmpl, "AWS::SecretsManager::Secret")
	if len(secrets) != 2 {
		t.Errorf("%d secrets, want the CrUX key and the credentials key", len(secrets))
	}
	// Blank, for the operator to fill: the collector reads it trimmed, as no key.
	crux := secrets[logicalID(t, stack, "CruxApiKey")]
	if v, ok := crux["SecretString"].(string); !ok || strings.TrimSpace(v) != "" {
		t.Errorf("the CrUX key secret starts as %v: want a blank value, for the operator to replace", crux["SecretString"])
	}
	if v, ok := crux["GenerateSecretString"]; ok {
		t.Errorf("the CrUX key secret is generated (%v): the operator's key goes there", v)
	}

	gen, _ := secrets[logicalID(t, stack, "CredentialsKey")]["GenerateSecretString"].(map[string]any)
	if gen["PasswordLength"] != float64(43) || gen["RequireEachIncludedType"] != false || gen["IncludeSpace"] != false {
		t.Errorf("credentials key generator %v: want 43 characters, no required types, no space", gen)
	}
	for _, p := range []string{"ExcludeUppercase", "ExcludeLowercase", "ExcludeNumbers", "ExcludePunctuation", "SecretStringTemplate"} {
		if v, ok := gen[p]; ok {
			t.Errorf("credentials key generator sets %s=%v", p, v)
		}
	}
	// What Secrets Manager may still pick from is exactly the base64 alphabet.
	excluded, _ := gen["ExcludeCharacters"].(string)
	var left []rune
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + secretsManagerPunctuation {
		if !strings.ContainsRune(excluded, r) {
			left = append(left, r)
		}
	}
	if string(left) != base64Alphabet {
		t.Errorf("generated characters %q, want the base64 alphabet %q", string(left), base64Alphabet)
	}

	all := (*tmpl.ToJSON())["Resources"].(map[string]any)
	for id := range secrets {
		r := all[id].(map[string]any)
		if r["DeletionPolicy"] != "Retain" || r["UpdateReplacePolicy"] != "Retain" {
			t.Errorf("secret %s: deletion policy %v, update replace policy %v, want both Retain", id, r["DeletionPolicy"], r["UpdateReplacePolicy"])
		}
	}
}

func TestBucketExpiresOldReports(t *testing.T) {
	_, tmpl := openvitals(t)
	rule := map[string]any{
		"Id": "ExpireOldReports", "Status": "Enabled", "ExpirationInDays": DefaultReportRetentionDays,
		"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": 1},
	}
	check(t, "lifecycle rule", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"LifecycleConfiguration": map[string]any{"Rules": []any{rule}},
		})
	})
	days := 400
	s := synth(t, &OpenvitalsStackProps{ReportRetentionDays: &days}, nil)
	rule["ExpirationInDays"] = 400
	check(t, "lifecycle rule of 400 days", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"LifecycleConfiguration": map[string]any{"Rules": []any{rule}},
		})
	})
}

func TestStageThrottling(t *testing.T) {
	stack, tmpl := openvitals(t)
	stage := logicalID(t, stack, "Api", "DefaultStage")
	props := resources(tmpl, "AWS::ApiGatewayV2::Stage")[stage]
	if props["StageName"] != "$default" {
		t.Fatalf("stage %s is %v", stage, props["StageName"])
	}
	wantDefault := map[string]any{"ThrottlingRateLimit": float64(DefaultAPIThrottleRate), "ThrottlingBurstLimit": float64(DefaultAPIThrottleBurst)}
	if got := props["DefaultRouteSettings"]; !reflect.DeepEqual(got, wantDefault) {
		t.Errorf("default route settings %v, want %v", got, wantDefault)
	}
	rum := map[string]any{"ThrottlingRateLimit": float64(DefaultRUMThrottleRate), "ThrottlingBurstLimit": float64(DefaultRUMThrottleBurst)}
	wantRoutes := map[string]any{"GET /rum/{file}": rum, "POST /collect": rum, "OPTIONS /collect": rum}
	if got := props["RouteSettings"]; !reflect.DeepEqual(got, wantRoutes) {
		t.Errorf("route settings %v, want %v", got, wantRoutes)
	}
	// The stage names the public routes, so CloudFormation must create them first.
	deps := map[string]bool{}
	for _, d := range stringsIn((*tmpl.ToJSON())["Resources"].(map[string]any)[stage].(map[string]any)["DependsOn"]) {
		deps[d] = true
	}
	for id, r := range resources(tmpl, "AWS::ApiGatewayV2::Route") {
		if _, public := wantRoutes[r["RouteKey"].(string)]; public && !deps[id] {
			t.Errorf("the stage does not depend on route %s (%s)", r["RouteKey"], id)
		}
	}

	s := synth(t, nil, map[string]any{ContextAPIThrottleRate: "20", ContextAPIThrottleBurst: 40, ContextRUMThrottleRate: "2000", ContextRUMThrottleBurst: "4000"})
	props = resources(s.tmpl, "AWS::ApiGatewayV2::Stage")[logicalID(t, s.stack, "Api", "DefaultStage")]
	if got := props["DefaultRouteSettings"]; !reflect.DeepEqual(got, map[string]any{"ThrottlingRateLimit": float64(20), "ThrottlingBurstLimit": float64(40)}) {
		t.Errorf("configured default route settings %v", got)
	}
	if got := props["RouteSettings"].(map[string]any)["POST /collect"]; !reflect.DeepEqual(got, map[string]any{"ThrottlingRateLimit": float64(2000), "ThrottlingBurstLimit": float64(4000)}) {
		t.Errorf("configured POST /collect settings %v", got)
	}
}

func TestFunctionLogsExpire(t *testing.T) {
	stack, tmpl := openvitals(t)
	groups := resources(tmpl, "AWS::Logs::LogGroup")
	for name, id := range functionIDs {
		props := resources(tmpl, "AWS::Lambda::Function")[fnID(t, stack, id)]
		lc, _ := props["LoggingConfig"].(map[string]any)
		ref, _ := lc["LogGroup"].(map[string]any)
		group, _ := ref["Ref"].(string)
		g, ok := groups[group]
		if !ok {
			t.Errorf("%s logs to %v, not a log group of the stack", name, lc)
			continue
		}
		if g["RetentionInDays"] != float64(30) {
			t.Errorf("%s: log retention %v days, want 30", name, g["RetentionInDays"])
		}
	}
}

// allowedStarActions lists "logicalID: action" for every Allow statement anywhere in the
// template (identity policies, roles' inline policies, queue, bucket and topic policies) whose
// action is "*" or a whole service ("sqs:*").
func allowedStarActions(tmpl map[string]any) []string {
	var found []string
	var walk func(id string, v any)
	walk = func(id string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["Effect"] == "Allow" {
				var actions []string
				switch a := v["Action"].(type) {
				case string:
					actions = []string{a}
				case []any:
					for _, x := range a {
						s, _ := x.(string)
						actions = append(actions, s)
					}
				}
				for _, a := range actions {
					if a == "*" || strings.HasSuffix(a, ":*") {
						found = append(found, id+": "+a)
					}
				}
				if _, ok := v["NotAction"]; ok {
					found = append(found, id+": NotAction")
				}
			}
			for _, e := range v {
				walk(id, e)
			}
		case []any:
			for _, e := range v {
				walk(id, e)
			}
		}
	}
	resources, _ := tmpl["Resources"].(map[string]any)
	for id, r := range resources {
		walk(id, r)
	}
	slices.Sort(found)
	return found
}

func TestNoStatementAllowsStarActions(t *testing.T) {
	_, tmpl := openvitals(t)
	if found := allowedStarActions(*tmpl.ToJSON()); len(found) > 0 {
		t.Errorf("statements allowing every action of a service:\n%s", strings.Join(found, "\n"))
	}
}

// TestStarActionDetector proves the check above can fail: a role allowed dynamodb:* must be
// reported.
func TestStarActionDetector(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Bad"), nil)
	role := awsiam.NewRole(stack, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("dynamodb:GetItem", "dynamodb:*"), Resources: jsii.Strings("arn:aws:dynamodb:*:*:table/x"),
	}))
	found := allowedStarActions(*assertions.Template_FromStack(stack, nil).ToJSON())
	if len(found) != 1 || !strings.HasSuffix(found[0], ": dynamodb:*") {
		t.Fatalf("detector found %q, want the role's dynamodb:*", found)
	}
}

// TestMakefileBuildsEveryFunction keeps the Makefile's LAMBDA_FUNCTIONS (what `make build`
// writes into dist/) and the stack's functions the same set.
func TestMakefileBuildsEveryFunction(t *testing.T) {
	raw, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAMBDA_FUNCTIONS\s*:=((?:[^\n]*\\\n)*[^\n]*)`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("no LAMBDA_FUNCTIONS in the Makefile")
	}
	built := strings.Fields(strings.ReplaceAll(string(m[1]), "\\", " "))
	slices.Sort(built)
	deployed := allFunctions()
	slices.Sort(deployed)
	if !slices.Equal(built, deployed) {
		t.Errorf("make build builds %v, the stack deploys %v", built, deployed)
	}
	if DefaultFunctionsDir != "../dist" || !strings.Contains(string(raw), "-o dist/$$f/bootstrap") {
		t.Errorf("the stack reads %s/<function>/bootstrap; the Makefile must write dist/<function>/bootstrap", DefaultFunctionsDir)
	}
}
