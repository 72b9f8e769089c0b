package rum

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseBeacon: no body makes the parser panic, and what it accepts keeps to its limits:
// at most 32 views, each with known metrics within their plausible range, at most ten custom
// variables with valid names, a website and a URL of bounded length, an ID that is a view ID
// or none, at most three back/forward cache reasons. Seeds: testdata/fuzz/FuzzParseBeacon.
func FuzzParseBeacon(f *testing.F) {
	f.Add([]byte(`{"w":"abc123","u":"https://example.com/p?q=1","m":{"lcp":1234.5,"cls":0.01},"c":{"plan":2}}`))
	f.Add([]byte(`{"w":"abc123","u":"https://example.com/","m":{"lcp":1},"s":{"n":"reload","e":"3g","t":1},
		"a":{"lcp":{"e":"img#a","u":"https://x.example/a.jpg?x","p":[1,2,3,4]},"inp":{"e":"b","t":"pointer","p":[1,2,3],"s":[{"u":"https://t.example/s.js","f":"f","d":9}]},"cls":{"e":"p","t":5}}}`))
	f.Add([]byte(`{"w":"abc123","c":{"plan":2},"v":[{"i":"6b08cab1302953bc8761ffc6","u":"https://example.com/","m":{"lcp":1,"ttfb":2},"s":{"n":"back-forward","b":["unload-listener","masked"]}},
		{"i":"6b08cab1302953bc8761ffc7","u":"https://example.com/p/1","m":{"lcp":1,"inp":40},"s":{"n":"soft"},"a":{"lcp":{"e":"h1","p":[0,0,0,1]}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		views, err := ParseBeacons(body)
		if err != nil {
			return
		}
		if len(views) == 0 || len(views) > MaxViewsPerBeacon {
			t.Fatalf("%d views", len(views))
		}
		for _, b := range views {
			checkBeacon(t, b)
		}
	})
}

// checkBeacon fails on a view outside the limits.
func checkBeacon(t *testing.T, b Beacon) {
	if _, ok := ParseViewID(b.ID); b.ID != "" && (!ok || b.ID != strings.ToLower(b.ID)) {
		t.Fatalf("accepted view ID %q", b.ID)
	}
	if len(b.Hints.NotRestored) > maxNotRestored {
		t.Fatalf("%d reasons", len(b.Hints.NotRestored))
	}
	for _, r := range b.Hints.NotRestored {
		if r != notRestoredReason(r) {
			t.Fatalf("accepted reason %q", r)
		}
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
	// Attribution keeps to its limits: short selectors, URLs without query or fragment.
	if a := b.Attribution; a != nil {
		var selectors, urls []string
		if a.LCP != nil {
			selectors, urls = append(selectors, a.LCP.Element), append(urls, a.LCP.URL)
		}
		if a.INP != nil {
			selectors = append(selectors, a.INP.Target)
			if len(a.INP.Scripts) > MaxScripts {
				t.Fatalf("%d scripts", len(a.INP.Scripts))
			}
			for _, s := range a.INP.Scripts {
				urls = append(urls, s.URL)
				if len(s.Function) > maxFunction {
					t.Fatalf("function %q", s.Function)
				}
			}
		}
		if a.CLS != nil {
			selectors = append(selectors, a.CLS.Target)
		}
		for _, s := range selectors {
			if len(s) > maxSelector {
				t.Fatalf("selector %q", s)
			}
		}
		for _, u := range urls {
			if len(u) > maxAttrURL || strings.ContainsAny(u, "?#") {
				t.Fatalf("url %q", u)
			}
		}
	}
	// A page key, when the URL has one, is a short path.
	if key, _, err := PageKey(b.URL); err == nil && (key == "" || key[0] != '/' || len(key) > 512) {
		t.Fatalf("page key %q of %q", key, b.URL)
	}
}

// FuzzWireBatch: no queue message makes the batch reader panic, and a batch it reads is
// written and read back the same.
func FuzzWireBatch(f *testing.F) {
	f.Add([]byte(`{"id":"b","a":"acme","w":"w","z":["img","u","",""],"v":[{"i":"x","d":"20261201","p":"/","t":[1,-1],"k":2,"s":5,"g":["p"],"a":[7,0,1,1,2,3,4,0,2,1,2,3,1,1,2,3,9,0,5]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b WireBatch
		if err := b.UnmarshalJSON(body); err != nil {
			return
		}
		again, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back WireBatch
		if err := back.UnmarshalJSON(again); err != nil {
			t.Fatalf("%s does not read back: %v", again, err)
		}
		if again2, _ := back.MarshalJSON(); string(again2) != string(again) {
			t.Fatalf("%s and %s", again, again2)
		}
	})
}
