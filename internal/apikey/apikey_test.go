package apikey

import (
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	a, b := Generate(), Generate()
	if a == b || !strings.HasPrefix(a, Prefix) || len(a) != len(Prefix)+32 {
		t.Errorf("keys %q and %q", a, b)
	}
	if Hash(a) == Hash(b) || len(Hash(a)) != 64 || Hash(a) != Hash(a) {
		t.Error("hash is not a stable hex SHA-256")
	}
}

func TestParseGrants(t *testing.T) {
	grants, err := ParseGrants(" acme:admin:acme-admin-key-1 , acme:viewer:acme-viewer-key-1,,globex:admin:globex-admin-key ")
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 3 || grants[1].Account != "acme" || grants[1].Role != "viewer" || grants[1].Key != "acme-viewer-key-1" {
		t.Errorf("grants %+v", grants)
	}
	for _, bad := range []string{
		"acme:admin",                  // no key
		"acme:owner:acme-admin-key-1", // unknown role
		"Acme:admin:acme-admin-key-1", // upper case account
		"a#b:admin:acme-admin-key-1",  // separator in the account
		"acme:admin:short",            // key too short
		"acme:admin:has a space key",  // white space
	} {
		if _, err := ParseGrants(bad); err == nil {
			t.Errorf("ParseGrants(%q) accepted it", bad)
		}
	}
	// A key may contain colons: only the first two separate fields.
	if g, err := ParseGrants("acme:admin:key:with:colons"); err != nil || g[0].Key != "key:with:colons" {
		t.Errorf("got %+v, %v", g, err)
	}
}
