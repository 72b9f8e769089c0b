package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// The stored item format is a promise to every deployment's table: code may move and types may be
// renamed, but what an earlier version wrote must read back the same, and what this version
// writes must have the same attributes. testdata/stored-items.json holds the items an earlier
// version wrote for the entities below, and stored-values.json what it read back from them.
// OPENVITALS_RECORD_FORMAT=1 writes both anew, which only a deliberate format change may do.
const (
	storedItemsFile  = "testdata/stored-items.json"
	storedValuesFile = "testdata/stored-values.json"
)

// formatTime is a fixed instant, so that the entities below are the same at every run.
var formatTime = time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)

// writeFormatEntities stores one of each kind of entity through the store's own methods and
// returns the website.
func writeFormatEntities(t *testing.T, st *store.Store) model.Website {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.EnsureAccount(ctx, "acme"))
	w := model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example", Created: formatTime}
	must(st.CreateWebsite(ctx, &w))
	must(st.PutAPIKey(ctx, model.APIKey{Hash: "hash-" + w.ID, Account: "acme", Role: model.RoleViewer, Name: "ci", Created: formatTime}))
	pages := []model.Page{{URL: "/", Alias: "Home", Created: formatTime}, {URL: "/shop?x=1", Alias: "Shop", Created: formatTime}}
	must(st.CreatePages(ctx, w, pages))
	b := model.Budget{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all", Created: formatTime}
	must(st.CreateBudget(ctx, w, &b))
	must(st.PutLabResult(ctx, w, pages[0], model.LabResult{
		Page: pages[0].ID, Device: "desktop", Day: "20261102",
		Metrics: map[string]float64{"lcp": 1234.5, "cls": 0.01, "performance_score": 97},
		Samples: map[string][]float64{"lcp": {1200, 1234.5, 1300}},
		Opportunities: []model.Opportunity{{ID: "render-blocking-insight", Title: "Render-blocking", Category: "insights", DisplayValue: "120 ms",
			SavingsMs: 120, SavingsBytes: 2048, MetricSavings: map[string]float64{"FCP": 120, "LCP": 0}}},
		LighthouseVersion: "13.5.0", ReportKey: "reports/x.json.gz", Runs: 3, Audited: formatTime,
		ProfileID: "prof1", ProfileName: "Signed in",
	}))
	must(st.CreateProfile(ctx, w, &model.Profile{ID: "prof1", Name: "Signed in", Default: true,
		Pages: []model.ProfilePage{{Page: pages[0].ID, Device: "mobile"}}, HeaderNames: []string{"X-Test"}, CookieNames: []string{"session"},
		BasicAuthUser: "ci", Login: []step.Step{{Type: "navigate", Target: "/login"}, {Type: "type", Target: "#password"}},
		Network: "mobileSlow4G", RTTMs: 200, ThroughputK: 1000, CPUSlowdown: 2, Width: 800, Height: 600, UserAgent: "Bot/1",
		Secrets: []byte{1, 2, 3}}))
	finished := formatTime.Add(time.Minute)
	must(st.CreateExperiment(ctx, w, &model.Experiment{ID: "exp1", Page: pages[0].ID, Device: "mobile", Status: model.RunCompleted,
		Changes: model.ExperimentChanges{Block: []string{"*://cdn.example.net/*"}, Delay: []model.Delay{{Pattern: "*.js", Ms: 500}},
			Script: "console.log(1)", Style: "h1{}", Replace: []model.Replacement{{Find: "a", With: "b"}}},
		Control:  &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 400}, Samples: map[string][]float64{"tbt": {390, 400, 410}}},
		Measured: &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 20}}, ProfileID: "prof1", Finished: &finished}))
	must(st.PutLabError(ctx, w, pages[1], "mobile", model.LabError{Message: "ERRORED_DOCUMENT_REQUEST", At: formatTime, Attempts: 2}))
	must(st.PutUXResult(ctx, w, pages[0], model.UXResult{Page: pages[0].ID, Device: "mobile", Day: "20261102",
		Vitals: map[string]model.Vital{"lcp": {P75: 2547, Good: 0.7, NeedsImprovement: 0.2, Poor: 0.1}}, Collected: formatTime}))
	// The row's summary and opportunities, after the last result of the page (each marks them stale).
	row, err := st.PageRow(ctx, w, pages[0])
	must(err)
	must(st.PutPageSummary(ctx, w, pages[0], row.Version, []byte{1, 2, 3}, []byte{1, 4, 5}))
	test := model.Test{Alias: "Checkout", Device: "desktop", Created: formatTime, Steps: []step.Step{
		{Type: "navigate", Target: "https://example.com/"}, {Type: "click", Target: "#buy", WaitForNavigation: true}}}
	must(st.CreateTest(ctx, w, &test))
	_, err = st.CreateRun(ctx, w, test)
	must(err)
	key := store.BudgetState(b.ID)
	from, err := st.WatchedState(ctx, w, key)
	must(err)
	_, err = st.ChangeState(ctx, w, from, "exceeded", "20261102", &model.Event{Type: "budget.status_changed", Budget: b.ID, Occurred: formatTime, Summary: "LCP over budget"})
	must(err)
	_, err = st.PutRegression(ctx, w, model.Regression{ID: model.RegressionID(w, "lab#lcp", "20261101"), Kind: model.KindRegression, Source: "lab",
		Page: pages[0].ID, Device: "desktop", Metric: "lcp", LastGood: "20261031", FirstBad: "20261101",
		Before: model.Level{Median: 1000, Spread: 20}, After: model.Level{Median: 1500, Spread: 30}, Delta: 500, Percent: 50, P: 0.01,
		Status: model.RegressionOpen, Detected: formatTime,
		Cause:    []model.CauseItem{{Kind: "resource", Title: "+312 KB script", URL: "https://cdn.example.com/a.js", Type: "Script", Party: "third", After: 312, Unit: "KB", Impact: 0.8}},
		Incident: model.IncidentID(w, "page:"+pages[0].ID, model.KindRegression, "20261101"),
		Days:     []model.DayValue{{Day: "20261031", Value: 1000}, {Day: "20261101", Value: 1500}}})
	must(err)
	must(st.PutAnnotation(ctx, w, model.Annotation{ID: "a1", At: formatTime, Text: "Release 1.2", Pages: []string{pages[0].ID}, Created: formatTime}))
	must(st.PutRegressionThresholds(ctx, w, map[string]model.RegressionThreshold{"lcp": {Relative: 0.1, Absolute: 100}}))
	c := model.Channel{Name: "ops", Kind: "webhook", Events: []string{"budget.status_changed"}, Target: []byte("sealed-url"), Shown: "https://hooks.example.com/…", Secret: []byte("sealed-secret"), Created: formatTime}
	must(st.CreateChannel(ctx, w, &c))
	must(st.RecordDelivery(ctx, w, c.ID, model.Delivery{Event: "e1", EventType: "budget.status_changed", At: formatTime, Attempt: 1, Status: 200, LatencyMS: 12}, true))
	must(st.RecordDelivery(ctx, w, c.ID, model.Delivery{Event: "e2", EventType: "budget.status_changed", At: formatTime.Add(time.Second), Attempt: 1, Status: 500, LatencyMS: 15, Error: "HTTP 500"}, false))
	series := model.TestSeries{ID: "ts_s1", Description: "deploy 42", Initiator: "ci", Created: formatTime, Count: 1}
	must(st.CreateTestSeries(ctx, w, series, []model.SeriesTest{{ID: model.SeriesTestID("ts_s1", 0), Series: "ts_s1", Page: pages[0].ID, URL: "/", Alias: "Home", Device: "desktop", Status: model.RunQueued}}))
	return w
}

