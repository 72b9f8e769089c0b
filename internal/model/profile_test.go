package model_test

import (
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

// TestProfileOrigin: an origin of the website's own site, written as scheme://host[:port];
// anything else, another site's above all, is refused.
func TestProfileOrigin(t *testing.T) {
	for _, tc := range []struct{ website, raw, want string }{
		{"www.example.com", "https://api.example.com", "https://api.example.com"},
		{"www.example.com", "HTTPS://API.Example.com:8443/", "https://api.example.com:8443"},
		{"example.co.uk", "https://cdn.example.co.uk", "https://cdn.example.co.uk"},
		{"127.0.0.1:8090", "http://127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"localhost:8090", "http://localhost:9000", "http://localhost:9000"},
		{"www.example.com", "https://example.org", ""},
		{"example.co.uk", "https://other.co.uk", ""},
		{"127.0.0.1:8090", "http://127.0.0.2", ""},
		{"127.0.0.1:8090", "http://localhost:8090", ""},
		{"www.example.com", "https://api.example.com/path", ""},
		{"www.example.com", "https://api.example.com?q", ""},
		{"www.example.com", "https://u:p@api.example.com", ""},
		{"www.example.com", "ftp://api.example.com", ""},
		{"www.example.com", "api.example.com", ""},
		{"www.example.com", "https://api.example.com:99999", ""},
	} {
		got, err := model.ProfileOrigin(tc.website, tc.raw)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%s on %s: %q, %v; want %q", tc.raw, tc.website, got, err, tc.want)
		}
	}
}
