package model

import (
	"errors"
	"testing"
)

func TestFieldErrorsErr(t *testing.T) {
	var fe FieldErrors
	if err := fe.Err(); err != nil {
		t.Fatalf("no field recorded: Err = %v, want nil", err)
	}
	fe.Add("pages[1].device", "must be %s", "desktop or mobile")
	fe.Add("name", "is required")
	var invalid *InvalidError
	if !errors.As(fe.Err(), &invalid) {
		t.Fatalf("Err = %v, want an *InvalidError", fe.Err())
	}
	if len(invalid.Fields) != 2 || invalid.Fields[0] != (FieldError{"pages[1].device", "must be desktop or mobile"}) {
		t.Errorf("fields = %+v", invalid.Fields)
	}
	if got, want := invalid.Error(), "invalid: pages[1].device: must be desktop or mobile; name: is required"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
