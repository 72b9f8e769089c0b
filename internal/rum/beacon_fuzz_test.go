package rum

import (
	"math"
	"testing"
)

// FuzzParseBeacon: no body makes the parser panic, and what it accepts keeps to its limits:
// known metrics within their plausible range, at most ten custom variables with valid names,
// a website and a URL of bounded length. Seeds: testdata/fuzz/FuzzParseBeacon.
func FuzzParseBeacon(f *testing.F) {
	f.Add([]byte(`{"w":"abc123","u":"https://example.com/p?q=1","m":{"lcp":1234.5,"cls":0.01},"c":{"plan":2}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := ParseBeacon(body)
		if err != nil {
			return
		}
		if b.Website == "" || len(b.Website) > 64 || b.URL == "" || len(b.URL) > 2048 {
			t.Fatalf("accepted website %q, url of %d bytes", b.Website, len(b.URL))
		}
		for name, v := range b.Metrics {
			limit, known := Metrics[name]
			if !known || math.IsNaN(v) || v < 0 || v > limit {
				t.Fatalf("accepted metric %s = %v", name, v)
			}
		}
		if len(b.Custom) > maxCustomPerBeacon {
			t.Fatalf("%d custom variables", len(b.Custom))
		}
		for name, v := range b.Custom {
			if !IsCustomName(name) || math.IsNaN(v) || v < 0 || v > maxCustomValue {
				t.Fatalf("accepted custom %s = %v", name, v)
			}
		}
		// A page key, when the URL has one, is a short path.
		if key, _, err := PageKey(b.URL); err == nil && (key == "" || key[0] != '/' || len(key) > 512) {
			t.Fatalf("page key %q of %q", key, b.URL)
		}
	})
}
