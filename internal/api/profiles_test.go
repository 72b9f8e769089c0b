package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/profile"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

type profileOut struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Default bool   `json:"default"`
	Pages   []struct {
		Page   string `json:"page"`
		Device string `json:"device"`
	} `json:"pages"`
	Headers []struct {
		Name string `json:"name"`
	} `json:"headers"`
	Cookies []struct {
		Name string `json:"name"`
	} `json:"cookies"`
	Origins   []string `json:"origins"`
	BasicAuth *struct {
		User string `json:"user"`
	} `json:"basicAuth"`
	Login []struct {
		Type   string `json:"type"`
		Target string `json:"target"`
		Value  string `json:"value"`
	} `json:"login"`
	Network struct {
		Preset string   `json:"preset"`
		RTTMs  *float64 `json:"rttMs"`
	} `json:"network"`
}

// TestProfiles: admins create, read, change and delete test profiles; secret values (header
// and cookie values, the password, typed values) are in no answer and sealed in the table;
// a change of what measures a page is annotated; bad input is 422 and changes nothing; a
// viewer reads but may not write (403); another account sees nothing (404).
func TestProfiles(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("example.com")
	pages := e.createPages(site.ID, "/", "/account")
	base := "/" + site.ID + "/profiles"
	const (
		headerSecret = "hdr-s3cret-value"
		cookieSecret = "cookie-s3cret-value"
		password     = "pw-s3cret-value"
		typed        = "typed-s3cret-value"
	)
	body := map[string]any{"name": "Signed in",
		"pages":     []map[string]string{{"page": pages[1].ID, "device": "desktop"}},
		"headers":   []map[string]string{{"name": "x-token", "value": headerSecret}},
		"cookies":   []map[string]string{{"name": "consent", "value": cookieSecret}},
		"basicAuth": map[string]string{"user": "ci", "password": password},
		"origins":   []string{"https://API.example.com:8443/"},
		"login": []map[string]any{{"type": "navigate", "target": "/login"}, {"type": "type", "target": "#password", "value": typed},
			{"type": "click", "target": "#go", "waitForNavigation": true}},
		"network": map[string]any{"preset": "mobileSlow4G", "rttMs": 300},
	}
	viewerPost := e.do("POST", base, apitest.ViewerKey, body).Want(t, 403)
	var p profileOut
	res := e.do("POST", base, apitest.AdminKey, body).Want(t, 201)
	res.Decode(t, &p)
	if p.Name != "Signed in" || len(p.Pages) != 1 || p.Pages[0].Page != pages[1].ID || len(p.Headers) != 1 || p.Headers[0].Name != "X-Token" ||
		p.BasicAuth == nil || p.BasicAuth.User != "ci" || len(p.Login) != 3 || p.Login[1].Value != "" || p.Network.Preset != "mobileSlow4G" ||
		p.Network.RTTMs == nil || *p.Network.RTTMs != 300 || len(p.Origins) != 1 || p.Origins[0] != "https://api.example.com:8443" {
		t.Fatalf("created %s", res.Body)
	}
	answers := [][]byte{viewerPost.Body, res.Body}
	answers = append(answers, e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200).Body, e.do("GET", base+"/"+p.ID, apitest.ViewerKey, nil).Want(t, 200).Body)

	// The secrets are sealed, and open to what they were sealed for.
	w := e.storedWebsite(site.ID)
	stored, err := e.store.Profile(ctx, w, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := profile.Open(ctx, credentialsKey, w, stored)
	if err != nil {
		t.Fatal(err)
	}
	if secrets.Headers["X-Token"] != headerSecret || secrets.Cookies["consent"] != cookieSecret || secrets.Password != password || secrets.Typed[1] != typed {
		t.Errorf("opened secrets %+v", secrets)
	}
	if login := profile.Login(stored, secrets); login[1].Value != typed || stored.Login[1].Value != "" {
		t.Errorf("login steps %+v, stored %+v", login, stored.Login)
	}

	// A change of the name alone keeps the secrets; a change of the headers alone keeps the others.
	answers = append(answers, e.do("PUT", base+"/"+p.ID, apitest.AdminKey, map[string]any{"name": "Signed in 2"}).Want(t, 200).Body)
	answers = append(answers, e.do("PUT", base+"/"+p.ID, apitest.AdminKey, map[string]any{"headers": []map[string]string{{"name": "X-Other", "value": headerSecret + "2"}}}).Want(t, 200).Body)
	stored, _ = e.store.Profile(ctx, w, p.ID)
	secrets, err = profile.Open(ctx, credentialsKey, w, stored)
	if err != nil || secrets.Headers["X-Other"] != headerSecret+"2" || secrets.Headers["X-Token"] != "" || secrets.Password != password || secrets.Typed[1] != typed || stored.Name != "Signed in 2" {
		t.Errorf("after updates: %+v %+v %v", stored, secrets, err)
	}
	e.do("PUT", base+"/"+p.ID, apitest.ViewerKey, map[string]any{"name": "x"}).Want(t, 403)

	for _, b := range answers {
		for _, secret := range []string{headerSecret, cookieSecret, password, typed} {
			if strings.Contains(string(b), secret) {
				t.Errorf("an answer shows a secret: %s", b)
			}
		}
	}
	for _, secret := range []string{headerSecret, cookieSecret, password, typed} {
		if strings.Contains(string(stored.Secrets), secret) {
			t.Errorf("the table holds %q in the clear", secret)
		}
	}

	// Bad input: 422 naming the fields, nothing changes.
	bad := e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Bad",
		"pages":   []map[string]string{{"page": "nope", "device": "tablet"}},
		"headers": []map[string]string{{"name": "Host", "value": "x"}, {"name": "X-A", "value": "a\r\nb"}},
		"cookies": []map[string]string{{"name": "a b", "value": "x"}},
		"network": map[string]any{"preset": "fast", "cpuSlowdown": 50}, "viewport": map[string]any{"width": 10, "height": 600},
		"login": []map[string]any{{"type": "jump"}},
		// Another site's origin (where the secrets would go), a path, credentials, a scheme.
		"origins": []string{"https://example.org", "https://api.example.com/x", "https://u:p@api.example.com", "ftp://example.com", "https://example.com", "https://example.com"},
	}).Want(t, 422)
	bad.Problem(t, "pages[0].device", "pages[0].page", "headers[0].name", "headers[1].value", "cookies[0].name", "network.preset",
		"network.cpuSlowdown", "viewport.width", "login[0].type", "origins[0]", "origins[1]", "origins[2]", "origins[3]", "origins[5]")
	// A page and device another profile measures.
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Twice", "pages": []map[string]string{{"page": pages[1].ID, "device": "desktop"}}}).
		Want(t, 422).Problem(t, "pages[0]")
	e.do("PUT", base+"/"+p.ID, apitest.AdminKey, map[string]any{}).Want(t, 422)
	if list := apitest.List[profileOut](t, e.do("GET", base, apitest.AdminKey, nil).Want(t, 200)); len(list) != 1 {
		t.Errorf("%d profiles after bad input, want 1", len(list))
	}

	// One default: a second default profile takes it over.
	var d1, d2 profileOut
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Slow", "default": true}).Want(t, 201).Decode(t, &d1)
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Slower", "default": true, "network": map[string]any{"preset": "mobileRegular3G"}}).Want(t, 201).Decode(t, &d2)
	profiles, err := e.store.Profiles(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := model.ProfileFor(profiles, pages[0].ID, "mobile"); !ok || got.ID != d2.ID {
		t.Errorf("the home page on mobile has profile %+v, want %s", got, d2.ID)
	}
	if got, _ := model.ProfileFor(profiles, pages[1].ID, "desktop"); got.ID != p.ID {
		t.Errorf("the account page on desktop has profile %s, want %s", got.ID, p.ID)
	}

	// Changes of what measures the pages are annotations.
	anns, _, err := e.store.Annotations(ctx, w, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var onPage, websiteWide int
	for _, a := range anns {
		if strings.Contains(a.Text, "profile") && len(a.Pages) == 1 && a.Pages[0] == pages[1].ID {
			onPage++
		}
		if strings.HasPrefix(a.Text, "Default test profile") && len(a.Pages) == 0 {
			websiteWide++
		}
	}
	// Created on the page, its headers changed; two defaults (the renaming changes nothing measured).
	if onPage != 2 || websiteWide < 2 {
		t.Errorf("annotations on the page %d (want 2), website-wide %d (want 2 or more): %+v", onPage, websiteWide, anns)
	}

	// Another account: 404 everywhere.
	e.do("GET", base, apitest.OtherKey, nil).Want(t, 404)
	e.do("GET", base+"/"+p.ID, apitest.OtherKey, nil).Want(t, 404)
	e.do("PUT", base+"/"+p.ID, apitest.OtherKey, map[string]any{"name": "x"}).Want(t, 404)
	e.do("DELETE", base+"/"+p.ID, apitest.OtherKey, nil).Want(t, 404)

	e.do("DELETE", base+"/"+p.ID, apitest.ViewerKey, nil).Want(t, 403)
	e.deleted(t, base+"/"+p.ID)
	e.do("GET", base+"/"+p.ID, apitest.AdminKey, nil).Want(t, 404)
}
