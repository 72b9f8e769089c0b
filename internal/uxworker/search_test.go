package uxworker

import "testing"

func TestSearchWindowAndPaths(t *testing.T) {
	from, to, err := searchWindow("20260301")
	if err != nil || from != "2026-02-15" || to != "2026-02-28" {
		t.Errorf("searchWindow = %s, %s, %v; want the 14 days 2026-02-15 to 2026-02-28", from, to, err)
	}
	for in, want := range map[string]string{
		"/": "/", "": "/", "/Pricing/": "/pricing", "/a/b//": "/a/b", "/a?x=1": "/a", "/a#top": "/a", "/A%20B": "/a%20b",
	} {
		if got := normalizedPath(in); got != want {
			t.Errorf("normalizedPath(%q) = %q, want %q", in, got, want)
		}
	}
	for host, want := range map[string]bool{"example.com": true, "www.example.com": true, "blog.example.com": false, "example.org": false} {
		if got := sameSite(host, "www.example.com"); got != want {
			t.Errorf("sameSite(%q, www.example.com) = %v", host, got)
		}
	}
}
