// Package step is the vocabulary of multistep tests: the Step a test is made of, the step types
// and waitUntil events, their limits, defaults and validation. The API checks steps with it,
// the store keeps them and the journey engine plays them; it imports no other package of
// openvitals, so that all of them can import it.
package step

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Type is what a step does.
type Type string

// The step types.
const (
	Navigate        Type = "navigate"        // open Target: an http(s) URL or a path on the website
	Click           Type = "click"           // click the element Target selects
	TypeText        Type = "type"            // type Value into the element Target selects
	Select          Type = "select"          // choose the option Value of the <select> Target selects
	Hover           Type = "hover"           // move the mouse over the element Target selects
	Scroll          Type = "scroll"          // scroll the element Target selects into view, or to the bottom without one
	WaitForSelector Type = "waitForSelector" // wait until an element matches Target
	Wait            Type = "wait"            // pause for Value milliseconds
)

// Types are the step types, in the order messages list them.
var Types = []Type{Navigate, Click, TypeText, Select, Hover, Scroll, WaitForSelector, Wait}

// WaitUntil is the point of a page load a navigation waits for, named as puppeteer names it.
type WaitUntil string

// The waitUntil events.
const (
	Load             WaitUntil = "load"
	DOMContentLoaded WaitUntil = "domcontentloaded"
	NetworkIdle0     WaitUntil = "networkidle0" // no network connection for 500 ms
	NetworkIdle2     WaitUntil = "networkidle2" // at most 2 network connections for 500 ms
)

// WaitUntils are the waitUntil events, in the order messages list them.
var WaitUntils = []WaitUntil{Load, DOMContentLoaded, NetworkIdle0, NetworkIdle2}

// DefaultWaitUntil is what a navigation waits for when its step names nothing.
const DefaultWaitUntil = Load

// Limits of a test's steps, so that no test can bloat its item or hold a browser for long.
const (
	MaxSteps       = 50    // steps in one test
	MaxSelectorLen = 1000  // bytes of a CSS selector
	MaxValueLen    = 2000  // bytes of a type or select step's value
	MaxWaitMillis  = 60000 // milliseconds of a wait step
	MaxURLLen      = 2048  // bytes of a navigate step's URL or path
)

// Step is one action of a multistep test. The field names are the attribute names of the
// stored test item: renaming one changes what DynamoDB holds. The API shows it as it is (its
// JSON names).
type Step struct {
	Type              Type      `json:"type"`
	Target            string    `json:"target,omitempty" dynamodbav:",omitempty"`
	Value             string    `json:"value,omitempty" dynamodbav:",omitempty"`
	WaitForNavigation bool      `json:"waitForNavigation"`
	WaitUntil         WaitUntil `json:"waitUntil,omitempty" dynamodbav:",omitempty"`
}

// Event is what the step's navigation waits for: its WaitUntil, DefaultWaitUntil when unset.
func (s Step) Event() WaitUntil {
	if s.WaitUntil == "" {
		return DefaultWaitUntil
	}
	return s.WaitUntil
}

