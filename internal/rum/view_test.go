package rum

import (
	"errors"
	"reflect"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

const (
	uaChromeAndroid = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36"
	uaSafariIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	uaSafariMac     = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"
	uaEdgeWindows   = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.0.0"
	uaFirefoxLinux  = "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0"
	uaSamsungTablet = "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Safari/537.36"
	uaHeadless      = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
	uaPSI           = "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse"
)

func TestClassifyAgent(t *testing.T) {
	name := func(d *Dim, v uint64) string { return d.ValueName(v) }
	for _, c := range []struct {
		ua                  string
		touch, webdriver    bool
		device, browser, os string
		lab, own            bool
	}{
		{ua: uaChromeAndroid, device: "mobile", browser: "chrome", os: "android"},
		{ua: uaSafariIPhone, device: "mobile", browser: "safari", os: "ios"},
		{ua: uaSafariMac, device: "desktop", browser: "safari", os: "macos"},
		{ua: uaSafariMac, touch: true, device: "tablet", browser: "safari", os: "macos"},
		{ua: uaEdgeWindows, device: "desktop", browser: "edge", os: "windows"},
		{ua: uaFirefoxLinux, device: "desktop", browser: "firefox", os: "linux"},
		{ua: uaSamsungTablet, device: "tablet", browser: "samsung", os: "android"},
		{ua: uaHeadless, device: "desktop", browser: "chrome", os: "linux", lab: true},
		{ua: uaPSI, device: "mobile", browser: "chrome", os: "android", lab: true},
		{ua: uaChromeAndroid, webdriver: true, device: "mobile", browser: "chrome", os: "android", lab: true},
		{ua: uaChromeAndroid + " " + model.LabUserAgentMark, device: "mobile", browser: "chrome", os: "android", own: true},
		{ua: "", device: "unknown", browser: "unknown", os: "unknown"},
	} {
		a := ClassifyAgent(c.ua, c.touch, c.webdriver)
		got := []any{name(DimDevice, a.Device), name(DimBrowser, a.Browser), name(DimOS, a.OS), a.Lab, a.OwnLab}
		want := []any{c.device, c.browser, c.os, c.lab, c.own}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q touch=%v webdriver=%v: %v, want %v", c.ua, c.touch, c.webdriver, got, want)
		}
	}
}

