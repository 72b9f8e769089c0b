package rehearsal

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
)

// Limits every deployment must keep, whatever the stack's settings.
const (
	// maxMemoryMB is the most memory a new AWS account may give a function until its Lambda
	// quotas are raised.
	maxMemoryMB = 3008
	// maxTimeoutSeconds is Lambda's longest timeout.
	maxTimeoutSeconds = 900
	// visibilityPerTimeout: a queue's visibility timeout is at least six times its consumer's
	// timeout, as AWS advises for SQS event sources (Lambda refuses a mapping below one time).
	visibilityPerTimeout = 6
	// minReceiveCount: below five receives, a message held back by the event source while its
	// consumer was busy can reach the dead-letter queue without ever failing (AWS advises 5).
	minReceiveCount = 5
	// ttlAttribute is the attribute the store writes each expiring item's end to (epoch
	// seconds): the history's items (results, runs, test series, regressions over), events,
	// deliveries, quotas, report links, RUM batches.
	ttlAttribute = store.TTLAttribute
	// architecture is the one every function runs on (the Makefile builds for it).
	architecture = lambdatypes.ArchitectureArm64
	// maxRUMLateSeconds: a real user's page view is in the reports within five minutes (the
	// rebatcher's batching window, then the rum queue's delay, then a compaction).
	maxRUMLateSeconds = 300
	// compactionSeconds is what the bound leaves a compaction and the queues' own latency.
	compactionSeconds = 30
)

// deployment is the stack as the emulator holds it.
type deployment struct {
	ctx     context.Context
	lambda  *lambda.Client
	sqs     *sqs.Client
	ddb     *dynamodb.Client
	events  *eventbridge.Client
	secrets *secretsmanager.Client
	s3      *s3.Client
	// resources are the stack's resources by logical id.
	resources map[string]cfntypes.StackResource
	// template is the deployed template's Resources.
	template map[string]templateResource
	// functions are the deployed functions by directory name under functions/.
	functions map[string]*function
	// queueARNs are the stack's queues' ARNs by URL.
	queueARNs map[string]string
	// mappings are every event source mapping of the emulator.
	mappings []lambdatypes.EventSourceMappingConfiguration
}

// templateResource is a resource of the deployed template.
type templateResource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
}

// function is a deployed function of functions/.
type function struct {
	service.Function
	logicalID string
	config    *lambdatypes.FunctionConfiguration
	env       map[string]string
}

// TestDeployment checks the stack deployed into the emulator by scripts/rehearse.sh against
// the code: the functions, their queues, the table and the schedules.
func TestDeployment(t *testing.T) {
	stack := os.Getenv("OPENVITALS_REHEARSAL_STACK")
	if stack == "" {
		t.Skip("the deployment rehearsal runs this against an emulator: make rehearse")
	}
	if u, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL")); err != nil || (u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1") {
		t.Fatalf("AWS_ENDPOINT_URL=%q: the rehearsal reads a local emulator only", os.Getenv("AWS_ENDPOINT_URL"))
	}
	d := load(t, stack)
	t.Run("functions", d.checkFunctions)
	t.Run("queues", d.checkQueues)
	t.Run("table", d.checkTable)
	t.Run("real users", d.checkRealUsers)
	t.Run("schedules", d.checkSchedules)
	t.Run("exports", d.checkExports)
}

