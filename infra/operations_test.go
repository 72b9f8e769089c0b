package main

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// consumers names, per work queue, the function (directory under functions/) its event
// source feeds.
var consumers = map[string]string{
	"purge": "purge-worker", "audit": "audit-worker", "multistep": "multistep-worker", "fanout": "fanout-worker",
	"beacon": "rum-batcher", "rum": "rum-aggregator", "ux": "ux-worker", "notify": "notifier",
}

// TestEveryQueueHasADLQAndAlarms: each queue redrives to its own DLQ after 3 receives, outlasts
// its consumer's timeout six times, and has an alarm on its depth and one on its DLQ's, both
// notifying the alarm topic when they fire and when they clear.
func TestEveryQueueHasADLQAndAlarms(t *testing.T) {
	o, tmpl := openvitals(t)
	queues := resources(tmpl, "AWS::SQS::Queue")
	fns := resources(tmpl, "AWS::Lambda::Function")
	alarms := resources(tmpl, "AWS::CloudWatch::Alarm")
	topic := logicalID(t, o.stack, "Alarms", "Topic")
	ages := 0
	for _, wq := range o.queues {
		if wq.props.oldest != nil {
			ages++
		}
	}
	if len(o.queues) != len(queuePaths) || len(o.queues) != len(consumers) || len(alarms) != 2*len(queuePaths)+ages || ages != 1 {
		t.Errorf("%d work queues, %d alarms: want %d, each with one depth and one DLQ alarm, and the audit queue's age alarm",
			len(o.queues), len(alarms), len(queuePaths))
	}
	// alarmOn returns the alarm watching metric of queue (logical id).
	alarmOn := func(queue, metric string) map[string]any {
		for _, a := range alarms {
			dims, _ := a["Dimensions"].([]any)
			for _, d := range dims {
				d, _ := d.(map[string]any)
				if d["Name"] == "QueueName" && reflect.DeepEqual(d["Value"], map[string]any{"Fn::GetAtt": []any{queue, "QueueName"}}) &&
					a["MetricName"] == metric && a["Namespace"] == "AWS/SQS" {
					return a
				}
			}
		}
		return nil
	}
	for _, wq := range o.queues {
		name := wq.name
		if _, ok := queuePaths[name]; !ok {
			t.Errorf("work queue %s: the tests know nothing of it", name)
			continue
		}
		q, dlq := queueID(t, o.stack, name), dlqID(t, o.stack, name)
		want := map[string]any{"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": float64(5)}
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
		timeout, _ := fns[fnID(t, o, consumers[name])]["Timeout"].(float64)
		if vis, _ := queues[q]["VisibilityTimeout"].(float64); timeout == 0 || vis < 6*timeout {
			t.Errorf("%s queue: visibility timeout %v s, want at least 6 × its consumer's %v s", name, vis, timeout)
		}

		d := wq.props.depth
		type alarmWant struct {
			queue, metric       string
			threshold, periods  float64
			periodSeconds       float64
			descriptionContains string
		}
		wants := map[string]alarmWant{
			"depth": {q, "ApproximateNumberOfMessagesVisible", d.threshold, d.periods, d.periodMinutes * 60, d.why},
			"DLQ":   {dlq, "ApproximateNumberOfMessagesVisible", dlqAlarmThreshold, 1, 300, "dead-letter"},
		}
		if a := wq.props.oldest; a != nil {
			wants["age"] = alarmWant{q, "ApproximateAgeOfOldestMessage", a.hours * 3600, a.periods, a.periodMinutes * 60, a.why}
		}
		// A period and its count within a day: CloudWatch evaluates an alarm over a day at most.
		if d.periodMinutes*d.periods > 24*60 {
			t.Errorf("%s queue: depth alarm over %v minutes, more than a day", name, d.periodMinutes*d.periods)
		}
		for what, c := range wants {
			a := alarmOn(c.queue, c.metric)
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

// TestAuditAndFanoutQueuesKeepTwoWeeks: the audit queue keeps a message as long as SQS can
// (a backlog outlives the default 4 days long enough for its alarm to be acted on), and so does
// the fan-out queue that feeds it; the others keep SQS's default.
func TestAuditAndFanoutQueuesKeepTwoWeeks(t *testing.T) {
	o, tmpl := openvitals(t)
	queues := resources(tmpl, "AWS::SQS::Queue")
	for _, wq := range o.queues {
		got := queues[queueID(t, o.stack, wq.name)]["MessageRetentionPeriod"]
		switch wq.name {
		case "audit", "fanout":
			if got != float64(14*24*3600) {
				t.Errorf("%s queue keeps messages %v s, want 14 days", wq.name, got)
			}
		default:
			if got != nil {
				t.Errorf("%s queue keeps messages %v s, want SQS's default", wq.name, got)
			}
		}
	}
}

// TestAuditConcurrencyIsDerived: the audit workers that run at once are what a day's audits
// need (audits a day times seconds an audit, over the hours a day's audits may take), within
// 2 and auditMaxConcurrency; a shortfall is a warning at synthesis and an alarm on the age of
// the oldest audit beyond those hours.
func TestAuditConcurrencyIsDerived(t *testing.T) {
	for _, c := range []struct {
		name    string
		context map[string]any
		want    int
		short   bool
		hours   float64
	}{
		{"defaults: 10,000 audits of 70 s in 20 hours", nil, 10, false, 20},
		{"100 websites of 50 pages", map[string]any{contextAuditsPerDay: 10000, contextAuditSeconds: 23, contextAuditWindowHours: 24}, 3, false, 24},
		{"2,000 websites of 200 pages", map[string]any{contextAuditsPerDay: "800000", contextAuditMaxConcurrency: 1000}, 778, false, 20},
		{"10,000 websites of 1,000 pages, capped", map[string]any{contextAuditsPerDay: 20000000, contextAuditMaxConcurrency: 1000}, 1000, true, 20},
		{"the default cap", map[string]any{contextAuditsPerDay: 800000, contextAuditWindowHours: 12}, defaultAuditMaxConcurrency, true, 12},
		{"a few audits: the least an event source takes", map[string]any{contextAuditsPerDay: 10}, 2, false, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := synth(t, nil, c.context)
			check(t, "maximum concurrency", func() {
				s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
					"FunctionName":  map[string]any{"Ref": fnID(t, s.o, "audit-worker")},
					"ScalingConfig": map[string]any{"MaximumConcurrency": c.want},
				})
			})
			warnings := assertions.Annotations_FromStack(s.o.stack).FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("audit workers")))
			if got := len(*warnings) > 0; got != c.short {
				t.Errorf("shortfall warning %v, want %v: %v", got, c.short, *warnings)
			}
			var age map[string]any
			for _, a := range resources(s.tmpl, "AWS::CloudWatch::Alarm") {
				if a["MetricName"] == "ApproximateAgeOfOldestMessage" {
					age = a
				}
			}
			if age == nil || age["Threshold"] != c.hours*3600 || !strings.Contains(fmt.Sprint(age["AlarmDescription"]), "fall short") {
				t.Errorf("age alarm %v, want %v hours", age, c.hours)
			}
		})
	}
}

