package browser

import (
	"testing"
	"time"
)

// DocumentTiming moves the proxy's share of a document load back where a direct load spends
// it: for http its resolution and connection out of the wait, for https its resolution out of
// the tunnel's connection; the first dial to the document's host is the document's.
func TestDocumentTiming(t *testing.T) {
	t0 := time.Now()
	dials := Dials{records: []dialRecord{
		{Target: "example.com:80", URL: "http://example.com/", Start: t0.Add(time.Second), Stats: dialStats{DNS: 9 * time.Millisecond, Connect: 9 * time.Millisecond}},
		{Target: "example.com:80", URL: "http://example.com/", Start: t0, Stats: dialStats{DNS: 12 * time.Millisecond, Connect: 20 * time.Millisecond}},
		{Target: "example.com:443", Start: t0, Stats: dialStats{DNS: 15 * time.Millisecond, Connect: 20 * time.Millisecond}},
		{Target: "other.example:80", URL: "http://other.example/", Start: t0, Stats: dialStats{DNS: 99 * time.Millisecond}},
	}}
	for _, tc := range []struct {
		name string
		in   DocumentPhases
		want Timing
	}{
		{"http", DocumentPhases{URL: "http://example.com/", Status: 200, Connect: 0.2, Wait: 100, Download: 5},
			Timing{DNS: 12, Connect: 20.2, Server: 68, Transfer: 5, Status: 200, URL: "http://example.com/"}},
		{"https", DocumentPhases{URL: "https://example.com/", Status: 200, Connect: 60, Wait: 40, Download: 3},
			Timing{DNS: 15, Connect: 45, Server: 40, Transfer: 3, Status: 200, URL: "https://example.com/"}},
		{"https over an open connection", DocumentPhases{URL: "https://example.com/", Status: 200, Wait: 40},
			Timing{Server: 40, Status: 200, URL: "https://example.com/"}},
		{"no dial of its host", DocumentPhases{URL: "http://elsewhere.example/", Status: 200, Wait: 40},
			Timing{Server: 40, Status: 200, URL: "http://elsewhere.example/"}},
	} {
		if got := DocumentTiming(tc.in, dials); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