// load reads the stack's resources, template, functions, queues and mappings.
func load(t *testing.T, stack string) *deployment {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfn := cloudformation.NewFromConfig(cfg)
	d := &deployment{
		ctx: ctx, lambda: lambda.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), ddb: dynamodb.NewFromConfig(cfg),
		events: eventbridge.NewFromConfig(cfg), secrets: secretsmanager.NewFromConfig(cfg),
		s3:        s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }),
		resources: map[string]cfntypes.StackResource{}, functions: map[string]*function{}, queueARNs: map[string]string{},
	}
	stacks, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: &stack})
	if err != nil || len(stacks.Stacks) != 1 {
		t.Fatalf("stack %s: %v", stack, err)
	}
	if s := stacks.Stacks[0].StackStatus; s != cfntypes.StackStatusCreateComplete && s != cfntypes.StackStatusUpdateComplete {
		t.Fatalf("stack %s is %s", stack, s)
	}
	res, err := cfn.DescribeStackResources(ctx, &cloudformation.DescribeStackResourcesInput{StackName: &stack})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.StackResources {
		d.resources[aws.ToString(r.LogicalResourceId)] = r
	}
	tmpl, err := cfn.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: &stack})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Resources map[string]templateResource }
	if err := json.Unmarshal([]byte(aws.ToString(tmpl.TemplateBody)), &body); err != nil {
		t.Fatalf("deployed template: %v", err)
	}
	d.template = body.Resources

	for _, fn := range service.Functions {
		f, err := d.function(fn)
		if err != nil {
			t.Errorf("functions/%s: %v", fn.Name, err)
			continue
		}
		d.functions[fn.Name] = f
	}
	for _, url := range d.physicalIDs("AWS::SQS::Queue") {
		attrs, err := d.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
		})
		if err != nil {
			t.Fatalf("queue %s: %v", url, err)
		}
		d.queueARNs[url] = attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	}
	pages := lambda.NewListEventSourceMappingsPaginator(d.lambda, &lambda.ListEventSourceMappingsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d.mappings = append(d.mappings, page.EventSourceMappings...)
	}
	if t.Failed() {
		t.FailNow()
	}
	return d
}

// constructID is the construct id the stack gives the function of functions/<name>:
// "ux-worker" is "UxWorker".
func constructID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// function finds the deployed function of fn by its construct path and reads its
// configuration from the emulator.
func (d *deployment) function(fn service.Function) (*function, error) {
	var ids []string
	for id, r := range d.template {
		path, _ := r.Metadata["aws:cdk:path"].(string)
		if r.Type == "AWS::Lambda::Function" && strings.HasSuffix(path, "/"+constructID(fn.Name)+"/Resource") {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		return nil, fmt.Errorf("%d deployed functions of construct id %s, want 1", len(ids), constructID(fn.Name))
	}
	out, err := d.lambda.GetFunction(d.ctx, &lambda.GetFunctionInput{FunctionName: aws.String(d.physical(ids[0]))})
	if err != nil {
		return nil, err
	}
	f := &function{Function: fn, logicalID: ids[0], config: out.Configuration, env: map[string]string{}}
	if out.Configuration.Environment != nil {
		f.env = out.Configuration.Environment.Variables
	}
	return f, nil
}

// physical returns the emulator's id of the stack's resource id.
func (d *deployment) physical(logicalID string) string {
	return aws.ToString(d.resources[logicalID].PhysicalResourceId)
}

// physicalIDs returns the physical ids of the stack's resources of type typ.
func (d *deployment) physicalIDs(typ string) []string {
	var ids []string
	for _, r := range d.resources {
		if aws.ToString(r.ResourceType) == typ {
			ids = append(ids, aws.ToString(r.PhysicalResourceId))
		}
	}
	slices.Sort(ids)
	return ids
}

// only returns the physical id of the stack's one resource of type typ.
func (d *deployment) only(t *testing.T, typ string) string {
	t.Helper()
	ids := d.physicalIDs(typ)
	if len(ids) != 1 {
		t.Fatalf("%d resources of type %s, want 1", len(ids), typ)
	}
	return ids[0]
}

// number reads a numeric template property.
func number(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), true
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}

// buckets returns the stack's buckets: the reports' and the real users'.
func (d *deployment) buckets(t *testing.T) (reports, rum string) {
	t.Helper()
	for id, r := range d.resources {
		if aws.ToString(r.ResourceType) != "AWS::S3::Bucket" {
			continue
		}
		switch {
		case strings.HasPrefix(id, "StorageRumBucket"):
			rum = aws.ToString(r.PhysicalResourceId)
		case strings.HasPrefix(id, "StorageBucket"):
			reports = aws.ToString(r.PhysicalResourceId)
		case strings.HasPrefix(id, "ExportsBucket"):
			// The exports' bucket: checkExports.
		default:
			t.Errorf("bucket %s: neither the reports' nor the real users'", id)
		}
	}
	if reports == "" || rum == "" {
		t.Fatalf("buckets %q and %q: want the reports' and the real users'", reports, rum)
	}
	return reports, rum
}

