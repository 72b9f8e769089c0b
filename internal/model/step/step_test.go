package step

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func ptr[T any](v T) *T { return &v }

func TestParseDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want Step
	}{
		{"navigate waits for load", Input{Type: ptr("navigate"), Target: ptr("/")}, Step{Type: Navigate, Target: "/", WaitUntil: Load}},
		{"navigate keeps its event", Input{Type: ptr("navigate"), Target: ptr("https://example.com/a"), WaitUntil: ptr("domcontentloaded")},
			Step{Type: Navigate, Target: "https://example.com/a", WaitUntil: DOMContentLoaded}},
		{"click without navigation waits for nothing", Input{Type: ptr("click"), Target: ptr("#a")}, Step{Type: Click, Target: "#a"}},
		{"click with navigation waits for load", Input{Type: ptr("click"), Target: ptr("#a"), WaitForNavigation: ptr(true)},
			Step{Type: Click, Target: "#a", WaitForNavigation: true, WaitUntil: Load}},
		{"type may type nothing", Input{Type: ptr("type"), Target: ptr("#q"), Value: ptr("")}, Step{Type: TypeText, Target: "#q"}},
		{"scroll to the bottom", Input{Type: ptr("scroll")}, Step{Type: Scroll}},
		{"wait", Input{Type: ptr("wait"), Value: ptr("60000")}, Step{Type: Wait, Value: "60000"}},
	} {
		got, problems := Parse(tc.in)
		if len(problems) != 0 || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, problems, tc.want)
		}
	}
}

func TestParseProblems(t *testing.T) {
	long := strings.Repeat("a", MaxSelectorLen+1)
	for _, tc := range []struct {
		name string
		in   Input
		want []string // the fields at fault, in order
	}{
		{"missing type", Input{Target: ptr("#a")}, []string{"type"}},
		{"unknown type", Input{Type: ptr("drag"), Target: ptr("#a")}, []string{"type"}},
		{"unknown type with a value", Input{Type: ptr("drag"), Value: ptr("x")}, []string{"type", "value"}},
		{"click without target", Input{Type: ptr("click")}, []string{"target"}},
		{"selector too long", Input{Type: ptr("hover"), Target: ptr(long)}, []string{"target"}},
		{"selector with a control character", Input{Type: ptr("click"), Target: ptr("#a\x00")}, []string{"target"}},
		{"scroll selector too long", Input{Type: ptr("scroll"), Target: ptr(long)}, []string{"target"}},
		{"navigate without target", Input{Type: ptr("navigate")}, []string{"target"}},
		{"navigate javascript", Input{Type: ptr("navigate"), Target: ptr("javascript:alert(1)")}, []string{"target"}},
		{"navigate protocol-relative", Input{Type: ptr("navigate"), Target: ptr("//evil.example/")}, []string{"target"}},
		{"navigate URL too long", Input{Type: ptr("navigate"), Target: ptr("https://example.com/" + strings.Repeat("a", MaxURLLen))}, []string{"target"}},
		{"type without value", Input{Type: ptr("type"), Target: ptr("#q")}, []string{"value"}},
		{"select value too long", Input{Type: ptr("select"), Target: ptr("#s"), Value: ptr(strings.Repeat("v", MaxValueLen+1))}, []string{"value"}},
		{"wait without value", Input{Type: ptr("wait")}, []string{"value"}},
		{"wait zero", Input{Type: ptr("wait"), Value: ptr("0")}, []string{"value"}},
		{"wait too long", Input{Type: ptr("wait"), Value: ptr("60001")}, []string{"value"}},
		{"wait with target", Input{Type: ptr("wait"), Value: ptr("5"), Target: ptr("#a")}, []string{"target"}},
		{"value on click, even empty", Input{Type: ptr("click"), Target: ptr("#a"), Value: ptr("")}, []string{"value"}},
		{"unknown waitUntil, then target", Input{Type: ptr("click"), WaitUntil: ptr("idle")}, []string{"waitUntil", "target"}},
	} {
		_, problems := Parse(tc.in)
		var fields []string
		for _, p := range problems {
			fields = append(fields, p.Field)
			if p.Message == "" {
				t.Errorf("%s: %s without a message", tc.name, p.Field)
			}
		}
		if !reflect.DeepEqual(fields, tc.want) {
			t.Errorf("%s: problems %v, want fields %v", tc.name, problems, tc.want)
		}
	}
	_, problems := Parse(Input{Type: ptr("drag")})
	if want := "must be one of navigate, click, type, select, hover, scroll, waitForSelector, wait"; problems[0].Message != want {
		t.Errorf("message %q, want %q", problems[0].Message, want)
	}
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"/", "/a/b?c=d&e", "/caf%C3%A9", "/é"} {
		if msg := CheckPath(ok); msg != "" {
			t.Errorf("CheckPath(%q) = %q, want ok", ok, msg)
		}
	}
	for _, bad := range []string{"", "a", "//host/a", `/\host`, "/a#b", "/a b", "/a\x7f", "/\xff", "/" + strings.Repeat("a", MaxURLLen)} {
		if CheckPath(bad) == "" {
			t.Errorf("CheckPath(%q) accepted", bad)
		}
	}
}

func TestEventAndPause(t *testing.T) {
	if (Step{}).Event() != Load || (Step{WaitUntil: NetworkIdle2}).Event() != NetworkIdle2 {
		t.Error("Event: load by default, else the step's own")
	}
	if d, err := (Step{Type: Wait, Value: " 250 "}).Pause(); err != nil || d != 250*time.Millisecond {
		t.Errorf("Pause = %v, %v", d, err)
	}
	for _, bad := range []string{"", "-1", "soon", "1.5"} {
		if _, err := (Step{Type: Wait, Value: bad}).Pause(); err == nil {
			t.Errorf("Pause of %q: want an error", bad)
		}
	}
}

// TestStoredShape pins the attributes a step has in a stored test item: the field names, the
// types as strings, and empty strings left out.
func TestStoredShape(t *testing.T) {
	item, err := attributevalue.Marshal(Step{Type: Click, Target: "#buy", WaitForNavigation: true, WaitUntil: NetworkIdle2})
	if err != nil {
		t.Fatal(err)
	}
	want := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"Type":              &types.AttributeValueMemberS{Value: "click"},
		"Target":            &types.AttributeValueMemberS{Value: "#buy"},
		"WaitForNavigation": &types.AttributeValueMemberBOOL{Value: true},
		"WaitUntil":         &types.AttributeValueMemberS{Value: "networkidle2"},
	}}
	if !reflect.DeepEqual(item, want) {
		t.Errorf("stored %#v, want %#v", item, want)
	}
	item, _ = attributevalue.Marshal(Step{Type: Scroll})
	if m := item.(*types.AttributeValueMemberM).Value; len(m) != 2 || m["Type"] == nil || m["WaitForNavigation"] == nil {
		t.Errorf("a scroll step stored as %v: Type and WaitForNavigation only", m)
	}
	var back Step
	if err := attributevalue.Unmarshal(want, &back); err != nil || back != (Step{Type: Click, Target: "#buy", WaitForNavigation: true, WaitUntil: NetworkIdle2}) {
		t.Errorf("read back %+v, %v", back, err)
	}
}
