package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

const (
	uaPhone   = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36"
	uaDesktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
)

// The reports over segments answer from real beacons (through collect and the aggregator),
// for the website and a monitored page with a query string; bad queries are problems that
// name the parameter; another account's website and page are not found.
func TestFieldSegmentReports(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	w := "/" + site.ID + "/field-testing"
	var settings struct {
		Groups []struct {
			ID            int
			Name, Pattern string
		}
		SampleRate float64
	}
	e.do("PUT", w+"/settings", apitest.AdminKey, map[string]any{"groups": []any{map[string]any{"name": "Products", "pattern": "/product/*"}}}).
		Want(t, 200).Decode(t, &settings)
	if len(settings.Groups) != 1 || settings.Groups[0].ID != 1 || settings.SampleRate != 1 {
		t.Fatalf("settings %+v", settings)
	}
	var pages []struct{ ID, URL string }
	e.do("POST", "/"+site.ID+"/settings/pages", apitest.AdminKey, []any{map[string]any{"url": "/index.html?from=ad"}}).Want(t, 200).Decode(t, &pages)

	send := func(url, ua, metrics, attribution string) {
		body := fmt.Sprintf(`{"w":%q,"u":%q,"m":%s,"s":{"n":"navigate","e":"4g"},"a":%s}`, site.ID, url, metrics, attribution)
		e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"User-Agent": ua}).Want(t, 202)
	}
	hero := `{"lcp":{"e":"img#hero","u":"https://example.com/hero.jpg?v=1","p":[100,400,1500,200]}}`
	gtm := `{"lcp":{"e":"img#hero","u":"https://example.com/hero.jpg?v=1","p":[100,400,1500,200]},"inp":{"e":"button#buy","t":"pointer","p":[10,300,40],
		"s":[{"u":"https://www.googletagmanager.com/gtm.js?id=GTM-1","f":"onBuy","d":280},{"u":"https://example.com/app.js","f":"render","d":20}]}}`
	send("https://example.com/product/1", uaPhone, `{"lcp":2200,"inp":350,"cls":0.05}`, gtm)
	send("https://example.com/product/2", uaPhone, `{"lcp":4600,"inp":120,"cls":0.3}`, `{"lcp":{"e":"h1","p":[100,0,0,4500]}}`)
	send("https://example.com/index.html?from=ad", uaDesktop, `{"lcp":1200,"cls":0.01}`, hero)
	send("https://example.com/index.html", uaDesktop, `{"lcp":900}`, `{}`)
	e.fold(4)

	var trend struct {
		Result struct {
			Metric, Source string
			Days           []struct {
				Date  string
				Views int
				Value float64
			}
			Series []struct{ Key string }
		}
	}
	e.do("GET", w+"/trend?metric=lcp&by=device", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &trend)
	last := trend.Result.Days[len(trend.Result.Days)-1]
	if len(trend.Result.Days) != 30 || last.Views != 4 || trend.Result.Source != "real users" || len(trend.Result.Series) != 2 {
		t.Errorf("trend %+v", trend.Result)
	}
	var dist struct {
		Result struct {
			Views     int
			Ratings   map[string]struct{ Views int }
			Histogram []struct{ Views int }
		}
	}
	e.do("GET", w+"/distribution?metric=lcp&group=Products", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &dist)
	if r := dist.Result; r.Views != 2 || r.Ratings["good"].Views != 1 || r.Ratings["poor"].Views != 1 {
		t.Errorf("distribution of the group %+v", r)
	}
	e.do("GET", w+"/distribution?metric=lcp&page="+pages[0].ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &dist)
	if dist.Result.Views != 1 {
		t.Errorf("the monitored page with a query string has %d views, want 1", dist.Result.Views)
	}
	var seg struct {
		Result struct {
			By   string
			List []struct {
				Key   string
				Views int
			}
		}
	}
	e.do("GET", w+"/segments?metric=cls&by=group&device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &seg)
	if len(seg.Result.List) != 1 || seg.Result.List[0].Key != "Products" || seg.Result.List[0].Views != 2 {
		t.Errorf("segments %+v", seg.Result)
	}
	var attr struct {
		Result struct {
			SlowViews int
			Elements  []struct {
				Element, URL string
				SlowViews    int
				Mean         float64
				Parts        map[string]float64
			}
		}
	}
	e.do("GET", w+"/attributions?metric=lcp", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &attr)
	if len(attr.Result.Elements) != 2 || attr.Result.Elements[0].Element != "h1" || attr.Result.SlowViews != 1 {
		t.Errorf("attributions %+v", attr.Result)
	}
	for _, el := range attr.Result.Elements {
		if el.Element == "img#hero" && (el.URL != "https://example.com/hero.jpg" || el.Parts["resourceLoadDuration"] != 1500) {
			t.Errorf("hero %+v: the URL without its query, the phases' means", el)
		}
	}

	var inp struct {
		Result struct {
			Targets, Scripts, Entities []struct {
				Target, Entity, URL, Function string
				SlowViews                     int
				Parts                         map[string]float64
			}
		}
	}
	e.do("GET", w+"/attributions?metric=inp&device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &inp)
	if r := inp.Result; len(r.Targets) != 1 || r.Targets[0].Target != "button#buy" || len(r.Scripts) != 2 ||
		r.Scripts[0].URL != "https://www.googletagmanager.com/gtm.js" || r.Scripts[0].Entity != "Google Tag Manager" || r.Scripts[0].Function != "onBuy" ||
		r.Scripts[0].Parts["duration"] != 280 || len(r.Entities) != 2 || r.Entities[0].Entity != "Google Tag Manager" || r.Entities[1].Entity != "first party" {
		t.Errorf("INP attributions %+v", r)
	}
	for _, q := range []string{
		"/trend", "/trend?metric=nope", "/trend?metric=lcp&device=phone", "/trend?metric=lcp&by=colour",
		"/trend?metric=lcp&percentile=100", "/trend?metric=lcp&date=20261301-20261302", "/trend?metric=lcp&devise=mobile",
		"/distribution?metric=lcp&by=device", "/segments?metric=lcp", "/trend?metric=lcp&group=Nonexistent",
		"/attributions?metric=fcp", "/attributions?metric=lcp&limit=0", "/attributions?metric=lcp&os=ios",
		"/attributions?metric=inp&os=ios",
	} {
		res := e.do("GET", w+q, apitest.ViewerKey, nil).Want(t, 400)
		if p := res.Problem(t); len(p.Errors) == 0 {
			t.Errorf("%s: the problem names no parameter: %s", q, res.Body)
		}
	}
	// A filter the targets keep and the scripts do not: the targets answer, the scripts and
	// entities are left out and said so.
	var byBrowser struct {
		Result struct {
			Targets []struct{ Target string }
			Scripts []struct{ URL string }
			LeftOut map[string]string `json:"leftOut"`
		}
	}
	e.do("GET", w+"/attributions?metric=inp&browser=chrome", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &byBrowser)
	if r := byBrowser.Result; len(r.Scripts) != 0 || r.LeftOut["scripts"] == "" || r.LeftOut["entities"] == "" || len(r.LeftOut) != 2 {
		t.Errorf("INP attributions by browser: %+v, want the scripts and entities left out and said so", r)
	}
	e.do("GET", w+"/trend?metric=lcp&page=nosuchpage0", apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	var other website
	e.do("POST", "/account/websites", apitest.OtherKey, map[string]string{"domain": "globex.example"}).Want(t, 201).Decode(t, &other)
	e.do("GET", w+"/trend?metric=lcp", apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", "/"+other.ID+"/field-testing/trend?metric=lcp&page="+pages[0].ID, apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", w+"/settings", apitest.OtherKey, nil).Want(t, 404).Problem(t)

	// Settings: admins only; refused values change nothing.
	e.do("PUT", w+"/settings", apitest.ViewerKey, map[string]any{"sampleRate": 0.5}).Want(t, http.StatusForbidden).Problem(t)
	for _, bad := range []string{`{"sampleRate":0.3}`, `{"groups":[{"name":"","pattern":"/"}]}`, `{"groups":[{"name":"x","pattern":"x"}]}`} {
		e.do("PUT", w+"/settings", apitest.AdminKey, bad).Want(t, 422).Problem(t)
	}
	e.do("PUT", w+"/settings", apitest.AdminKey, `{"sampleRate":"half"}`).Want(t, 400).Problem(t)
	e.do("GET", w+"/settings", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &settings)
	if len(settings.Groups) != 1 || settings.SampleRate != 1 {
		t.Errorf("settings after refusals %+v", settings)
	}
	res := e.do("PUT", w+"/settings", apitest.AdminKey, map[string]any{"sampleRate": 0.25, "excludeLabAgents": true,
		"groups": []any{map[string]any{"id": 1, "name": "Products", "pattern": "/p/*"}}}).Want(t, 200)
	if !strings.Contains(string(res.Body), `"sampleRate":0.25`) || !strings.Contains(string(res.Body), `"id":1`) {
		t.Errorf("settings %s", res.Body)
	}
}