func (d *deployment) checkFunctions(t *testing.T) {
	table := d.only(t, "AWS::DynamoDB::Table")
	bucket, rumBucket := d.buckets(t)
	// Each queue variable names the same queue in every function.
	queueOf := map[string]string{}
	for _, fn := range service.Functions {
		f := d.functions[fn.Name]
		c := f.config
		props := d.template[f.logicalID].Properties
		// moto's CloudFormation does not pass Architectures on to Lambda (every function reads
		// back as x86_64): the deployed template's is checked.
		if archs, _ := props["Architectures"].([]any); len(archs) != 1 || archs[0] != string(architecture) {
			t.Errorf("%s: architectures %v, want %s", fn.Name, props["Architectures"], architecture)
		}
		if want, _ := number(props["MemorySize"]); aws.ToInt32(c.MemorySize) != int32(want) || want > maxMemoryMB || want < 128 {
			t.Errorf("%s: memory %d MB, template %v: want the template's, 128 to %d", fn.Name, aws.ToInt32(c.MemorySize), props["MemorySize"], maxMemoryMB)
		}
		if want, _ := number(props["Timeout"]); aws.ToInt32(c.Timeout) != int32(want) || want > maxTimeoutSeconds || want < 1 {
			t.Errorf("%s: timeout %d s, template %v: want the template's, 1 to %d", fn.Name, aws.ToInt32(c.Timeout), props["Timeout"], maxTimeoutSeconds)
		}
		conc, err := d.lambda.GetFunctionConcurrency(d.ctx, &lambda.GetFunctionConcurrencyInput{FunctionName: c.FunctionName})
		if err != nil {
			t.Errorf("%s: concurrency: %v", fn.Name, err)
		} else if conc.ReservedConcurrentExecutions != nil {
			t.Errorf("%s reserves a concurrency of %d: a new account (concurrency limit 10) refuses any reservation", fn.Name, *conc.ReservedConcurrentExecutions)
		}
		if _, ok := props["ReservedConcurrentExecutions"]; ok {
			t.Errorf("%s: the template reserves concurrency", fn.Name)
		}

		for _, name := range fn.Required() {
			v := f.env[name]
			if v == "" {
				t.Errorf("%s: %s is not set, and the function needs it (service.Functions)", fn.Name, name)
				continue
			}
			if err := d.checkValue(name, v, table, bucket, rumBucket); err != nil {
				t.Errorf("%s: %s=%q: %v", fn.Name, name, v, err)
			}
			if strings.HasSuffix(name, "_QUEUE") {
				if prev, ok := queueOf[name]; ok && prev != v {
					t.Errorf("%s: %s=%s, another function has %s", fn.Name, name, v, prev)
				}
				queueOf[name] = v
			}
		}
	}
	seen := map[string]string{}
	for name, url := range queueOf {
		if other, ok := seen[url]; ok {
			t.Errorf("%s and %s name the same queue %s", name, other, url)
		}
		seen[url] = name
	}
}

var absoluteURL = regexp.MustCompile(`^https?://[^/\s]+`)

// checkValue says what is wrong with the deployed value v of the required variable name.
func (d *deployment) checkValue(name, v, table, bucket, rumBucket string) error {
	switch {
	case name == service.EnvTable && v != table:
		return fmt.Errorf("not the stack's table %s", table)
	case name == service.EnvBucket && v != bucket:
		return fmt.Errorf("not the stack's bucket %s", bucket)
	case name == service.EnvRUMBucket && v != rumBucket:
		return fmt.Errorf("not the stack's real-user bucket %s", rumBucket)
	case name == service.EnvExportBucket && v != d.exportBucket():
		return fmt.Errorf("not the stack's export bucket %s", d.exportBucket())
	case name == service.EnvRUMRetentionDays:
		if n, err := strconv.Atoi(v); err != nil || n < service.MinRUMRetentionDays || n > service.MaxRUMRetentionDays {
			return fmt.Errorf("want %d to %d days", service.MinRUMRetentionDays, service.MaxRUMRetentionDays)
		}
	case strings.HasSuffix(name, "_QUEUE"):
		if _, ok := d.queueARNs[v]; !ok {
			return fmt.Errorf("not the URL of a queue of the stack")
		}
		if fifo := strings.HasSuffix(v, ".fifo"); fifo != (name == service.EnvRUMQueue) {
			return fmt.Errorf("FIFO queue: %v", fifo)
		}
	case name == service.EnvCrUXAPIKeySecret || name == service.EnvCredentialsKeySecret:
		if _, err := d.secrets.DescribeSecret(d.ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(v)}); err != nil {
			return fmt.Errorf("no such secret: %v", err)
		}
	case name == service.EnvAPIURL && !absoluteURL.MatchString(v):
		return fmt.Errorf("not an absolute URL")
	case name == service.EnvPurgeSettle || name == service.EnvCrUXQueriesPerMinute:
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Errorf("not a whole number")
		}
	case name == service.EnvChromiumBin || name == service.EnvNode || name == service.EnvLighthouseRunner:
		if !filepath.IsAbs(v) {
			return fmt.Errorf("not an absolute path in the image")
		}
	}
	return nil
}