// formatValues reads back every entity writeFormatEntities stored, through the store's methods.
func formatValues(t *testing.T, st *store.Store, account, website string) map[string]any {
	t.Helper()
	ctx := context.Background()
	w, err := st.Website(ctx, account, website)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"website": w}
	add := func(name string, value any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v[name] = value
	}
	k, err := st.APIKeyByHash(ctx, "hash-"+website)
	add("apikey", k, err)
	pages, err := st.Pages(ctx, w)
	add("pages", pages, err)
	budgets, err := st.Budgets(ctx, w)
	add("budgets", budgets, err)
	for _, p := range pages {
		lab, err := st.LabResults(ctx, w, p.ID, "desktop", "20261101", "20261103")
		add("lab "+p.Alias, lab, err)
		ux, err := st.UXResults(ctx, w, p.ID, "mobile", "20261101", "20261103")
		add("ux "+p.Alias, ux, err)
		le, err := st.LastLabError(ctx, w, p.ID, "mobile")
		if model.IsNotFound(err) {
			err = nil
		}
		add("lab error "+p.Alias, le, err)
	}
	tests, err := st.Tests(ctx, w)
	add("tests", tests, err)
	for _, tt := range tests {
		runs, err := st.Runs(ctx, w, tt.ID, time.Time{}, 10)
		for i := range runs {
			runs[i].Created = time.Time{} // the store stamps a run's creation itself
		}
		add("runs "+tt.Alias, runs, err)
	}
	evs, _, err := st.Events(ctx, w, model.EventFilter{}, "", 0)
	add("events", evs, err)
	regs, _, err := st.Regressions(ctx, w, model.RegressionFilter{}, "", 0)
	add("regressions", regs, err)
	anns, _, err := st.Annotations(ctx, w, formatTime.Add(-time.Hour), formatTime.Add(time.Hour), "", 0)
	add("annotations", anns, err)
	thr, err := st.RegressionThresholds(ctx, w)
	add("thresholds", thr, err)
	chans, err := st.Channels(ctx, w)
	add("channels", chans, err)
	for _, c := range chans {
		ds, _, _, err := st.Deliveries(ctx, w, c.ID, "", 10)
		add("deliveries "+c.Name, ds, err)
	}
	series, err := st.TestSeries(ctx, w, "ts_s1")
	add("series", series, err)
	st1, err := st.SeriesTests(ctx, w, "ts_s1")
	add("series tests", st1, err)
	return v
}

