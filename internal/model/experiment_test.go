package model

import (
	"errors"
	"fmt"
	"testing"
)

func TestExperimentRequest(t *testing.T) {
	page := func(id string) error {
		if id == "pg_1" {
			return nil
		}
		return fmt.Errorf("page %s: %w", id, ErrNotFound)
	}
	str := func(s string) *string { return &s }
	e, err := ExperimentRequest{Page: str("pg_1"), Device: str("mobile"), Changes: &ExperimentChanges{Block: []string{"*.js"}}}.Experiment(page)
	if err != nil || e.Page != "pg_1" || e.Device != "mobile" || len(e.Changes.Block) != 1 || e.ID == "" {
		t.Errorf("a good request: %+v, %v", e, err)
	}
	_, err = ExperimentRequest{Page: str("pg_2"), Device: str("tablet"), Changes: &ExperimentChanges{Delay: []Delay{{Pattern: "", Ms: 0}}}}.Experiment(page)
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("a bad request: %v, want an *InvalidError", err)
	}
	want := "invalid: device: must be desktop or mobile; page: is not a page of this website; " +
		"changes.delay[0].pattern: must be a URL pattern of 1 to 500 bytes (* matches any characters, ? one); changes.delay[0].ms: must be from 1 to 30000"
	if invalid.Error() != want {
		t.Errorf("a bad request:\n got %s\nwant %s", invalid.Error(), want)
	}
	failing := errors.New("table unavailable")
	if _, err := (ExperimentRequest{Page: str("pg_1")}).Experiment(func(string) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("a failing read: %v, want it returned", err)
	}
}