// templateMapping returns the template's event source mapping of the function of logical id
// fnID.
func (d *deployment) templateMapping(fnID string) map[string]any {
	for _, r := range d.template {
		if r.Type != "AWS::Lambda::EventSourceMapping" {
			continue
		}
		if ref, _ := r.Properties["FunctionName"].(map[string]any); ref["Ref"] == fnID {
			return r.Properties
		}
	}
	return nil
}

func (d *deployment) checkQueues(t *testing.T) {
	// Every queue of the configuration has its consumer.
	var consumed, queues []string
	for _, fn := range service.Functions {
		if fn.Consumes != "" {
			consumed = append(consumed, fn.Consumes)
		}
	}
	for _, name := range service.Shared {
		if strings.HasSuffix(name, "_QUEUE") {
			queues = append(queues, name)
		}
	}
	slices.Sort(consumed)
	slices.Sort(queues)
	if !slices.Equal(consumed, queues) {
		t.Errorf("service.Functions consume %v, want each of %v once", consumed, queues)
	}

	checked := map[string]bool{}
	for _, fn := range service.Functions {
		f := d.functions[fn.Name]
		arn := aws.ToString(f.config.FunctionArn)
		var feeding []lambdatypes.EventSourceMappingConfiguration
		for _, m := range d.mappings {
			if aws.ToString(m.FunctionArn) == arn {
				feeding = append(feeding, m)
			}
		}
		if fn.Consumes == "" {
			if len(feeding) != 0 {
				t.Errorf("%s consumes no queue, but %d event source mappings invoke it", fn.Name, len(feeding))
			}
			continue
		}
		url := f.env[fn.Consumes]
		queueARN := d.queueARNs[url]
		if len(feeding) != 1 || aws.ToString(feeding[0].EventSourceArn) != queueARN {
			var from []string
			for _, m := range feeding {
				from = append(from, aws.ToString(m.EventSourceArn))
			}
			t.Errorf("%s: invoked from %v, want one event source mapping from its queue %s (%s)", fn.Name, from, fn.Consumes, queueARN)
			continue
		}
		m := feeding[0]
		checked[aws.ToString(m.UUID)] = true
		d.checkMapping(t, f, m, url)
	}
	// No mapping of another queue to a function of the stack.
	for _, m := range d.mappings {
		if !checked[aws.ToString(m.UUID)] && slices.Contains(slices.Collect(maps.Values(d.queueARNs)), aws.ToString(m.EventSourceArn)) {
			t.Errorf("event source mapping %s from %s to %s: no function consumes that queue", aws.ToString(m.UUID), aws.ToString(m.EventSourceArn), aws.ToString(m.FunctionArn))
		}
	}
}