func TestAlarmEmailIsSubscribed(t *testing.T) {
	s := synth(t, nil, map[string]any{contextAlarmEmail: "ops@example.com"})
	check(t, "e-mail subscription", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "email", "Endpoint": "ops@example.com",
			"TopicArn": map[string]any{"Ref": logicalID(t, s.o.stack, "Alarms", "Topic")},
		})
	})
}

func TestRUMQueueIsFIFO(t *testing.T) {
	o, tmpl := openvitals(t)
	queues := resources(tmpl, "AWS::SQS::Queue")
	rum := queues[queueID(t, o.stack, "rum")]
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
	if dlq := queues[dlqID(t, o.stack, "rum")]; dlq["FifoQueue"] != true {
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

// No function reserves concurrency (a new account's limit of 10 would refuse the reservation
// and roll the first deploy back); the ux workers that may run at once share the CrUX quota.
func TestNoReservedConcurrency(t *testing.T) {
	o, tmpl := openvitals(t)
	fns := resources(tmpl, "AWS::Lambda::Function")
	for name := range o.functions {
		if r, ok := fns[fnID(t, o, name)]["ReservedConcurrentExecutions"]; ok {
			t.Errorf("%s reserves concurrency %v", name, r)
		}
	}
	qpm := functionEnv(t, o, tmpl, "ux-worker")["OPENVITALS_CRUX_QUERIES_PER_MINUTE"]
	if n, err := strconv.Atoi(fmt.Sprint(qpm)); err != nil || n*uxWorkerMaxConcurrency > cruxQuota || n < cruxQuota/uxWorkerMaxConcurrency {
		t.Errorf("ux worker OPENVITALS_CRUX_QUERIES_PER_MINUTE = %v with %d workers at once: want their share of %d", qpm, uxWorkerMaxConcurrency, cruxQuota)
	}
	// The user-experience alarm speaks of what the queue carries now.
	for _, a := range resources(tmpl, "AWS::CloudWatch::Alarm") {
		if desc, _ := a["AlarmDescription"].(string); strings.HasPrefix(desc, "openvitals ux queue:") &&
			!strings.Contains(desc, "user-experience data collections") {
			t.Errorf("ux depth alarm: %q", desc)
		}
	}
}

// functionEnv returns the environment variables of the function of functions/<name>.
func functionEnv(t *testing.T, o *openvitalsStack, tmpl assertions.Template, name string) map[string]any {
	t.Helper()
	env, _ := resources(tmpl, "AWS::Lambda::Function")[fnID(t, o, name)]["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}

func TestFunctionsGetTheirSettingsAndSecrets(t *testing.T) {
	o, tmpl := openvitals(t)
	crux := map[string]any{"Ref": logicalID(t, o.stack, "CruxApiKey")}
	credentials := map[string]any{"Ref": logicalID(t, o.stack, "CredentialsKey")}
	want := map[string]map[string]any{
		"rum": {envTrustViewerCountry: "false"},
		// The dashboard names the RUM function's URL in the snippet it shows.
		"web":       {envRUMURL: map[string]any{"Fn::GetAtt": []any{logicalID(t, o.stack, "Api", "Rum", "FunctionUrl"), "FunctionUrl"}}},
		"ux-worker": {envCruxAPIKeySecret: crux, envCredentialsKeySecret: credentials},
		"websites":  {envCredentialsKeySecret: credentials},
		"events":    {envCredentialsKeySecret: credentials},
		"notifier":  {envCredentialsKeySecret: credentials},
		// Test profiles' secrets: sealed by the pages function, opened by the audit worker.
		"pages":        {envCredentialsKeySecret: credentials},
		"audit-worker": {envCredentialsKeySecret: credentials},
	}
	specific := []string{envTrustViewerCountry, envCruxAPIKeySecret, envCredentialsKeySecret, envRUMURL}
	for name := range o.functions {
		vars := functionEnv(t, o, tmpl, name)
		for _, k := range specific {
			w, wanted := want[name][k]
			if got, ok := vars[k]; ok != wanted || !reflect.DeepEqual(got, w) {
				t.Errorf("%s: %s = %v (set %v), want %v (set %v)", name, k, got, ok, w, wanted)
			}
		}
		// The ux queue is OPENVITALS_UX_QUEUE: nothing reads an OPENVITALS_FIELD_QUEUE.
		if v, ok := vars["OPENVITALS_FIELD_QUEUE"]; ok {
			t.Errorf("%s: OPENVITALS_FIELD_QUEUE = %v", name, v)
		}
	}

	// Behind CloudFront, the country header can be trusted.
	s := synth(t, nil, map[string]any{contextTrustViewerCountry: "true"})
	if v := functionEnv(t, s.o, s.tmpl, "rum")[envTrustViewerCountry]; v != "true" {
		t.Errorf("-c trustViewerCountry=true: %s = %v", envTrustViewerCountry, v)
	}
}

func TestSecrets(t *testing.T) {
	o, tmpl := openvitals(t)
	secrets := resources(tmpl, "AWS::SecretsManager::Secret")
	if len(secrets) != 2 {
		t.Errorf("%d secrets, want the CrUX key and the credentials key", len(secrets))
	}
	// Blank, for the operator to fill: the collector reads it trimmed, as no key.
	crux := secrets[logicalID(t, o.stack, "CruxApiKey")]
	if v, ok := crux["SecretString"].(string); !ok || strings.TrimSpace(v) != "" {
		t.Errorf("the CrUX key secret starts as %v: want a blank value, for the operator to replace", crux["SecretString"])
	}
	if v, ok := crux["GenerateSecretString"]; ok {
		t.Errorf("the CrUX key secret is generated (%v): the operator's key goes there", v)
	}

	gen, _ := secrets[logicalID(t, o.stack, "CredentialsKey")]["GenerateSecretString"].(map[string]any)
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
		"Id": "ExpireOldReports", "Status": "Enabled", "ExpirationInDays": defaultReportRetentionDays,
		"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": 1},
	}
	check(t, "lifecycle rule", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"LifecycleConfiguration": map[string]any{"Rules": []any{rule}},
		})
	})
	days := 400
	s := synth(t, &openvitalsStackProps{ReportRetentionDays: &days}, nil)
	rule["ExpirationInDays"] = 400
	check(t, "lifecycle rule of 400 days", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::S3::Bucket"), map[string]any{
			"LifecycleConfiguration": map[string]any{"Rules": []any{rule}},
		})
	})
}