// dumpTable reads every item of the table, sorted by key, as DynamoDB's JSON.
func dumpTable(t *testing.T, db *dynamodb.Client, table string) []map[string]any {
	t.Helper()
	var items []map[string]ddbtypes.AttributeValue
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, out.Items...)
	}
	var dump []map[string]any
	for _, it := range items {
		m := map[string]any{}
		for k, av := range it {
			m[k] = avJSON(av)
		}
		dump = append(dump, m)
	}
	sort.Slice(dump, func(i, j int) bool {
		return fmt.Sprint(dump[i]["PK"], dump[i]["SK"]) < fmt.Sprint(dump[j]["PK"], dump[j]["SK"])
	})
	return dump
}

// avJSON writes an attribute value as DynamoDB's JSON does ({"S": ...}, {"M": {...}}...).
func avJSON(av ddbtypes.AttributeValue) map[string]any {
	switch v := av.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *ddbtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *ddbtypes.AttributeValueMemberB:
		return map[string]any{"B": v.Value}
	case *ddbtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *ddbtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *ddbtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *ddbtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *ddbtypes.AttributeValueMemberL:
		l := []any{}
		for _, e := range v.Value {
			l = append(l, avJSON(e))
		}
		return map[string]any{"L": l}
	case *ddbtypes.AttributeValueMemberM:
		m := map[string]any{}
		for k, e := range v.Value {
			m[k] = avJSON(e)
		}
		return map[string]any{"M": m}
	}
	panic(fmt.Sprintf("attribute value %T", av))
}