// checkMapping checks the event source mapping m from the queue at url to f, and the queue.
func (d *deployment) checkMapping(t *testing.T, f *function, m lambdatypes.EventSourceMappingConfiguration, url string) {
	name := f.Name
	tm := d.templateMapping(f.logicalID)
	if tm == nil {
		t.Errorf("%s: no event source mapping in the template", name)
		return
	}
	fifo := strings.HasSuffix(url, ".fifo")
	batch := int(aws.ToInt32(m.BatchSize))
	window := int(aws.ToInt32(m.MaximumBatchingWindowInSeconds))
	if want, _ := number(tm["BatchSize"]); batch != want {
		t.Errorf("%s: batch size %d, the template's %v", name, batch, tm["BatchSize"])
	}
	switch {
	case batch < 1 || batch > 10000:
		t.Errorf("%s: batch size %d, want 1 to 10000", name, batch)
	case fifo && batch > 10:
		t.Errorf("%s: batch size %d from a FIFO queue, which allows 10 at most", name, batch)
	case batch > 10 && window < 1:
		t.Errorf("%s: batch size %d needs a batching window of at least 1 s (it has %d)", name, batch, window)
	}
	if !slices.Contains(m.FunctionResponseTypes, lambdatypes.FunctionResponseTypeReportBatchItemFailures) {
		t.Errorf("%s: the mapping does not take partial batch failures (%v): one bad message would send its whole batch back", name, m.FunctionResponseTypes)
	}
	if m.State != nil && *m.State != "Enabled" && *m.State != "Creating" {
		t.Errorf("%s: mapping %s", name, *m.State)
	}
	maxConcurrency := 0
	if m.ScalingConfig != nil && m.ScalingConfig.MaximumConcurrency != nil {
		maxConcurrency = int(*m.ScalingConfig.MaximumConcurrency)
	} else if sc, ok := tm["ScalingConfig"].(map[string]any); ok {
		// Where the emulator does not keep the setting, the template's.
		maxConcurrency, _ = number(sc["MaximumConcurrency"])
	}
	if maxConcurrency != 0 && (maxConcurrency < 2 || maxConcurrency > 1000) {
		t.Errorf("%s: maximum concurrency %d, want 2 to 1000", name, maxConcurrency)
	}
	// The ux workers that may run at once share the CrUX quota.
	if qpm := f.env[service.EnvCrUXQueriesPerMinute]; qpm != "" {
		n, _ := strconv.Atoi(qpm)
		if maxConcurrency == 0 || n*maxConcurrency > service.CrUXQuota {
			t.Errorf("%s: %d CrUX queries a minute each, up to %d at once (0: no limit), over the quota of %d", name, n, maxConcurrency, service.CrUXQuota)
		}
	}

	attrs, err := d.sqs.GetQueueAttributes(d.ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	if err != nil {
		t.Errorf("%s: queue: %v", name, err)
		return
	}
	// A queue whose messages must outlive a backlog keeps them as long as the service says
	// (the audit and fan-out queues: 14 days).
	for _, v := range service.QueueVars() {
		if v.Env != f.Consumes || v.Settings.Retention == 0 {
			continue
		}
		if kept, _ := strconv.Atoi(attrs.Attributes["MessageRetentionPeriod"]); time.Duration(kept)*time.Second != v.Settings.Retention {
			t.Errorf("%s: its queue keeps messages %d s, want %s (service.QueueVars)", name, kept, v.Settings.Retention)
		}
	}
	visibility, _ := strconv.Atoi(attrs.Attributes["VisibilityTimeout"])
	timeout := int(aws.ToInt32(f.config.Timeout))
	if visibility < visibilityPerTimeout*timeout {
		t.Errorf("%s: its queue's visibility timeout %d s is under %d times its timeout of %d s", name, visibility, visibilityPerTimeout, timeout)
	}
	var redrive struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     any    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &redrive); err != nil {
		t.Errorf("%s: its queue has no redrive policy (%q)", name, attrs.Attributes["RedrivePolicy"])
		return
	}
	if n, _ := number(redrive.MaxReceiveCount); n < minReceiveCount {
		t.Errorf("%s: its queue's maxReceiveCount %v: want at least %d", name, redrive.MaxReceiveCount, minReceiveCount)
	}
	if redrive.DeadLetterTargetArn == d.queueARNs[url] || !slices.Contains(slices.Collect(maps.Values(d.queueARNs)), redrive.DeadLetterTargetArn) {
		t.Errorf("%s: its queue's dead-letter queue %s is not another queue of the stack", name, redrive.DeadLetterTargetArn)
	}
}

