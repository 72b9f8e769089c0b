package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/store"
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
	if err != nil || k.Account != "acme" || k.Role != store.RoleViewer || k.Name != "dashboard" {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	if _, err := st.APIKeyByHash(ctx, secret); !errors.Is(err, store.ErrNotFound) {
		t.Error("the key is stored in clear, or findable by its secret")
	}

	if err := run(ctx, []string{"revoke", "-key", secret}, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := st.APIKeyByHash(ctx, apikey.Hash(secret)); !errors.Is(err, store.ErrNotFound) {
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