// itemShape is an item's attributes and their kinds, recursively, with the values left out
// (IDs and stamps differ from run to run; the names and kinds are the format).
func itemShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "S", "N", "B", "BOOL", "NULL", "SS", "NS":
				if len(x) == 1 {
					return k
				}
			}
			out[k] = itemShape(e)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			out = append(out, itemShape(e))
		}
		return out
	}
	return v
}

// shapes are the distinct item shapes of a dump, by their Type attribute.
func shapes(dump []map[string]any) map[string][]string {
	out := map[string][]string{}
	for _, it := range dump {
		typ := fmt.Sprint(it["Type"])
		b, _ := json.Marshal(itemShape(it))
		if !contains(out[typ], string(b)) {
			out[typ] = append(out[typ], string(b))
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// jsonRoundTrip gives a value as JSON would read it back, so values compare with the file.
// Structs are written by their Go field names, whatever their JSON tags say: the file was
// written before model types had tags, and the stored values, not the API's names, are compared.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(byFieldName(reflect.ValueOf(v)))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStoredFormat(t *testing.T) {
	ctx := context.Background()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	w := writeFormatEntities(t, st)
	written := dumpTable(t, clients.DynamoDB, st.Table())

	if os.Getenv("OPENVITALS_RECORD_FORMAT") == "1" {
		values := formatValues(t, st, w.Account, w.ID)
		values["_website"] = w.ID
		for file, v := range map[string]any{storedItemsFile: written, storedValuesFile: values} {
			b, err := json.MarshalIndent(v, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("recorded %d items", len(written))
		return
	}

	var earlier []map[string]any
	var earlierValues map[string]any
	for file, into := range map[string]any{storedItemsFile: &earlier, storedValuesFile: &earlierValues} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}

	// What this version writes has every attribute the earlier version wrote, of the same kind
	// (it may add attributes and kinds of items, never drop or retype one).
	now := shapes(written)
	for typ, before := range shapes(earlier) {
		for _, shape := range before {
			if !slices.ContainsFunc(now[typ], func(n string) bool { return covers(decodeJSON(t, shape), decodeJSON(t, n), false) }) {
				t.Errorf("the stored format changed: no %s item is written with the attributes %s any more (now %v)", typ, shape, now[typ])
			}
		}
	}

	// What the earlier version wrote reads back the same: its items, put as they were into a
	// fresh table, read through this version's methods.
	old := awstest.Store(t, clients)
	for _, it := range earlier {
		b, _ := json.Marshal(it)
		item, err := unmarshalDynamoJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := clients.DynamoDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(old.Table()), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	website := fmt.Sprint(earlierValues["_website"])
	delete(earlierValues, "_website")
	// Fields added since read back as their zero values.
	got := jsonRoundTrip(t, formatValues(t, old, "acme", website))
	if !covers(jsonRoundTrip(t, earlierValues), got, true) {
		gb, _ := json.MarshalIndent(got, "", " ")
		wb, _ := json.MarshalIndent(earlierValues, "", " ")
		t.Errorf("stored items read back differently:\nnow %s\nbefore %s", gb, wb)
	}
}

// covers tells whether now holds everything before holds, equal; beyond it, in objects, members
// of any value, or with onlyZero members with zero values only (JSON's false, 0, "", null, [], {}
// or a zero time).
func covers(before, now any, onlyZero bool) bool {
	switch b := before.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range b {
			if nv, ok := n[k]; !ok || !covers(v, nv, onlyZero) {
				return false
			}
		}
		for k, nv := range n {
			if _, ok := b[k]; !ok && onlyZero && !zeroJSON(nv) {
				return false
			}
		}
		return true
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) != len(b) {
			return false
		}
		for i := range b {
			if !covers(b[i], n[i], onlyZero) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(before, now)
}

func zeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == "" || x == "0001-01-01T00:00:00Z"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// unmarshalDynamoJSON reads one item in DynamoDB's JSON (as avJSON writes it).
func unmarshalDynamoJSON(b []byte) (map[string]ddbtypes.AttributeValue, error) {
	var raw map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := map[string]ddbtypes.AttributeValue{}
	for k, v := range raw {
		av, err := avFromJSON(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func avFromJSON(v map[string]json.RawMessage) (ddbtypes.AttributeValue, error) {
	for kind, raw := range v {
		var err error
		switch kind {
		case "S":
			var s string
			err = json.Unmarshal(raw, &s)
			return &ddbtypes.AttributeValueMemberS{Value: s}, err
		case "N":
			var s string
			err = json.Unmarshal(raw, &s)
			return &ddbtypes.AttributeValueMemberN{Value: s}, err
		case "B":
			var b []byte
			err = json.Unmarshal(raw, &b)
			return &ddbtypes.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			var b bool
			err = json.Unmarshal(raw, &b)
			return &ddbtypes.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &ddbtypes.AttributeValueMemberNULL{Value: true}, nil
		case "SS":
			var l []string
			err = json.Unmarshal(raw, &l)
			return &ddbtypes.AttributeValueMemberSS{Value: l}, err
		case "NS":
			var l []string
			err = json.Unmarshal(raw, &l)
			return &ddbtypes.AttributeValueMemberNS{Value: l}, err
		case "L":
			var l []map[string]json.RawMessage
			if err := json.Unmarshal(raw, &l); err != nil {
				return nil, err
			}
			out := &ddbtypes.AttributeValueMemberL{}
			for _, e := range l {
				av, err := avFromJSON(e)
				if err != nil {
					return nil, err
				}
				out.Value = append(out.Value, av)
			}
			return out, nil
		case "M":
			var m map[string]map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, err
			}
			out := &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{}}
			for k, e := range m {
				av, err := avFromJSON(e)
				if err != nil {
					return nil, err
				}
				out.Value[k] = av
			}
			return out, nil
		}
		return nil, fmt.Errorf("unknown attribute kind %q", kind)
	}
	return nil, fmt.Errorf("empty attribute value")
}

// byFieldName is v with every struct as a map of its exported fields by Go name (embedded
// structs' fields flattened, as JSON does), and values that marshal themselves (times) kept.
func byFieldName(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(reflect.TypeFor[json.Marshaler]()) {
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			return nil
		}
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return byFieldName(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		addFields(out, v)
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = byFieldName(v.MapIndex(k))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface()
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = byFieldName(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

func addFields(out map[string]any, v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && !f.Type.Implements(reflect.TypeFor[json.Marshaler]()) {
			addFields(out, v.Field(i))
			continue
		}
		if f.IsExported() {
			out[f.Name] = byFieldName(v.Field(i))
		}
	}
}

// TestStepsReadAsList: a multistep test stored without its steps (as early items were) reads
// back with an empty list of steps, from Test and from Tests, as the API has always shown it.
func TestStepsReadAsList(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	test := model.Test{Alias: "checkout", Device: "desktop"}
	if err := st.CreateTest(ctx, w, &test); err != nil {
		t.Fatal(err)
	}
	table, pk, sk := awstest.TableOf(t, clients, st), awstest.WebsitePK(w.Account, w.ID), "TEST#"+test.ID
	if _, stored := table.Get(pk, sk)["Steps"]; !stored {
		t.Fatalf("the test was stored without Steps: %v", table.Get(pk, sk))
	}
	table.Remove(pk, sk, "Steps")

	got, err := st.Test(ctx, w, test.ID)
	if err != nil || got.Steps == nil {
		t.Fatalf("Test = %+v, %v; want an empty list of steps", got, err)
	}
	all, err := st.Tests(ctx, w)
	if err != nil || len(all) != 1 || all[0].Steps == nil {
		t.Fatalf("Tests = %+v, %v; want one test with an empty list of steps", all, err)
	}
	if _, err := st.Test(ctx, w, "missing"); !model.IsNotFound(err) {
		t.Fatalf("a missing test: %v, want not found", err)
	}
}