func (d *deployment) checkTable(t *testing.T) {
	deployed, err := d.ddb.DescribeTable(d.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.only(t, "AWS::DynamoDB::Table"))})
	if err != nil {
		t.Fatal(err)
	}
	// The store's own table, created beside it: the keys and indexes the code queries.
	name := "rehearsal-store-table"
	if err := store.New(d.ddb, name).CreateTable(d.ctx); err != nil {
		t.Fatal(err)
	}
	code, err := d.ddb.DescribeTable(d.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keySchema(deployed.Table.KeySchema, deployed.Table.AttributeDefinitions), keySchema(code.Table.KeySchema, code.Table.AttributeDefinitions); got != want {
		t.Errorf("table keys %s, the store's %s", got, want)
	}
	if got, want := indexes(deployed.Table), indexes(code.Table); !slices.Equal(got, want) {
		t.Errorf("table indexes %v, the store's %v", got, want)
	}
	if b := deployed.Table.BillingModeSummary; b == nil || b.BillingMode != ddbtypes.BillingModePayPerRequest {
		t.Errorf("table billing %+v, want on demand", b)
	}
	// moto's CloudFormation does not apply a table's TimeToLiveSpecification (the emulator's
	// table reads back with TTL disabled): the deployed template's is checked.
	for id, r := range d.template {
		if r.Type != "AWS::DynamoDB::Table" {
			continue
		}
		ttl, _ := r.Properties["TimeToLiveSpecification"].(map[string]any)
		if ttl["Enabled"] != true || ttl["AttributeName"] != ttlAttribute {
			t.Errorf("table %s: TTL %v, want enabled on %q", id, ttl, ttlAttribute)
		}
	}
}

// checkRealUsers checks what real-user data needs of the deployment: the RUM bucket expires
// objects after the days the aggregator keeps the days' pointers (OPENVITALS_RUM_RETENTION_DAYS);
// the rum queue delays its messages, the rebatcher being able to read the delay; and a view
// reaches the reports within maxRUMLateSeconds: the rebatcher's batching window, then the rum
// queue's delay, then a compaction.
func (d *deployment) checkRealUsers(t *testing.T) {
	_, rumBucket := d.buckets(t)
	agg := d.functions["rum-aggregator"]
	days, err := strconv.Atoi(agg.env[service.EnvRUMRetentionDays])
	if err != nil {
		t.Fatalf("rum-aggregator: %s=%q", service.EnvRUMRetentionDays, agg.env[service.EnvRUMRetentionDays])
	}
	// moto's CloudFormation does not apply a bucket's LifecycleConfiguration (the emulator's
	// bucket has none): the deployed template's is checked.
	expires := false
	for id, r := range d.template {
		if r.Type != "AWS::S3::Bucket" || !strings.HasPrefix(id, "StorageRumBucket") {
			continue
		}
		lc, _ := r.Properties["LifecycleConfiguration"].(map[string]any)
		rules, _ := lc["Rules"].([]any)
		for _, rule := range rules {
			r, _ := rule.(map[string]any)
			n, _ := number(r["ExpirationInDays"])
			_, filtered := r["Prefix"]
			_, tagged := r["TagFilters"]
			if r["Status"] == "Enabled" && n == days && !filtered && !tagged {
				expires = true
			}
		}
		if !expires {
			t.Errorf("the RUM bucket %s has no rule expiring every object after %d days (the aggregator's %s): %v", id, days, service.EnvRUMRetentionDays, lc)
		}
	}
	if _, err := d.s3.HeadBucket(d.ctx, &s3.HeadBucketInput{Bucket: aws.String(rumBucket)}); err != nil {
		t.Errorf("the RUM bucket %s: %v", rumBucket, err)
	}

	rumURL := agg.env[service.EnvRUMQueue]
	attrs, err := d.sqs.GetQueueAttributes(d.ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(rumURL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameDelaySeconds},
	})
	if err != nil {
		t.Fatal(err)
	}
	delay, _ := strconv.Atoi(attrs.Attributes["DelaySeconds"])
	if delay < 60 {
		t.Errorf("the rum queue delays its messages %d s: each append to a website's log would be a compaction", delay)
	}
	batcher := d.functions["rum-batcher"]
	window := -1
	for _, m := range d.mappings {
		if aws.ToString(m.FunctionArn) == aws.ToString(batcher.config.FunctionArn) {
			window = int(aws.ToInt32(m.MaximumBatchingWindowInSeconds))
		}
	}
	if window < 0 || window+delay+compactionSeconds > maxRUMLateSeconds {
		t.Errorf("a view waits up to %d s in the rebatcher's window and %d s in the rum queue: over %d s with a compaction's %d s",
			window, delay, maxRUMLateSeconds, compactionSeconds)
	}
}