func TestAttributionIsReducedFieldByField(t *testing.T) {
	b, err := ParseBeacon([]byte(`{"w":"s","u":"https://example.com/p","m":{"lcp":2000},
		"s":{"n":"back-forward-cache","e":"3g","t":1,"d":0},
		"a":{"lcp":{"e":"html>body>img#hero-123456.big","u":"https://cdn.example.com/img/123456/hero.jpg?user=ann#x","p":[100,200.1234,1500,199.8]},
		     "inp":{"e":"button#buy","t":"tap","p":[10,"x",5],"s":[{"u":"https://t.example.net/a.js?k=1","f":"onClick","d":120}]},
		     "cls":{"e":"p.lead","t":"late"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if nav, _ := DimNavigation.Value("back-forward-cache"); b.Hints.Navigation != nav || DimConnection.ValueName(b.Hints.Connection) != "3g" || !b.Hints.Touch || b.Hints.Webdriver {
		t.Errorf("hints %+v", b.Hints)
	}
	a := b.Attribution
	if a == nil || a.LCP == nil {
		t.Fatalf("attribution %+v", a)
	}
	if a.LCP.Element != "html>body>img#hero-{n}.big" || a.LCP.URL != "https://cdn.example.com/img/{n}/hero.jpg" || a.LCP.Phases != [4]float64{100, 200.123, 1500, 199.8} {
		t.Errorf("lcp %+v", a.LCP)
	}
	if a.INP != nil {
		t.Errorf("inp with a phase that is not a number is kept: %+v", a.INP)
	}
	if a.CLS == nil || a.CLS.Target != "p.lead" || a.CLS.Time != 0 {
		t.Errorf("cls %+v: the target is kept without the bad time", a.CLS)
	}
	// Broken attribution never loses the view.
	for _, body := range []string{
		`{"w":"s","u":"https://example.com/","m":{"lcp":1},"a":"x","s":[1]}`,
		`{"w":"s","u":"https://example.com/","m":{"lcp":1},"a":{"lcp":{"p":[1,2]}},"s":{"n":42}}`,
	} {
		b, err := ParseBeacon([]byte(body))
		if err != nil || b.Metrics["lcp"] != 1 || b.Attribution != nil || !reflect.DeepEqual(b.Hints, Hints{}) {
			t.Errorf("%s: %+v %v", body, b, err)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"/product/*", "/product/shoes", true},
		{"/product/*", "/product/shoes/red", true},
		{"/product/*", "/product", false},
		{"/product*", "/product", true},
		{"/*/checkout", "/de/checkout", true},
		{"/*/checkout", "/de/checkout/x", false},
		{"/", "/", true},
		{"/", "/a", false},
		{"*", "/anything", true},
		{"/a*b*c", "/axxbyyc", true},
		{"/a*b*c", "/axxbyy", false},
	} {
		if got := Glob(c.pattern, c.s); got != c.want {
			t.Errorf("Glob(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
}

func TestSiteView(t *testing.T) {
	set, err := ApplySettings(model.RUMSettings{}, model.RUMSettings{SampleRate: 0.1, Groups: []model.PageGroup{
		{Name: "Products", Pattern: "/product/*"}, {Name: "Shop", Pattern: "/*"}}})
	if err != nil {
		t.Fatal(err)
	}
	site := NewSite(model.Website{ID: "w", Account: "a", Domain: "shop.example"}, set, []model.Page{
		{ID: "home", URL: "/"}, {ID: "index", URL: "/Index.html"}, {ID: "ad", URL: "/index.html?from=ad"},
		{ID: "adde", URL: "/index.html?from=ad&lang=de"},
	})
	for _, c := range []struct {
		url   string
		pages []string
		group string
	}{
		{"https://shop.example/index.html", []string{"index"}, "Shop"},
		{"https://shop.example/index.html?from=ad", []string{"index", "ad"}, "Shop"},
		{"https://shop.example/index.html?utm=1&from=ad&lang=de", []string{"index", "ad", "adde"}, "Shop"},
		{"https://www.shop.example/index.html?from=mail", []string{"index"}, "Shop"},
		{"https://shop.example/product/1", nil, "Products"},
		{"https://shop.example/?x=1", []string{"home"}, "Shop"},
	} {
		b := Beacon{Website: "w", URL: c.url, Metrics: map[string]float64{"lcp": 1}}
		v, err := site.View(b, Request{UserAgent: uaSafariIPhone, Day: "20261201", IP: "203.0.113.9"})
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if !reflect.DeepEqual(v.Pages, c.pages) {
			t.Errorf("%s: pages %v, want %v", c.url, v.Pages, c.pages)
		}
		if got := set.GroupNames[int(DimGroup.Of(v.Segments))]; got != c.group {
			t.Errorf("%s: group %q, want %q", c.url, got, c.group)
		}
		if v.Weight != 10 || v.IP != "203.0.113.9" || DimDevice.ValueName(DimDevice.Of(v.Segments)) != "mobile" ||
			DimBrowser.ValueName(DimBrowser.Of(v.Segments)) != "safari" {
			t.Errorf("%s: %+v %v", c.url, v, v.Segments)
		}
	}
	lab := Beacon{Website: "w", URL: "https://shop.example/", Metrics: map[string]float64{"lcp": 1}}
	if _, err := site.View(lab, Request{UserAgent: uaHeadless + " " + model.LabUserAgentMark}); !errors.Is(err, ErrLabView) {
		t.Errorf("openvitals' own browser: %v", err)
	}
	if _, err := site.View(lab, Request{UserAgent: uaHeadless}); err != nil {
		t.Errorf("another lab agent counts unless the website excludes them: %v", err)
	}
	site.Settings.ExcludeLabAgents = true
	if _, err := site.View(lab, Request{UserAgent: uaHeadless}); !errors.Is(err, ErrLabView) {
		t.Errorf("excluded lab agent: %v", err)
	}
	if _, err := site.View(Beacon{URL: "https://other.example/", Metrics: lab.Metrics}, Request{}); !errors.Is(err, ErrOffDomain) {
		t.Errorf("off domain: %v", err)
	}
}

func TestScriptEntities(t *testing.T) {
	a := &Attribution{INP: &INPAttribution{Scripts: []Script{
		{URL: "https://www.googletagmanager.com/gtm.js"},
		{URL: "https://static.shop.example/app.js"},
		{URL: "https://cdn.unknown-vendor.io/x.js"},
		{Function: "onclick"},
	}}}
	a.NameEntities("www.shop.example:8443")
	var got []string
	for _, s := range a.INP.Scripts {
		got = append(got, s.Entity)
	}
	if want := []string{"Google Tag Manager", FirstParty, "unknown-vendor.io", FirstParty}; !reflect.DeepEqual(got, want) {
		t.Errorf("entities %q, want %q", got, want)
	}
}

func TestApplySettings(t *testing.T) {
	first, err := ApplySettings(model.RUMSettings{}, model.RUMSettings{Groups: []model.PageGroup{{Name: "A", Pattern: "/a/*"}, {Name: "B", Pattern: "/b"}}})
	if err != nil || first.Groups[0].ID != 1 || first.Groups[1].ID != 2 {
		t.Fatalf("%+v %v", first, err)
	}
	second, err := ApplySettings(first, model.RUMSettings{Groups: []model.PageGroup{{Name: "C", Pattern: "/c"}, {Name: "a", Pattern: "/a2/*"}}})
	if err != nil || second.Groups[0].ID != 3 || second.Groups[1].ID != 1 || second.GroupNames[2] != "B" || second.GroupNames[1] != "a" {
		t.Fatalf("%+v %v", second, err)
	}
	for _, bad := range []model.RUMSettings{
		{SampleRate: 0.3}, {SampleRate: 2}, {SampleRate: -1}, {SampleRate: 0.0001},
		{Groups: []model.PageGroup{{Name: "", Pattern: "/"}}},
		{Groups: []model.PageGroup{{Name: "x", Pattern: "product"}}},
		{Groups: []model.PageGroup{{Name: "x", Pattern: "/a?b=1"}}},
		{Groups: []model.PageGroup{{Name: "x", Pattern: "/a"}, {Name: "X", Pattern: "/b"}}},
	} {
		if _, err := ApplySettings(first, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if s, err := ApplySettings(first, model.RUMSettings{SampleRate: 0.2}); err != nil || s.Weight() != 5 {
		t.Errorf("0.2: %+v %v", s, err)
	}
}

// The interaction that started a navigation is kept for a soft navigation only, its target
// reduced as every selector, its type pointer or keyboard; a page load claiming one loses it
// (and its attribution when that was all of it).
func TestStartAttribution(t *testing.T) {
	site := NewSite(model.Website{ID: "w", Domain: "shop.example"}, model.RUMSettings{}, nil)
	for _, c := range []struct {
		nav, start string
		want       *StartAttribution
	}{
		{"soft", `{"e":"nav>a#to-product-12345","t":"pointer"}`, &StartAttribution{Target: "nav>a#to-product-{n}", Type: "pointer"}},
		{"soft", `{"e":"#search","t":"touch"}`, &StartAttribution{Target: "#search"}},
		{"soft", `{"t":"keyboard"}`, &StartAttribution{Type: "keyboard"}},
		{"soft", `{"e":""}`, nil},
		{"navigate", `{"e":"#to-about","t":"pointer"}`, nil},
	} {
		body := `{"w":"w","v":[{"i":"6b08f5ab6f217f71c9f70a08","u":"https://shop.example/p","m":{"lcp":100},"s":{"n":"` + c.nav + `"},"a":{"nav":` + c.start + `}}]}`
		bs, err := ParseBeacons([]byte(body))
		if err != nil || len(bs) != 1 {
			t.Fatalf("%s: %v", body, err)
		}
		v, err := site.View(bs[0], Request{UserAgent: uaChromeAndroid, Day: "20261127"})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var got *StartAttribution
		if v.Attribution != nil {
			got = v.Attribution.Start
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.nav, c.start, got, c.want)
		}
		if c.nav == "navigate" && v.Attribution != nil {
			t.Errorf("a page load with nothing but a start: attribution %+v, want none", v.Attribution)
		}
	}
}
