package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestDiagnostics: a day's diagnostics come with the URLs of their images, which serve them
// with the key, and the run's HAR; a day without diagnostics, an unknown day, another
// account's page and an unknown image answer 404, bad input 400.
func TestDiagnostics(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	ctx := context.Background()
	key := f.desktopToday(t, e, f.home).ReportKey
	frame := []byte{0xff, 0xd8, 0xff, 0xe0, 'f', 'r', 'a', 'm', 'e'}
	const image = "0123456789abcdef.jpg"
	lcp := 812.5
	d := model.Diagnostics{
		URL: "https://example.com/", FinalURL: "https://example.com/", LighthouseVersion: "13.5.0", FetchTime: f.today,
		Filmstrip:       []model.Frame{{Time: 300, Image: image}, {Time: 600, Image: image}},
		FinalScreenshot: &model.Frame{Time: 812, Image: image},
		Marks:           model.Marks{LCP: &lcp},
		Requests: []model.Request{{URL: "https://example.com/", Start: 0, End: 120, Wait: &lcp, TransferSize: 12345, ResourceSize: 54321,
			Type: "Document", Status: 200, Document: true, Entity: "example.com"}},
		LCP:        &model.LCP{Time: lcp, Selector: "body > img", Phases: model.LCPPhases{TTFB: 100, RenderDelay: 712.5}},
		Shifts:     []model.LayoutShift{{Time: 500, Score: 0.12, Causes: []model.ShiftCause{{Kind: model.ShiftUnsizedImage, URL: "https://example.com/a.jpg"}}}},
		MainThread: []model.WorkCategory{{Category: "scriptEvaluation", Label: "Script Evaluation", Duration: 300}},
		// Kept for causes, not answered.
		Scripts: []model.ScriptTime{{URL: "https://example.com/app.js", MainThread: 300}},
		// No long tasks or third parties: stored as null, answered as [].
	}
	body, _ := json.Marshal(d)
	har := []byte(`{"log":{"version":"1.2","creator":{"name":"openvitals","version":"1"},"pages":[],"entries":[]}}`)
	e.putGzipped(artifact.DiagnosticsKey(key), body)
	e.putGzipped(artifact.HARKey(key), har)
	if err := e.objects.Put(ctx, artifact.ImageKey(key, image), frame, "image/jpeg"); err != nil {
		t.Fatal(err)
	}

	base := "/" + f.site.ID + "/pages/" + f.home.ID + "/diagnostics"
	var got struct {
		Date, Device, HAR string
		Diagnostics       model.Diagnostics
	}
	for _, q := range []string{"?device=desktop", "?device=desktop&date=" + f.today.Format("2006-01-02")} {
		e.do("GET", base+q, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
		if got.Date != f.today.Format("2006-01-02") || got.Device != "desktop" || got.Diagnostics.LCP == nil ||
			got.Diagnostics.Requests[0].TransferSize != 12345 || len(got.Diagnostics.Filmstrip) != 2 ||
			got.Diagnostics.LongTasks == nil || got.Diagnostics.ThirdParties == nil || got.Diagnostics.Scripts != nil {
			t.Fatalf("diagnostics %+v", got)
		}
	}
	for _, fr := range append(got.Diagnostics.Filmstrip, *got.Diagnostics.FinalScreenshot) {
		if !strings.HasPrefix(fr.URL, base+"/images/"+image+"?") {
			t.Fatalf("frame URL %q", fr.URL)
		}
		res := e.do("GET", fr.URL, apitest.ViewerKey, nil).Want(t, 200)
		if !bytes.Equal(res.Body, frame) || res.Header.Get("Content-Type") != "image/jpeg" {
			t.Errorf("image: %q %s", res.Body, res.Header.Get("Content-Type"))
		}
		e.do("GET", fr.URL, "", nil).Want(t, 401)
		e.do("GET", fr.URL, apitest.OtherKey, nil).Want(t, 404).Problem(t)
	}
	res := e.do("GET", got.HAR, apitest.ViewerKey, nil).Want(t, 200)
	if !bytes.Equal(res.Body, har) || !strings.Contains(res.Header.Get("Content-Disposition"), ".har") {
		t.Errorf("HAR %s, %s", res.Body, res.Header.Get("Content-Disposition"))
	}
	req := httptest.NewRequest("GET", got.HAR, nil)
	req.Header.Set("Authorization", "Bearer "+apitest.ViewerKey)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder() // not e.send: the contract checker reads bodies as sent, plain
	e.handler.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(rec.Body.Bytes(), awstest.Gzipped(t, har)) {
		t.Errorf("HAR to a gzip client: %d %v", rec.Code, rec.Header())
	}

	// A HAR stored before redaction existed, under its old key, is never served.
	if _, err := e.objects.DeletePrefix(ctx, artifact.HARKey(key)); err != nil {
		t.Fatal(err)
	}
	e.putGzipped(strings.TrimSuffix(key, ".json.gz")+".har.gz", har)
	if p := e.do("GET", got.HAR, apitest.ViewerKey, nil).Want(t, 404).Problem(t); !strings.Contains(p.Detail, "before credentials were redacted") {
		t.Errorf("a HAR of before redaction: %q", p.Detail)
	}

	yesterday := "&date=" + f.today.AddDate(0, 0, -1).Format("2006-01-02")
	for _, path := range []string{base + "?device=desktop" + yesterday, base + "/har?device=desktop" + yesterday,
		base + "/images/" + image + "?device=desktop" + yesterday, base + "?device=desktop&date=2001-01-01",
		base + "/images/fedcba9876543210.jpg?device=desktop", base + "/images/..%2Freport.json.gz?device=desktop",
		base + "?device=mobile&date=2001-01-01", "/" + f.site.ID + "/pages/nosuchpage/diagnostics?device=desktop"} {
		e.do("GET", path, apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	}
	e.do("GET", base+"?device=desktop", apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", base+"?device=tablet", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "device")
	e.do("GET", base+"?device=desktop&date=2026-13-45", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "date")
	e.do("GET", base+"/har?device=desktop&date=x", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "date")
}