// keySchema renders a table's or index's keys with their types: "PK S HASH, SK S RANGE".
func keySchema(keys []ddbtypes.KeySchemaElement, attrs []ddbtypes.AttributeDefinition) string {
	types := map[string]string{}
	for _, a := range attrs {
		types[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s %s", aws.ToString(k.AttributeName), types[aws.ToString(k.AttributeName)], k.KeyType))
	}
	return strings.Join(parts, ", ")
}

// indexes renders a table's secondary indexes, sorted.
func indexes(t *ddbtypes.TableDescription) []string {
	var out []string
	for _, i := range t.GlobalSecondaryIndexes {
		out = append(out, "global "+aws.ToString(i.IndexName)+": "+keySchema(i.KeySchema, t.AttributeDefinitions))
	}
	for _, i := range t.LocalSecondaryIndexes {
		out = append(out, "local "+aws.ToString(i.IndexName)+": "+keySchema(i.KeySchema, t.AttributeDefinitions))
	}
	slices.Sort(out)
	return out
}

// placeholder is an input transformer's placeholder of an event field.
var placeholder = regexp.MustCompile(`<[A-Za-z0-9_.-]+>`)

var (
	dailyCron = regexp.MustCompile(`^cron\(0 ([0-9]|1[0-9]|2[0-3]) \* \* \? \*\)$`)
	// sweepRate is the sweep rule's schedule: every few minutes (infra's own test holds the rate
	// to a sixth of the queues' shortest deadline).
	sweepRate = regexp.MustCompile(`^rate\([1-9][0-9]* minutes?\)$`)
)

func (d *deployment) checkSchedules(t *testing.T) {
	scheduler := aws.ToString(d.functions["scheduler"].config.FunctionArn)
	var jobs []string
	for _, id := range d.physicalIDs("AWS::Events::Rule") {
		name := id[strings.LastIndex(id, "/")+1:]
		rule, err := d.events.DescribeRule(d.ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name)})
		if err != nil {
			t.Errorf("rule %s: %v", id, err)
			continue
		}
		targets, err := d.events.ListTargetsByRule(d.ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(name)})
		if err != nil || len(targets.Targets) != 1 || aws.ToString(targets.Targets[0].Arn) != scheduler {
			t.Errorf("rule %s: targets %+v (%v), want the scheduler %s", name, targets, err, scheduler)
			continue
		}
		var event struct {
			Detail struct{ Jobs []string } `json:"detail"`
		}
		// The event carries the rule's time, so CDK writes it as an input transformer whose
		// template holds placeholders (<time>) where the event's fields go.
		input := aws.ToString(targets.Targets[0].Input)
		if it := targets.Targets[0].InputTransformer; input == "" && it != nil {
			input = placeholder.ReplaceAllString(aws.ToString(it.InputTemplate), "null")
		}
		if err := json.Unmarshal([]byte(input), &event); err != nil || len(event.Detail.Jobs) == 0 {
			t.Errorf("rule %s: input %s names no job", name, input)
		}
		expr := aws.ToString(rule.ScheduleExpression)
		switch {
		case rule.State != "ENABLED":
			t.Errorf("rule %s: %s, want enabled", name, rule.State)
		case slices.Equal(event.Detail.Jobs, []string{schedule.JobSweep}):
			if !sweepRate.MatchString(expr) {
				t.Errorf("rule %s: %s: want the sweep every few minutes", name, expr)
			}
		case !dailyCron.MatchString(expr):
			t.Errorf("rule %s: %s: want daily on the hour", name, expr)
		}
		jobs = append(jobs, event.Detail.Jobs...)
	}
	slices.Sort(jobs)
	want := slices.Sorted(slices.Values(append(slices.Clone(schedule.Jobs), schedule.JobSweep)))
	if !slices.Equal(jobs, want) {
		t.Errorf("the rules run the jobs %v, want each of the scheduler's %v and the sweep once", jobs, want)
	}
}
