package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

func TestCreateAndRevoke(t *testing.T) {
	st := awstest.Store(t, awstest.Clients(t))
	t.Setenv("OPENVITALS_TABLE", st.Table())
	ctx := context.Background()

	var out bytes.Buffer
	if err := run(ctx, []string{"create", "-account", "acme", "-role", "viewer", "-name", "dashboard"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	secret := lines[len(lines)-1]
	if !strings.HasPrefix(secret, apikey.Prefix) {
		t.Fatalf("printed %q, want a generated key last", out.String())
	}
	k, err := st.APIKeyByHash(ctx, apikey.Hash(secret))
	if err != nil || k.Account != "acme" || k.Role != model.RoleViewer || k.Name != "dashboard" {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	if _, err := st.APIKeyByHash(ctx, secret); !errors.Is(err, model.ErrNotFound) {
		t.Error("the key is stored in clear, or findable by its secret")
	}

	if err := run(ctx, []string{"revoke", "-key", secret}, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := st.APIKeyByHash(ctx, apikey.Hash(secret)); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("revoked key still found: %v", err)
	}

	for _, args := range [][]string{
		nil,
		{"delete"},
		{"create", "-account", "Bad Name"},
		{"create", "-account", "acme", "-role", "owner"},
		{"create", "-account", "acme", "-key", "short"},
		{"revoke"},
	} {
		if err := run(ctx, args, &out); err == nil {
			t.Errorf("keys %v succeeded", args)
		}
	}
}

func TestLimits(t *testing.T) {
	st := awstest.Store(t, awstest.Clients(t))
	t.Setenv("OPENVITALS_TABLE", st.Table())
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"limits", "-account", "acme", "-audits_per_day", "20", "-pages_per_website", "50"}, &out); err != nil {
		t.Fatal(err)
	}
	want := "pages_per_website 50\naudits_per_day 20\nruns_per_day 200 (default)\nbeacons_per_day 500000 (default)\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	got, err := st.AccountLimits(ctx, "acme")
	if err != nil || got["audits_per_day"] != 20 || got["pages_per_website"] != 50 || len(got) != 2 {
		t.Errorf("stored %v, %v", got, err)
	}
	out.Reset()
	if err := run(ctx, []string{"limits", "-account", "acme", "-audits_per_day", "-1"}, &out); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.AccountLimits(ctx, "acme"); len(got) != 1 || !strings.Contains(out.String(), "audits_per_day 500 (default)") {
		t.Errorf("after -1: stored %v, printed %q", got, out.String())
	}
	for _, args := range [][]string{{"limits"}, {"limits", "-account", "acme", "-runs_per_day", "-5"}, {"limits", "-account", "acme", "-nope", "1"}} {
		if err := run(ctx, args, &out); err == nil {
			t.Errorf("keys %v succeeded", args)
		}
	}
}
