package rum

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func TestPageKey(t *testing.T) {
	for raw, want := range map[string]string{
		"https://example.com":                   "/",
		"https://example.com/":                  "/",
		"https://example.com/Shop/Shoes/":       "/shop/shoes",
		"https://example.com/shop//?q=1#top":    "/shop",
		"http://www.example.com/A?b=c":          "/a",
		"https://example.com:8443/x/index.html": "/x/index.html",
		"https://example.com/caf%C3%A9/":        "/caf%c3%a9",
	} {
		got, _, err := PageKey(raw)
		if err != nil || got != want {
			t.Errorf("PageKey(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "example.com/a", "ftp://example.com/", "javascript:alert(1)", "https:///nohost", "https://example.com/" + strings.Repeat("a", 600)} {
		if got, _, err := PageKey(raw); err == nil {
			t.Errorf("PageKey(%q) = %q, want an error", raw, got)
		}
	}
}

func TestOnDomain(t *testing.T) {
	for _, c := range []struct {
		host, domain string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"www.example.com", "example.com", true},
		{"example.com", "www.example.com", true},
		{"shop.example.com", "example.com", false},
		{"example.com.evil.net", "example.com", false},
		{"evilexample.com", "example.com", false},
		{"127.0.0.1:8090", "127.0.0.1:8090", true},
		{"127.0.0.1:8091", "127.0.0.1:8090", false},
	} {
		if got := OnDomain(c.host, c.domain); got != c.want {
			t.Errorf("OnDomain(%q, %q) = %v", c.host, c.domain, got)
		}
	}
}

func TestParseBeacon(t *testing.T) {
	b, err := ParseBeacon([]byte(`{"w":"site1","u":"https://example.com/a","m":{"lcp":1200.5,"cls":0.12,"inp":"NaN","fcp":-3,"ttfb":1e300,"bogus":5,"fid":null,"dom_elements":812},"c":{"cart_items":3,"lcp":9,"Bad Name":1,"neg":-1}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"lcp": 1200.5, "cls": 0.12, "dom_elements": 812}
	if len(b.Metrics) != len(want) {
		t.Errorf("metrics %v, want %v", b.Metrics, want)
	}
	for k, v := range want {
		if b.Metrics[k] != v {
			t.Errorf("metric %s = %v, want %v", k, b.Metrics[k], v)
		}
	}
	if len(b.Custom) != 1 || b.Custom["cart_items"] != 3 {
		t.Errorf("custom %v, want only cart_items=3", b.Custom)
	}
	for _, bad := range []string{``, `null`, `[]`, `{"w":1}`, `{"u":"https://example.com/"}`, `{"w":"x"}`, `not json`, `{"w":"x","u":"https://e.com/","m":[1]}`} {
		if _, err := ParseBeacon([]byte(bad)); err == nil {
			t.Errorf("ParseBeacon(%q) succeeded", bad)
		}
	}
}

// The embedded web-vitals build must be the pinned npm package's, byte for byte.
func TestEmbeddedWebVitalsIsThePinnedPackage(t *testing.T) {
	pinned, err := os.ReadFile("../../layers/rum/node_modules/web-vitals/dist/web-vitals.attribution.iife.js")
	if err != nil {
		t.Fatalf("read the pinned package (make test installs it with npm ci in layers/rum): %v", err)
	}
	if !bytes.Equal(pinned, webVitals) {
		t.Fatal("internal/rum/snippet/web-vitals.attribution.iife.js differs from layers/rum's web-vitals: copy it again")
	}
	s := string(Snippet("abc123", model.RUMSettings{SampleRate: 0.25}))
	vitals, _, _ := strings.Cut(string(webVitals), "\n//# sourceMappingURL=")
	if !strings.HasPrefix(s, vitals) || strings.Contains(s, "sourceMappingURL") || !strings.Contains(s, `})("abc123", 0.25, "`+model.LabUserAgentMark+`");`) ||
		strings.Contains(s, sitePlaceholder) || strings.Contains(s, ratePlaceholder) || strings.Contains(s, labPlaceholder) {
		t.Error("the snippet is not web-vitals followed by the reporter bound to the website, its sample rate and the lab mark")
	}
	if !strings.Contains(string(Snippet("abc123", model.RUMSettings{})), `})("abc123", 1, "`) {
		t.Error("without a sample rate the snippet does not send every view")
	}
	if strings.Contains(string(Snippet(`a"b</script>`, model.RUMSettings{})), `</script>`) {
		t.Error("a website id is not escaped in the snippet")
	}
}

// A lifecycle's beacon: its views share the website and custom variables; each keeps its ID
// (lower-cased; another value dropped), navigation (soft, web-vitals' soft-navigation too) and
// the back/forward cache's reasons (tokens only, at most three, once each).
func TestParseBeacons(t *testing.T) {
	views, err := ParseBeacons([]byte(`{"w":"s","c":{"n":2},"v":[
		{"i":"6B08CAB1302953BC8761FFC6","u":"https://example.com/","m":{"lcp":1},"s":{"n":"back-forward","b":["unload-listener","Bad Reason!","unload-listener","masked","broadcastchannel","lock"]}},
		{"i":"xyz","u":"https://example.com/a","m":{"lcp":2},"s":{"n":"soft"}},
		{"u":"https://example.com/b","m":{"lcp":3},"s":{"n":"soft-navigation"}}]}`))
	if err != nil || len(views) != 3 {
		t.Fatalf("%+v %v", views, err)
	}
	bf, _ := DimNavigation.Value("back-forward")
	soft, _ := DimNavigation.Value("soft")
	if v := views[0]; v.ID != "6b08cab1302953bc8761ffc6" || v.Hints.Navigation != bf || !reflect.DeepEqual(v.Hints.NotRestored, []string{"unload-listener", "masked", "broadcastchannel"}) || v.Custom["n"] != 2 {
		t.Errorf("first view %+v", v)
	}
	for _, v := range views[1:] {
		if v.ID != "" || v.Hints.Navigation != soft || v.Website != "s" || v.Custom["n"] != 2 {
			t.Errorf("soft view %+v", v)
		}
	}
	for _, bad := range []string{`{"w":"s","v":[]}`, `{"w":"s","v":[{"m":{"lcp":1}}]}`, `{"w":"s","v":{"u":"https://example.com/"}}`, `{"v":[{"u":"https://example.com/","m":{}}]}`} {
		if _, err := ParseBeacons([]byte(bad)); err == nil {
			t.Errorf("%s read", bad)
		}
	}
}
