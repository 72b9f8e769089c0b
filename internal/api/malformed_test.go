package api_test

import (
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// nastyBodies are request bodies no endpoint may answer with a 5xx or act on.
var nastyBodies = []string{
	``, ` `, `null`, `true`, `0`, `"x"`, `[]`, `{}`, `[null]`, `{"":""}`,
	`{`, `}`, `[`, `{"a":}`, `{"url":"/a",}`, `{'url':'/a'}`, "\xef\xbb\xbf{}",
	strings.Repeat("[", 100000), strings.Repeat(`{"a":`, 20000),
	`{"value":1e999999}`, `{"value":-1e999999}`, `{"value":123456789012345678901234567890e400}`,
	`[{"url":"/\u0000"}]`, `[{"url":"/\ud800"}]`, "[{\"url\":\"/\xc3\x28\"}]",
	`{"alias":"\u202e\u0000"}`, `{"domain":"\u0000"}`, `{"metric":"lcp\u0000"}`,
	`[{"url":"/` + strings.Repeat("é", 5000) + `"}]`,
	`{"steps":[{"type":"click","target":"` + strings.Repeat(`\"`, 3000) + `"}]}`,
	`{"steps":` + strings.Repeat(`[`, 500) + strings.Repeat(`]`, 500) + `}`,
	`{"domain":"example.com","domain":"example.org"}`,
	"\x00\x01\x02\x03", "\xff\xfe\xfd",
}

func TestMalformedBodies(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	p := e.createPages(site.ID, "/")[0]
	var b budget
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201).Decode(t, &b)
	var ms multistepTest
	e.do("POST", "/"+site.ID+"/multistep", apitest.AdminKey, `{"alias":"a","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).Want(t, 201).Decode(t, &ms)

	snapshot := func() string {
		var out strings.Builder
		for _, path := range []string{"/websites", "/" + site.ID + "/settings/pages", "/" + site.ID + "/budgets", "/" + site.ID + "/multistep"} {
			out.Write(e.do("GET", path, apitest.AdminKey, nil).Want(t, 200).Body)
		}
		return out.String()
	}
	before := snapshot()

	targets := []struct{ method, path string }{
		{"POST", "/account/websites"},
		{"POST", "/" + site.ID + "/settings/pages"},
		{"PUT", "/" + site.ID + "/settings/" + p.ID},
		{"POST", "/" + site.ID + "/budgets"},
		{"PUT", "/" + site.ID + "/budgets/" + b.ID},
		{"POST", "/" + site.ID + "/multistep"},
		{"PUT", "/" + site.ID + "/multistep/" + ms.ID},
	}
	for _, target := range targets {
		for _, body := range nastyBodies {
			res := e.do(target.method, target.path, apitest.AdminKey, body)
			if res.Status < 400 || res.Status >= 500 {
				t.Errorf("%s %s with %.40q: %d %s", target.method, target.path, body, res.Status, res.Body)
			}
		}
	}
	if after := snapshot(); after != before {
		t.Errorf("malformed requests changed stored data:\nbefore %s\nafter  %s", before, after)
	}
}

// FuzzCreatePages feeds arbitrary bodies to the pages endpoint: never a 5xx, and whatever is
// refused leaves the stored pages as they were. Run with `go test -fuzz FuzzCreatePages`.
func FuzzCreatePages(f *testing.F) {
	for _, b := range nastyBodies {
		f.Add(b)
	}
	f.Add(`[{"url":"/a","alias":"A"}]`)
	e := newTestEnv(f)
	path := "/" + e.createWebsite("example.com").ID + "/settings/pages"
	f.Fuzz(func(t *testing.T, body string) {
		e.t = t
		before := string(e.do("GET", path, apitest.AdminKey, nil).Want(t, 200).Body)
		res := e.do("POST", path, apitest.AdminKey, body)
		if res.Status >= 500 {
			t.Fatalf("%q: %d %s", body, res.Status, res.Body)
		}
		if res.Status >= 400 {
			if after := string(e.do("GET", path, apitest.AdminKey, nil).Body); after != before {
				t.Fatalf("refused body %q changed the pages", body)
			}
		}
	})
}
