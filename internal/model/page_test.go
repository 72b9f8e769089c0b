package model

import (
	"errors"
	"testing"
)

func TestNewPages(t *testing.T) {
	str := func(s string) *string { return &s }
	pages, err := NewPages([]PagePatch{{URL: str("/")}, {URL: str("/pricing"), Alias: str("Pricing")}})
	if err != nil || len(pages) != 2 || pages[0].Alias != "/" || pages[1].Alias != "Pricing" {
		t.Errorf("NewPages = %+v, %v", pages, err)
	}
	_, err = NewPages([]PagePatch{{URL: str("/a")}, {URL: str("pricing")}, {URL: str("/a")}})
	var invalid *InvalidError
	if !errors.As(err, &invalid) || len(invalid.Fields) != 2 || invalid.Fields[0].Field != "[1].url" || invalid.Fields[1].Field != "[2].url" {
		t.Errorf("a bad url and a repeated one: %v", err)
	}
	if _, err := NewPages(nil); err == nil {
		t.Error("no page: no error")
	}
}

func TestPagePatchUpdate(t *testing.T) {
	read := func() (Page, error) { return Page{ID: "pg_1", URL: "/a", Alias: "A"}, nil }
	if _, _, err := (PagePatch{}).Update(func() (Page, error) { t.Error("read for an empty patch"); return Page{}, nil }); err == nil {
		t.Error("an empty patch: no error")
	}
	str := func(s string) *string { return &s }
	old, updated, err := PagePatch{URL: str("/b")}.Update(read)
	if err != nil || old.URL != "/a" || updated.URL != "/b" || updated.Alias != "A" || updated.ID != "pg_1" {
		t.Errorf("Update = %+v, %+v, %v", old, updated, err)
	}
}
