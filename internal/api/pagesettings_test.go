package api_test

import (
	"github.com/openvitals/openvitals/internal/testing/apitest"

	"fmt"
	"strings"
	"testing"
)

func TestPages(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	base := "/" + site.ID + "/settings/"

	var created []page
	e.do("POST", base+"pages", apitest.AdminKey, []map[string]string{
		{"url": "/", "alias": "Home"},
		{"url": "/pricing"},
		{"url": "/search?q=shoes", "alias": "Search ✓"},
	}).Want(t, 200).Decode(t, &created)
	want := []page{{URL: "/", Alias: "Home"}, {URL: "/pricing", Alias: "/pricing"}, {URL: "/search?q=shoes", Alias: "Search ✓"}}
	if len(created) != len(want) {
		t.Fatalf("created %+v", created)
	}
	for i := range want {
		want[i].ID = created[i].ID
		if created[i] != want[i] || created[i].ID == "" {
			t.Errorf("page %d: %+v, want %+v with an id (alias defaults to the url)", i, created[i], want[i])
		}
	}
	got := apitest.List[page](t, e.do("GET", base+"pages", apitest.ViewerKey, nil).Want(t, 200))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list %+v, want %+v in the order given", got, want)
	}

	// The interface does not mark adding pages (admin): a viewer key may add them.
	e.do("POST", base+"pages", apitest.ViewerKey, []map[string]string{{"url": "/blog"}}).Want(t, 200)

	// A url already monitored refuses the whole call: nothing of it is written.
	e.do("POST", base+"pages", apitest.AdminKey, []map[string]string{{"url": "/new"}, {"url": "/pricing"}}).Want(t, 409).Problem(t, "[1].url")
	e.do("POST", base+"pages", apitest.AdminKey, []map[string]string{{"url": "/a"}, {"url": "/a"}}).Want(t, 422).Problem(t, "[1].url")
	if got := apitest.List[page](t, e.do("GET", base+"pages", apitest.AdminKey, nil)); len(got) != 4 {
		t.Errorf("after refused calls, %d pages, want 4: %+v", len(got), got)
	}

	// Edit: alias alone, url alone; a url taken by another page is a conflict.
	home := created[0]
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{"alias": "Start"}).Want(t, 204)
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{"url": "/start"}).Want(t, 204)
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{"url": "/pricing"}).Want(t, 409).Problem(t, "url")
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{}).Want(t, 422).Problem(t, "body")
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{"url": "start"}).Want(t, 422).Problem(t, "url")
	e.do("PUT", base+home.ID, apitest.ViewerKey, map[string]string{"alias": "x"}).Want(t, 403)
	e.do("PUT", base+"nosuchpage00", apitest.AdminKey, map[string]string{"alias": "x"}).Want(t, 404).Problem(t)
	got = apitest.List[page](t, e.do("GET", base+"pages", apitest.AdminKey, nil))
	if got[0] != (page{ID: home.ID, URL: "/start", Alias: "Start"}) {
		t.Errorf("edited page is %+v", got[0])
	}
	// The old url is free again.
	e.do("POST", base+"pages", apitest.AdminKey, []map[string]string{{"url": "/"}}).Want(t, 200)

	// Delete: at once, for admins only, and gone from every read.
	e.do("DELETE", base+home.ID, apitest.ViewerKey, nil).Want(t, 403)
	e.deleted(t, base+home.ID)
	e.do("PUT", base+home.ID, apitest.AdminKey, map[string]string{"alias": "x"}).Want(t, 404)
	for _, p := range apitest.List[page](t, e.do("GET", base+"pages", apitest.AdminKey, nil)) {
		if p.ID == home.ID {
			t.Errorf("deleted page still listed: %+v", p)
		}
	}
}

func TestPagesLimits(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/settings/pages"
	pages := func(n int, last string) []map[string]string {
		out := make([]map[string]string, n)
		for i := range out {
			out[i] = map[string]string{"url": fmt.Sprintf("/p/%d", i)}
		}
		if last != "" {
			out[n-1]["url"] = last
		}
		return out
	}
	e.do("POST", path, apitest.AdminKey, pages(101, "")).Want(t, 422).Problem(t, "body")
	e.do("POST", path, apitest.AdminKey, []map[string]string{}).Want(t, 422).Problem(t, "body")
	e.do("POST", path, apitest.AdminKey, "null").Want(t, 400).Problem(t)
	// 100 pages whose last is invalid: all or nothing.
	e.do("POST", path, apitest.AdminKey, pages(100, "no-slash")).Want(t, 422).Problem(t, "[99].url")
	if got := apitest.List[page](t, e.do("GET", path, apitest.AdminKey, nil)); len(got) != 0 {
		t.Fatalf("a refused call wrote %d pages", len(got))
	}
	created := e.createPages(site.ID, urls(pages(100, ""))...)
	if len(created) != 100 {
		t.Fatalf("created %d pages, want 100", len(created))
	}
	if got := apitest.List[page](t, e.do("GET", path, apitest.AdminKey, nil)); len(got) != 100 || got[99].URL != "/p/99" {
		t.Fatalf("listed %d pages", len(got))
	}
	// 100 more whose last clashes with a stored page: none of them is written.
	more := pages(100, "/p/5")
	for i := range more[:99] {
		more[i]["url"] = fmt.Sprintf("/q/%d", i)
	}
	e.do("POST", path, apitest.AdminKey, more).Want(t, 409).Problem(t, "[99].url")
	if got := apitest.List[page](t, e.do("GET", path, apitest.AdminKey, nil)); len(got) != 100 {
		t.Fatalf("a refused call changed the page count to %d", len(got))
	}
}

func urls(in []map[string]string) []string {
	out := make([]string, len(in))
	for i, p := range in {
		out[i] = p["url"]
	}
	return out
}

func TestPageValidation(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/settings/pages"
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"absolute url", `[{"url":"https://example.com/"}]`, 422, "[0].url"},
		{"no slash", `[{"url":"pricing"}]`, 422, "[0].url"},
		{"scheme relative", `[{"url":"//evil.example/x"}]`, 422, "[0].url"},
		{"fragment", `[{"url":"/a#b"}]`, 422, "[0].url"},
		{"space", `[{"url":"/a b"}]`, 422, "[0].url"},
		{"newline", `[{"url":"/a\nb"}]`, 422, "[0].url"},
		{"missing url", `[{"alias":"x"}]`, 422, "[0].url"},
		{"long url", `[{"url":"/` + strings.Repeat("a", 2048) + `"}]`, 422, "[0].url"},
		{"control alias", `[{"url":"/a","alias":"\u001b[31m"}]`, 422, "[0].alias"},
		{"second bad", `[{"url":"/ok"},{"url":"bad"}]`, 422, "[1].url"},
		{"object not array", `{"url":"/a"}`, 400, ""},
		{"number url", `[{"url":1}]`, 400, "url"},
		{"unknown field", `[{"url":"/a","id":"x"}]`, 400, "id"},
		{"nested garbage", `[[[[]]]]`, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.do("POST", path, apitest.AdminKey, tc.body).Want(t, tc.status)
			if tc.field != "" {
				res.Problem(t, tc.field)
			} else {
				res.Problem(t)
			}
		})
	}
	if got := apitest.List[page](t, e.do("GET", path, apitest.AdminKey, nil)); len(got) != 0 {
		t.Fatalf("refused requests wrote %+v", got)
	}
}
