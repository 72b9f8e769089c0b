package model

import (
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model/step"
)

// Test is a multistep test: a scripted browser journey through a website. The API shows it as
// it is (its JSON names).
type Test struct {
	ID      string      `json:"id"`
	Alias   string      `json:"alias"`
	Created time.Time   `json:"created"`
	Device  string      `json:"device"` // "desktop" or "mobile"
	Steps   []step.Step `json:"steps"`
}

// TestPatch is a multistep test's create or update request; nil means omitted (kept, on
// update).
type TestPatch struct {
	Alias  *string         `json:"alias"`
	Device *string         `json:"device"`
	Steps  *[]step.Request `json:"steps"`
}

// Apply sets the fields present in the patch over t and checks the result; on create alias,
// device and steps must be present.
func (in TestPatch) Apply(t *Test, create bool) error {
	var errs FieldErrors
	patchField(&errs, "alias", in.Alias, &t.Alias, create, CheckName)
	patchField(&errs, "device", in.Device, &t.Device, create, oneOf(Devices, "must be desktop or mobile"))
	// A test without a step would "complete" every run in no time: refused on create and edit.
	if in.Steps == nil && create || in.Steps != nil && len(*in.Steps) == 0 {
		errs.Add("steps", "at least one step")
	}
	if in.Steps != nil {
		if len(*in.Steps) > step.MaxSteps {
			errs.Add("steps", "at most %d steps, not %d", step.MaxSteps, len(*in.Steps))
		} else {
			t.Steps = parseSteps("steps", *in.Steps, &errs)
		}
	}
	if !create && in == (TestPatch{}) {
		errs.Add("body", "send at least one of alias, device and steps")
	}
	return errs.Err()
}

// parseSteps parses steps as sent, recording their problems under field ("steps[2].target").
func parseSteps(field string, in []step.Request, errs *FieldErrors) []step.Step {
	steps := make([]step.Step, len(in))
	for i, r := range in {
		st, problems := r.Parse()
		for _, p := range problems {
			errs.Add(fmt.Sprintf("%s[%d].%s", field, i, p.Field), "%s", p.Message)
		}
		steps[i] = st
	}
	return steps
}
