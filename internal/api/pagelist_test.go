package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWriteLargeGzipsWhenAccepted(t *testing.T) {
	large := []byte(`{"result":{"list":[` + strings.Repeat(`{"fcp":912,"lcp":1843,"cls":0.0213},`, 10000) + `{}]}}`)
	for _, tc := range []struct {
		name, accept string
		body         []byte
		gzipped      bool
	}{
		{"large, gzip accepted", "gzip, deflate, br", large, true},
		{"large, gzip with a weight", "br;q=1.0, gzip;q=0.8", large, true},
		{"large, gzip refused", "gzip;q=0, br", large, false},
		{"large, nothing accepted", "", large, false},
		{"small", "gzip", []byte(`{"result":{"list":[]}}`), false},
	} {
		req := httptest.NewRequest("GET", "/w/pages", nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		rec := httptest.NewRecorder()
		if err := writeLarge(rec, req, tc.body); err != nil {
			t.Fatal(err)
		}
		got := rec.Body.Bytes()
		if enc := rec.Header().Get("Content-Encoding"); (enc == "gzip") != tc.gzipped {
			t.Errorf("%s: Content-Encoding %q", tc.name, enc)
		}
		if tc.gzipped {
			if len(got) > len(tc.body)/5 {
				t.Errorf("%s: %d bytes gzipped from %d", tc.name, len(got), len(tc.body))
			}
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, tc.body) {
			t.Errorf("%s: the body changed", tc.name)
		}
		if rec.Header().Get("Vary") != "Accept-Encoding" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: headers %v", tc.name, rec.Header())
		}
	}
}
