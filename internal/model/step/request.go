package step

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// Request is a step as a client sends it in JSON. It is lenient where forms are: value may be
// a string or a number (a wait step's milliseconds), waitForNavigation a boolean or "on",
// "off", "true", "false".
type Request struct {
	Type              *string `json:"type"`
	Target            *string `json:"target"`
	Value             *Text   `json:"value"`
	WaitForNavigation *Flag   `json:"waitForNavigation"`
	WaitUntil         *string `json:"waitUntil"`
}

// MaxNumber is the largest number a step's value takes (as its digits).
const MaxNumber = 1e15

// Parse checks the step as sent, as the package's Parse does; a value sent as a number that
// is not a whole number from 0 to MaxNumber is its value's only problem, named first.
func (r Request) Parse() (Step, []Problem) {
	in := Input{Type: r.Type, Target: r.Target, WaitUntil: r.WaitUntil}
	if r.Value != nil {
		in.Value = &r.Value.text
	}
	if r.WaitForNavigation != nil {
		b := bool(*r.WaitForNavigation)
		in.WaitForNavigation = &b
	}
	st, problems := Parse(in)
	if r.Value != nil && r.Value.outOfRange {
		problems = slices.DeleteFunc(problems, func(p Problem) bool { return p.Field == "value" })
		problems = slices.Insert(problems, 0, Problem{Field: "value",
			Message: fmt.Sprintf("as a number must be a whole number from 0 to %.0f; send other text as a string", MaxNumber)})
	}
	return st, problems
}

// Flag accepts a JSON boolean or the strings "on", "off", "true" and "false" (HTML forms
// send "on" for a ticked checkbox).
type Flag bool

// UnmarshalJSON reads a boolean or one of those strings.
func (b *Flag) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v {
	case true, "on", "true":
		*b = true
	case false, "off", "false":
		*b = false
	default:
		return &json.UnmarshalTypeError{Value: string(data), Type: reflect.TypeFor[bool]()}
	}
	return nil
}

// Text accepts a JSON string or number (a wait step's milliseconds may come as either). A
// number is a whole number from 0 to MaxNumber, kept as its digits (1e3 is "1000").
type Text struct {
	text string
	// outOfRange is a number sent that is not one of those.
	outOfRange bool
}

// UnmarshalJSON reads a string, or a number as its digits.
func (s *Text) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		return json.Unmarshal(data, &s.text)
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return &json.UnmarshalTypeError{Value: string(data), Type: reflect.TypeFor[string]()}
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > MaxNumber || f != math.Trunc(f) {
		*s = Text{text: n.String(), outOfRange: true}
		return nil
	}
	*s = Text{text: strconv.FormatFloat(f, 'f', -1, 64)}
	return nil
}