// Pause is how long a wait step pauses: its Value, in milliseconds.
func (s Step) Pause() (time.Duration, error) {
	ms, err := strconv.Atoi(strings.TrimSpace(s.Value))
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("%q is not a number of milliseconds", s.Value)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Input is a step as a client sends it: a nil field was omitted, which differs from empty
// (a type step may type "", a click step takes no value at all).
type Input struct {
	Type              *string
	Target            *string
	Value             *string
	WaitForNavigation *bool
	WaitUntil         *string
}

// Problem is what is wrong with one field of a step.
type Problem struct {
	Field   string // type, target, value or waitUntil
	Message string
}

// Parse checks a step as sent and returns it with its defaults: waitUntil is load for a
// navigate step and for a step that waits for navigation. Problems name every bad field, in
// the order type, waitUntil, target, value; the step is only meant to be kept without any.
func Parse(in Input) (Step, []Problem) {
	var st Step
	var problems []Problem
	add := func(field, format string, args ...any) {
		problems = append(problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if in.Type == nil {
		add("type", "is required")
	} else if st.Type = Type(*in.Type); !slices.Contains(Types, st.Type) {
		add("type", "must be one of %s", join(Types))
	}
	if in.Target != nil {
		st.Target = *in.Target
	}
	if in.Value != nil {
		st.Value = *in.Value
	}
	if in.WaitForNavigation != nil {
		st.WaitForNavigation = *in.WaitForNavigation
	}
	if in.WaitUntil != nil {
		st.WaitUntil = WaitUntil(*in.WaitUntil)
		if !slices.Contains(WaitUntils, st.WaitUntil) {
			add("waitUntil", "must be one of %s", join(WaitUntils))
		}
	} else if st.WaitForNavigation || st.Type == Navigate {
		st.WaitUntil = DefaultWaitUntil
	}

	switch st.Type {
	case Navigate:
		if msg := checkNavigateTarget(st.Target); msg != "" {
			add("target", "%s", msg)
		}
	case Click, TypeText, Select, Hover, WaitForSelector:
		if msg := checkSelector(st.Target, true); msg != "" {
			add("target", "%s", msg)
		}
	case Scroll:
		if msg := checkSelector(st.Target, false); msg != "" {
			add("target", "%s", msg)
		}
	case Wait:
		if st.Target != "" {
			add("target", "does not apply to a wait step")
		}
	}

	switch st.Type {
	case TypeText, Select:
		if in.Value == nil {
			add("value", "is required for a %s step", st.Type)
		} else if len(st.Value) > MaxValueLen {
			add("value", "must be at most %d bytes", MaxValueLen)
		}
	case Wait:
		ms, err := strconv.Atoi(st.Value)
		if in.Value == nil {
			add("value", "is required for a wait step: the milliseconds to wait")
		} else if err != nil || ms < 1 || ms > MaxWaitMillis {
			add("value", "must be a whole number of milliseconds from 1 to %d", MaxWaitMillis)
		}
	default:
		if in.Value != nil && st.Type != "" {
			add("value", "does not apply to a %s step", st.Type)
		}
	}
	return st, problems
}

// CheckPath checks a path on a website's domain, with an optional query: it starts with a
// single "/" and holds no fragment, white space or control characters. It returns what is
// wrong, or "". A navigate step's path and a monitored page's url follow this one rule.
func CheckPath(s string) string {
	switch {
	case s == "":
		return "is required"
	case len(s) > MaxURLLen:
		return fmt.Sprintf("must be at most %d bytes", MaxURLLen)
	case !strings.HasPrefix(s, "/"):
		return "must be a path relative to the website's domain, starting with /"
	case strings.HasPrefix(s, "//") || strings.HasPrefix(s, `/\`):
		return "must be a path on the website's own domain, not start with // or /\\"
	case strings.Contains(s, "#"):
		return "must not contain a fragment (#)"
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "must not contain white space or control characters (percent-encode them)"
	case strings.ContainsRune(s, utf8.RuneError):
		return "must be valid UTF-8"
	}
	u, err := url.ParseRequestURI(s)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "is not a valid path"
	}
	return ""
}

// checkNavigateTarget accepts an absolute http(s) URL or a path on the website's domain.
func checkNavigateTarget(s string) string {
	switch {
	case s == "":
		return "is required: the URL or path to open"
	case strings.HasPrefix(s, "/"):
		return CheckPath(s)
	case len(s) > MaxURLLen:
		return fmt.Sprintf("must be at most %d bytes", MaxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "must be an http(s) URL or a path starting with /"
	}
	return ""
}

func checkSelector(s string, required bool) string {
	switch {
	case s == "" && required:
		return "is required: the CSS selector of the element"
	case len(s) > MaxSelectorLen:
		return fmt.Sprintf("must be at most %d bytes", MaxSelectorLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "must not contain control characters"
	}
	return ""
}

// join lists values for a message: "load, domcontentloaded, ...".
func join[T ~string](list []T) string {
	s := make([]string, len(list))
	for i, v := range list {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
