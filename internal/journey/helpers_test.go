package journey

import (
	"net/url"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model/step"
)

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:        "30 s",
		3 * time.Minute:         "3 min",
		90 * time.Second:        "90 s",
		500 * time.Millisecond:  "500 ms",
		1500 * time.Millisecond: "1.5 s",
	} {
		if got := human(d); got != want {
			t.Errorf("human(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		st   step.Step
		want string
	}{
		{step.Step{Type: "click", Target: "#buy"}, "click #buy"},
		{step.Step{Type: "navigate", Target: "/checkout"}, "navigate /checkout"},
		{step.Step{Type: "wait", Value: "500"}, "wait 500 ms"},
		{step.Step{Type: "scroll"}, "scroll"},
	} {
		if got := describe(c.st); got != c.want {
			t.Errorf("describe(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("https://example.com/shop/")
	r := &runner{base: base}
	for target, want := range map[string]string{
		"/checkout?step=2":        "https://example.com/checkout?step=2",
		"http://other.example/a":  "http://other.example/a",
		"https://example.com/b#c": "https://example.com/b#c",
	} {
		u, err := r.resolve(target)
		if err != nil || u.String() != want {
			t.Errorf("resolve(%q) = %v, %v; want %s", target, u, err, want)
		}
	}
	for _, target := range []string{"//evil.example/x", "javascript:alert(1)", "file:///etc/passwd", "checkout", "ftp://example.com/"} {
		if u, err := r.resolve(target); err == nil {
			t.Errorf("resolve(%q) = %v, want an error", target, u)
		}
	}
	if _, err := (&runner{}).resolve("/a"); err == nil {
		t.Error("resolve of a path without a base URL: want an error")
	}
}

func TestKeyFor(t *testing.T) {
	for _, c := range []rune{'a', 'Z', '7', ' ', '"', '\n'} {
		if _, ok := keyFor(c); !ok {
			t.Errorf("keyFor(%q): want a key", c)
		}
	}
	// rod files named keys under U+0100 and up: Backspace is U+0108.
	for _, c := range []rune{'ë', 'Ĉ', '–', '日'} {
		if k, ok := keyFor(c); ok {
			t.Errorf("keyFor(%q) = %v, want none", c, k)
		}
	}
}

func TestLifecycleEvent(t *testing.T) {
	for in, want := range map[step.WaitUntil]string{"load": "load", "domcontentloaded": "DOMContentLoaded", "networkidle0": "networkIdle", "networkidle2": "networkAlmostIdle"} {
		if got, ok := lifecycleEvent(in); !ok || got != want {
			t.Errorf("lifecycleEvent(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := lifecycleEvent("networkidle"); ok {
		t.Error(`lifecycleEvent("networkidle"): want unknown`)
	}
	// The engine waits for every event a step may name.
	for _, w := range step.WaitUntils {
		if _, ok := lifecycleEvent(w); !ok {
			t.Errorf("lifecycleEvent(%q): unknown, though a step may name it", w)
		}
	}
}

func TestRecorderSums(t *testing.T) {
	r := newRecorder("main", "l0")
	r.report(`{"k":"event","d":[24,240,224]}`)
	r.report(`{"k":"event","d":[56]}`)
	r.report(`{"k":"longtask","d":[214,51,40]}`)
	r.report(`{"k":"shift","d":[0.05,0.0301]}`)
	r.report(`not json`)
	m := r.metrics()
	if m.inp != 240 || m.tbt != 165 || m.cls < 0.0800 || m.cls > 0.0802 {
		t.Errorf("inp %v, tbt %v, cls %v; want 240, 165, 0.0801", m.inp, m.tbt, m.cls)
	}
}

// Reports of soft navigations, in the order a page may send them: the paint before the
// navigation's entry, a paint of another interaction on the route, entries of the route left.
func TestRecorderSoftNavigations(t *testing.T) {
	r := newRecorder("main", "l0")
	r.setStep(2)
	r.report(`{"k":"input","o":"d1","t":100}`)
	r.setStep(3)
	r.report(`{"k":"event","d":[40],"o":"d1","n":[1],"e":["#to-b"]}`)
	r.report(`{"k":"icp","o":"d1","n":2,"i":9,"v":30,"e":"#b"}`)
	r.report(`{"k":"soft","o":"d1","n":2,"i":9,"u":"https://example.com/b","t":100.4}`)
	r.report(`{"k":"icp","o":"d1","n":2,"i":9,"v":45,"e":"#b-big"}`)
	r.report(`{"k":"icp","o":"d1","n":2,"i":12,"v":200,"e":"#later"}`)
	r.report(`{"k":"event","d":[120,80],"o":"d1","n":[2,2],"e":["#work","#other"]}`)
	// Two windows: 0.1+0.05 within a second, then 0.12 alone two seconds on.
	r.report(`{"k":"shift","d":[0.1,0.05,0.12],"o":"d1","n":[2,2,2],"t":[500,900,2900]}`)
	// The same navigationId in another document is another route.
	r.report(`{"k":"event","d":[300],"o":"d2","n":[2],"e":["#elsewhere"]}`)
	got := r.softNavigations()
	if len(got) != 1 {
		t.Fatalf("%d soft navigations, want 1", len(got))
	}
	sn := got[0]
	if sn.Step != 2 || sn.URL != "https://example.com/b" {
		t.Errorf("step %d %s, want step 2 (its input's) https://example.com/b", sn.Step, sn.URL)
	}
	if sn.LCP == nil || *sn.LCP != 45 || sn.LCPElement != "#b-big" {
		t.Errorf("LCP %v %q, want 45 #b-big (its own interaction's largest paint)", sn.LCP, sn.LCPElement)
	}
	if sn.INP == nil || *sn.INP != 120 || sn.INPTarget != "#work" {
		t.Errorf("INP %v %q, want 120 #work", sn.INP, sn.INPTarget)
	}
	if sn.CLS < 0.1499 || sn.CLS > 0.1501 {
		t.Errorf("CLS %v, want 0.15 (the larger window)", sn.CLS)
	}
	if m := r.metrics(); m.inp != 300 || m.cls < 0.2699 || m.cls > 0.2701 {
		t.Errorf("run: INP %v CLS %v, want 300 and 0.27: the run's totals count every route", m.inp, m.cls)
	}
}