func TestStageThrottling(t *testing.T) {
	o, tmpl := openvitals(t)
	stage := logicalID(t, o.stack, "Api", "Api", "DefaultStage")
	props := resources(tmpl, "AWS::ApiGatewayV2::Stage")[stage]
	if props["StageName"] != "$default" {
		t.Fatalf("stage %s is %v", stage, props["StageName"])
	}
	wantDefault := map[string]any{"ThrottlingRateLimit": float64(defaultAPIThrottleRate), "ThrottlingBurstLimit": float64(defaultAPIThrottleBurst)}
	if got := props["DefaultRouteSettings"]; !reflect.DeepEqual(got, wantDefault) {
		t.Errorf("default route settings %v, want %v", got, wantDefault)
	}
	// Each route of the rum group (the public snippet and beacons) has the RUM throttle; the
	// others keep the stage's.
	rum := map[string]any{"ThrottlingRateLimit": float64(defaultRUMThrottleRate), "ThrottlingBurstLimit": float64(defaultRUMThrottleBurst)}
	wantRoutes := map[string]any{}
	_, routes := apiRoutes(t)
	for _, r := range routes {
		if r.Group == "rum" {
			wantRoutes["ANY "+strings.ReplaceAll(r.Pattern, "...}", "+}")] = rum
		}
	}
	for _, key := range []string{"ANY /rum/{file}", "ANY /collect"} {
		if _, ok := wantRoutes[key]; !ok {
			t.Errorf("routes.json has no rum route %s", key)
		}
	}
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

	s := synth(t, nil, map[string]any{contextAPIThrottleRate: "20", contextAPIThrottleBurst: 40, contextRUMThrottleRate: "2000", contextRUMThrottleBurst: "4000"})
	props = resources(s.tmpl, "AWS::ApiGatewayV2::Stage")[logicalID(t, s.o.stack, "Api", "Api", "DefaultStage")]
	if got := props["DefaultRouteSettings"]; !reflect.DeepEqual(got, map[string]any{"ThrottlingRateLimit": float64(20), "ThrottlingBurstLimit": float64(40)}) {
		t.Errorf("configured default route settings %v", got)
	}
	if got := props["RouteSettings"].(map[string]any)["ANY /collect"]; !reflect.DeepEqual(got, map[string]any{"ThrottlingRateLimit": float64(2000), "ThrottlingBurstLimit": float64(4000)}) {
		t.Errorf("configured ANY /collect settings %v", got)
	}
}

