package entity

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite entities.txt from the pinned package")

// pinned is the dataset of the package layers/rum pins (make deps installs it).
const pinned = "../../../layers/rum/node_modules/third-party-web/dist/entities.json"

// entities.txt is the pinned package's entities, names and domains only.
func TestDatasetMatchesThePinnedPackage(t *testing.T) {
	raw, err := os.ReadFile(pinned)
	if err != nil {
		t.Fatalf("the pinned third-party-web is not installed (make deps): %v", err)
	}
	var entities []struct {
		Name    string   `json:"name"`
		Domains []string `json:"domains"`
	}
	if err := json.Unmarshal(raw, &entities); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entities {
		b.WriteString(e.Name + "\t" + strings.Join(e.Domains, " ") + "\n")
	}
	if *update {
		if err := os.WriteFile("entities.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b.String() != dataset {
		t.Error("entities.txt differs from the pinned third-party-web: go test ./internal/rum/entity -update")
	}
}

func TestOf(t *testing.T) {
	for host, want := range map[string]string{
		"www.googletagmanager.com": "Google Tag Manager",
		"connect.facebook.net":     "Facebook",
		"static.xx.fbcdn.net":      "Facebook",
		"WWW.GOOGLE-ANALYTICS.COM": "Google Analytics",
		"cdn.shop.example":         "",
		"127.0.0.1":                "",
		"":                         "",
	} {
		if got := Of(host); got != want {
			t.Errorf("Of(%q) = %q, want %q", host, got, want)
		}
	}
	if got := RootDomain("a.b.example.co.uk"); got != "example.co.uk" {
		t.Errorf("RootDomain = %q", got)
	}
}
