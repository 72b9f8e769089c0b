package model

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestProfilePatchKeepsStoredSecrets: an update that sends cookies alone keeps the stored
// headers and password, and a login's typed values become secrets, blank in the steps.
func TestProfilePatchKeepsStoredSecrets(t *testing.T) {
	var in ProfilePatch
	body := `{"cookies":[{"name":"sid","value":"abc"}],"login":[{"type":"type","target":"#user","value":1234}]}`
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	stored := ProfileSecrets{Headers: map[string]string{"X-Token": "t"}, Cookies: map[string]string{"old": "x"}, Password: "pw"}
	p := Profile{ID: "prof_1", Name: "logged in", HeaderNames: []string{"X-Token"}}
	secrets, err := in.Apply(&p, Website{Domain: "example.com"}, false, ProfileStore{
		Pages:   func() ([]Page, error) { return nil, errors.New("pages read without pages sent") },
		Secrets: func() (ProfileSecrets, error) { return stored, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if secrets.Headers["X-Token"] != "t" || secrets.Password != "pw" || secrets.Cookies["sid"] != "abc" || len(secrets.Cookies) != 1 {
		t.Errorf("secrets = %+v", secrets)
	}
	if secrets.Typed[0] != "1234" || len(p.Login) != 1 || p.Login[0].Value != "" || p.CookieNames[0] != "sid" {
		t.Errorf("login %+v, typed %v, cookies %v", p.Login, secrets.Typed, p.CookieNames)
	}
}

func TestProfilePatchRefusals(t *testing.T) {
	var in ProfilePatch
	body := `{"pages":[{"page":"pg_1","device":"tablet"}],"headers":[{"name":"Cookie","value":"x"}],"login":[{"type":"wait","value":1e20}]}`
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	var p Profile
	_, err := in.Apply(&p, Website{Domain: "example.com"}, true, ProfileStore{
		Pages: func() ([]Page, error) { return []Page{{ID: "pg_1"}}, nil },
	})
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("Apply = %v, want an *InvalidError", err)
	}
	want := []string{"name", "pages[0].device", "headers[0].name", "login[0].value"}
	if len(invalid.Fields) != len(want) {
		t.Fatalf("fields %+v, want %v", invalid.Fields, want)
	}
	for i, f := range invalid.Fields {
		if f.Field != want[i] {
			t.Errorf("field %d is %s, want %s", i, f.Field, want[i])
		}
	}
}

func TestProfileMeasuresLike(t *testing.T) {
	a := Profile{Network: "mobileSlow4G", HeaderNames: []string{"X-A"}}
	if b := a; !b.MeasuresLike(a, MethodApplied) {
		t.Error("a profile does not measure like itself")
	}
	if b := (Profile{Network: "mobileSlow4G", HeaderNames: []string{"X-B"}}); b.MeasuresLike(a, MethodApplied) {
		t.Error("another header measures alike")
	}
	// A profile without a method follows its website's: naming that one changes nothing.
	if b := (Profile{Network: "mobileSlow4G", HeaderNames: []string{"X-A"}, Method: MethodApplied}); !b.MeasuresLike(a, MethodApplied) {
		t.Error("the website's method, named, measures differently")
	}
	if b := (Profile{Network: "mobileSlow4G", HeaderNames: []string{"X-A"}, Method: MethodSimulated}); b.MeasuresLike(a, MethodApplied) {
		t.Error("another method measures alike")
	}
}
