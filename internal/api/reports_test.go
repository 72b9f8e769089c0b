package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestReportLinks: a key of the account gets a short-lived link to the HTML report of a day's
// audit, which opens without a key, sandboxed; bad input is a problem, another account's page,
// another website's path, an unknown or expired token and a day without an HTML report open
// nothing.
func TestReportLinks(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	ctx := context.Background()
	// Today's desktop audit of the home page kept its HTML report; yesterday's did not.
	home := f.desktopToday(t, e, f.home)
	const html = "<!doctype html><title>Lighthouse Report</title><script>window.__LIGHTHOUSE_JSON__ = {};</script>"
	e.putGzipped(artifact.HTMLKey(home.ReportKey), []byte(html))

	base := "/" + f.site.ID + "/pages/" + f.home.ID + "/report-link"
	link := func(query, key string, status int) string {
		t.Helper()
		res := e.do("POST", base+query, key, nil).Want(t, status)
		if status != 201 {
			res.Problem(t)
			return ""
		}
		var out struct{ URL, Date, Device string }
		res.Decode(t, &out)
		if !strings.HasPrefix(out.URL, "/"+f.site.ID+"/lighthouse-report?token=") || out.Device != "desktop" {
			t.Fatalf("link %+v", out)
		}
		return out.URL
	}
	open := func(url string, status int) string {
		t.Helper()
		res := e.send(httptest.NewRequest("GET", url, nil)).Want(t, status)
		if status == 200 {
			if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox allow-scripts") || res.Header.Get("Cache-Control") != "private, no-store" {
				t.Errorf("report served with CSP %q, Cache-Control %q", csp, res.Header.Get("Cache-Control"))
			}
		}
		return string(res.Body)
	}

	latest := link("?device=desktop", apitest.ViewerKey, 201)
	if got := open(latest, 200); got != html {
		t.Errorf("the link opens %q, want the stored HTML report", got)
	}
	if got := open(link("?device=desktop&date="+f.today.Format("2006-01-02"), apitest.AdminKey, 201), 200); got != html {
		t.Errorf("the day's link opens %q", got)
	}
	if got := open(link("?device=desktop&date="+model.Day(f.today.AddDate(0, 0, -1)), apitest.ViewerKey, 201), 404); !strings.Contains(got, "no HTML report") {
		t.Errorf("a day without an HTML report: %s", got)
	}

	link("?device=desktop&date=2026-13-45", apitest.ViewerKey, 400)
	link("?device=tablet", apitest.ViewerKey, 400)
	link("?device=desktop&date=2001-01-01", apitest.ViewerKey, 404)
	link("?device=desktop", apitest.OtherKey, 404)
	link("?device=desktop", "", 401)

	token := strings.TrimPrefix(latest, "/"+f.site.ID+"/lighthouse-report?token=")
	other := e.createWebsite("other.example")
	open("/"+other.ID+"/lighthouse-report?token="+token, 404)
	open("/"+f.site.ID+"/lighthouse-report?token="+strings.Repeat("A", len(token)), 404)
	open("/"+f.site.ID+"/lighthouse-report", 404)

	// An expired link opens nothing, even before DynamoDB removes it.
	expired := strings.Repeat("B", 32)
	if err := e.store.PutReportLink(ctx, sha256Hex(expired), model.ReportLink{Account: "acme", Website: f.site.ID,
		Key: artifact.HTMLKey(home.ReportKey), Expires: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	var p struct{ Detail string }
	if err := json.Unmarshal([]byte(open("/"+f.site.ID+"/lighthouse-report?token="+expired, 404)), &p); err != nil || !strings.Contains(p.Detail, "expired") {
		t.Errorf("expired link: %+v %v", p, err)
	}
}

// TestReportLinksEndWithTheirPage: a report link opens nothing from the moment its page, or
// its website, is deleted, though the purge has not yet removed the report.
func TestReportLinksEndWithTheirPage(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	link := func(p page) string {
		t.Helper()
		r := f.desktopToday(t, e, p)
		e.putGzipped(artifact.HTMLKey(r.ReportKey), []byte("<!doctype html><title>"+p.URL+"</title>"))
		var out struct{ URL string }
		e.do("POST", "/"+f.site.ID+"/pages/"+p.ID+"/report-link?device=desktop", apitest.ViewerKey, nil).Want(t, 201).Decode(t, &out)
		return out.URL
	}
	open := func(url string) int {
		t.Helper()
		return e.send(httptest.NewRequest("GET", url, nil)).Status
	}
	home, pricing := link(f.home), link(f.pricing)
	if open(home) != 200 || open(pricing) != 200 {
		t.Fatal("the links do not open")
	}
	e.do("DELETE", "/"+f.site.ID+"/settings/"+f.pricing.ID, apitest.AdminKey, nil).Want(t, 204)
	if got := open(pricing); got != 404 {
		t.Errorf("the link of a deleted page: %d, want 404", got)
	}
	if got := open(home); got != 200 {
		t.Errorf("the link of the page left: %d, want 200", got)
	}
	e.do("DELETE", "/"+f.site.ID, apitest.AdminKey, nil).Want(t, 204)
	if got := open(home); got != 404 {
		t.Errorf("the link of a deleted website: %d, want 404", got)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