func TestFunctionLogsExpire(t *testing.T) {
	o, tmpl := openvitals(t)
	groups := resources(tmpl, "AWS::Logs::LogGroup")
	for name := range o.functions {
		props := resources(tmpl, "AWS::Lambda::Function")[fnID(t, o, name)]
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

// TestMakefileBuildsEveryFunction: `make build` builds every directory of functions/ holding
// a main.go (TestDeployedFunctionsAreTheFunctionDirectories checks the stack deploys those)
// into dist/<function>/bootstrap, where the stack reads them.
func TestMakefileBuildsEveryFunction(t *testing.T) {
	raw, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAMBDA_FUNCTIONS\s*:=\s*(.*)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("no LAMBDA_FUNCTIONS in the Makefile")
	}
	derived := regexp.MustCompile(`^\$\(sort \$\(patsubst functions/%/main\.go,\s*%,\s*\$\(wildcard functions/\*/main\.go\)\)\)$`)
	if def := strings.TrimSpace(string(m[1])); !derived.MatchString(def) {
		t.Errorf("LAMBDA_FUNCTIONS := %s: want it derived from functions/*/main.go", def)
	}
	build := regexp.MustCompile(`for f in \$\(LAMBDA_FUNCTIONS\); do[^\n]*\\\n(?:[^\n]*\\\n)*?[^\n]*-o dist/\$\$f/bootstrap \./functions/\$\$f`)
	if !build.Match(raw) {
		t.Error("the Makefile does not build each of $(LAMBDA_FUNCTIONS) from ./functions/$$f into dist/$$f/bootstrap")
	}
	if defaultFunctionsDir != "../dist" {
		t.Errorf("the stack reads %s/<function>/bootstrap; the Makefile writes dist/<function>/bootstrap", defaultFunctionsDir)
	}
}

// TestStatefulResourcesKeepTheirLogicalIDs: CloudFormation replaces a resource whose logical id
// changes. For these that would mean an empty table and bucket (the old ones retained but
// orphaned), a new credentials key (the stored credentials could no longer be decrypted), a
// blank CrUX key, and an alarm topic without its subscriptions: their construct paths stay.
func TestStatefulResourcesKeepTheirLogicalIDs(t *testing.T) {
	_, tmpl := openvitals(t)
	all := (*tmpl.ToJSON())["Resources"].(map[string]any)
	for id, typ := range map[string]string{
		"StorageTableB43FDCE7":   "AWS::DynamoDB::Table",
		"StorageBucket5CB7C8EA":  "AWS::S3::Bucket",
		"CredentialsKeyA24B74BF": "AWS::SecretsManager::Secret",
		"CruxApiKeyEADFD041":     "AWS::SecretsManager::Secret",
		"AlarmsTopic3A2DFEBA":    "AWS::SNS::Topic",
	} {
		r, _ := all[id].(map[string]any)
		if r["Type"] != typ {
			t.Errorf("no %s %s: its logical id changed, so CloudFormation would replace it", typ, id)
		}
	}
}

// TestPurgeSettlesAfterTheLongestFunction shows the purge worker passes again for as long as
// any function of the stack can still be writing for a deleted website: its settle time is the
// longest function timeout and a margin (TestLeastPrivilege shows it may queue its own next
// pass).
func TestPurgeSettlesAfterTheLongestFunction(t *testing.T) {
	o, tmpl := openvitals(t)
	longest := 0.0
	for _, fn := range resources(tmpl, "AWS::Lambda::Function") {
		if timeout, ok := fn["Timeout"].(float64); ok {
			longest = max(longest, timeout)
		}
	}
	if longest != 15*60 {
		t.Errorf("longest function timeout %v s, want the audit worker's 900", longest)
	}
	want := strconv.Itoa(int(longest) + purgeSettleMarginSeconds)
	for _, name := range []string{"purge-worker", "scheduler"} {
		if got := functionEnv(t, o, tmpl, name)["OPENVITALS_PURGE_SETTLE_SECONDS"]; got != want {
			t.Errorf("%s OPENVITALS_PURGE_SETTLE_SECONDS = %v, want %s", name, got, want)
		}
	}
}

// TestEmailFromLetsTheNotifierSend: with emailFrom, the notifier gets the address and may send
// as it or its domain, and nothing else of SES.
func TestEmailFromLetsTheNotifierSend(t *testing.T) {
	s := synth(t, nil, map[string]any{contextEmailFrom: "alerts@example.com"})
	if got := functionEnv(t, s.o, s.tmpl, "notifier")["OPENVITALS_EMAIL_FROM"]; got != "alerts@example.com" {
		t.Errorf("OPENVITALS_EMAIL_FROM = %v", got)
	}
	stmts := functionStatements(t, s.tmpl, fnID(t, s.o, "notifier"))
	var ses []any
	for _, st := range stmts {
		if slices.Contains(st.Actions, "ses:SendEmail") {
			ses = append(ses, st.Resource)
		}
	}
	text := fmt.Sprint(ses)
	if len(ses) != 1 || !strings.Contains(text, "identity/alerts@example.com") || !strings.Contains(text, "identity/example.com") || strings.Contains(text, "*") {
		t.Errorf("SES statements on %v, want identity/alerts@example.com and identity/example.com only", ses)
	}
	for _, fn := range []string{"audit-worker", "events", "websites"} {
		for _, st := range functionStatements(t, s.tmpl, fnID(t, s.o, fn)) {
			if slices.Contains(st.Actions, "ses:SendEmail") {
				t.Errorf("%s may send email", fn)
			}
		}
	}
}
