package artifact_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

func gunzip(t *testing.T, gz []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeys: the keys are those earlier versions wrote, so that what they stored still reads.
func TestKeys(t *testing.T) {
	report := artifact.PageReportKey("acc", "ws", "pg", "20261126", "mobile")
	for got, want := range map[string]string{
		report:                          "acc/ws/pages/pg/lighthouse/20261126-mobile.json.gz",
		artifact.HTMLKey(report):        "acc/ws/pages/pg/lighthouse/20261126-mobile.html.gz",
		artifact.DiagnosticsKey(report): "acc/ws/pages/pg/lighthouse/20261126-mobile.diagnostics.json.gz",
		artifact.HARKey(report):         "acc/ws/pages/pg/lighthouse/20261126-mobile.redacted.har.gz",
		artifact.ImageKey(report, "0123456789abcdef.jpg"):             "acc/ws/pages/pg/lighthouse/20261126-mobile.images/0123456789abcdef.jpg",
		artifact.SeriesReportKey("acc", "ws", "ts_1", "tt_2"):         "acc/ws/testseries/ts_1/tt_2.json.gz",
		artifact.ExperimentReportKey("acc", "ws", "exp_1", "control"): "acc/ws/experiments/exp_1-control.json.gz",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
}

// TestPutAndRead: an audit's output stored once reads back piece by piece, gzipped where it
// is a document (as earlier versions stored it: a plain gzip reader opens it), the images as
// they are; a copy reads the same; what was never stored, or a name that is not an image's,
// is model.ErrNotFound.
func TestPutAndRead(t *testing.T) {
	ctx := context.Background()
	bucket := awstest.Bucket(t)
	s := artifact.New(bucket)
	key := artifact.PageReportKey("acc", "ws", "pg", "20261126", "desktop")
	lcp := 900.0
	d := model.Diagnostics{URL: "https://example.com/", Marks: model.Marks{LCP: &lcp},
		Filmstrip: []model.Frame{{Time: 0, Image: "0123456789abcdef.jpg"}}, Scripts: []model.ScriptTime{{URL: "https://example.com/a.js", MainThread: 120}}}
	out := artifact.Output{Report: []byte(`{"lighthouseVersion":"13.5.0"}`), HTML: []byte("<html>report</html>"), Diagnostics: &d,
		Images: []model.Image{{Name: "0123456789abcdef.jpg", ContentType: "image/jpeg", Data: []byte{0xff, 0xd8, 1, 2}}}, HAR: []byte(`{"log":{}}`)}
	if err := s.Put(ctx, key, out); err != nil {
		t.Fatal(err)
	}
	// As stored: gzip a plain reader opens, at the keys of earlier versions.
	raw, err := bucket.Get(ctx, artifact.DiagnosticsKey(key))
	if err != nil {
		t.Fatal(err)
	}
	var stored model.Diagnostics
	if err := json.Unmarshal(gunzip(t, raw), &stored); err != nil || stored.URL != d.URL {
		t.Fatalf("stored diagnostics %+v, %v", stored, err)
	}
	if raw, err := bucket.Get(ctx, key); err != nil || !bytes.Equal(gunzip(t, raw), out.Report) {
		t.Fatalf("stored report: %v", err)
	}

	for _, k := range []string{key, artifact.PageReportKey("acc", "ws", "pg", "demo-v2", "desktop")} {
		if k != key {
			if err := s.Copy(ctx, key, k); err != nil {
				t.Fatal(err)
			}
		}
		for name, read := range map[string]func() (artifact.Document, error){
			"report": func() (artifact.Document, error) { return s.Report(ctx, k) },
			"html":   func() (artifact.Document, error) { return s.HTML(ctx, artifact.HTMLKey(k)) },
			"har":    func() (artifact.Document, error) { return s.HAR(ctx, k) },
		} {
			doc, err := read()
			if err != nil {
				t.Fatalf("%s of %s: %v", name, k, err)
			}
			plain, err := doc.Plain()
			want := map[string][]byte{"report": out.Report, "html": out.HTML, "har": out.HAR}[name]
			if err != nil || !bytes.Equal(plain, want) || !bytes.Equal(gunzip(t, doc.Gzipped()), want) {
				t.Errorf("%s of %s: %q, %v", name, k, plain, err)
			}
		}
		got, err := s.Diagnostics(ctx, k)
		if err != nil || got.URL != d.URL || *got.Marks.LCP != lcp || !slices.Equal(got.Scripts, d.Scripts) {
			t.Errorf("diagnostics of %s: %+v, %v", k, got, err)
		}
		im, err := s.Image(ctx, k, "0123456789abcdef.jpg")
		if err != nil || im.ContentType != "image/jpeg" || !bytes.Equal(im.Data, out.Images[0].Data) {
			t.Errorf("image of %s: %+v, %v", k, im, err)
		}
	}

	other := artifact.PageReportKey("acc", "ws", "pg", "20261125", "desktop")
	if err := s.Put(ctx, other, artifact.Output{Report: out.Report, HTML: out.HTML}); err != nil { // a report without diagnostics
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"diagnostics of a report without":   second(s.Diagnostics(ctx, other)),
		"diagnostics of no report":          second(s.Diagnostics(ctx, "")),
		"HAR of a report without":           second(s.HAR(ctx, other)),
		"report never stored":               second(s.Report(ctx, artifact.PageReportKey("acc", "ws", "pg", "20261124", "desktop"))),
		"an image never stored":             second(s.Image(ctx, key, "fedcba9876543210.jpg")),
		"a name that is not an image's":     second(s.Image(ctx, key, "../20261126-desktop.json.gz")),
		"an image of an audit of no report": second(s.Image(ctx, "", "0123456789abcdef.jpg")),
	} {
		if !model.IsNotFound(err) {
			t.Errorf("%s: %v, want model.ErrNotFound", what, err)
		}
	}
	// A copy of a report without diagnostics copies the reports; one of a report that was
	// never stored fails.
	kept := artifact.PageReportKey("acc", "ws", "pg", "demo-v1", "desktop")
	if err := s.Copy(ctx, other, kept); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Report(ctx, kept); err != nil {
		t.Errorf("the copy's report: %v", err)
	}
	if _, err := s.Diagnostics(ctx, kept); !model.IsNotFound(err) {
		t.Errorf("the copy's diagnostics: %v, want none", err)
	}
	if err := s.Copy(ctx, artifact.PageReportKey("acc", "ws", "pg", "20261124", "desktop"), kept); err == nil {
		t.Error("copying a report never stored succeeded")
	}
}

func second[T any](_ T, err error) error { return err }

// TestPutReplaces: a second audit at the same key (the day's rerun, a retry) replaces the
// first's whole output: the first's images it does not name go, and an output without
// diagnostics leaves none of the earlier ones (diagnostics, HAR, images) beside its report;
// a copy onto a key replaces what is there the same way.
func TestPutReplaces(t *testing.T) {
	ctx := context.Background()
	bucket := awstest.Bucket(t)
	s := artifact.New(bucket)
	key := artifact.PageReportKey("acc", "ws", "pg", "20261126", "mobile")
	output := func(images ...string) artifact.Output {
		d := model.Diagnostics{URL: "https://example.com/"}
		out := artifact.Output{Report: []byte(`{}`), HTML: []byte("<html></html>"), Diagnostics: &d, HAR: []byte(`{"log":{}}`)}
		for _, name := range images {
			d.Filmstrip = append(d.Filmstrip, model.Frame{Image: name})
			out.Images = append(out.Images, model.Image{Name: name, ContentType: "image/jpeg", Data: []byte(name)})
		}
		return out
	}
	stored := func(k string) []string {
		t.Helper()
		keys, err := bucket.Keys(ctx, artifact.ImageKey(k, ""))
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if err := s.Put(ctx, key, output("aaaaaaaaaaaaaaaa.jpg", "bbbbbbbbbbbbbbbb.jpg")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, key, output("bbbbbbbbbbbbbbbb.jpg", "cccccccccccccccc.jpg")); err != nil {
		t.Fatal(err)
	}
	want := []string{artifact.ImageKey(key, "bbbbbbbbbbbbbbbb.jpg"), artifact.ImageKey(key, "cccccccccccccccc.jpg")}
	if got := stored(key); !slices.Equal(got, want) {
		t.Errorf("images after the second audit %v, want %v", got, want)
	}

	// A copy onto a key holding other images leaves only the copied ones.
	kept := artifact.PageReportKey("acc", "ws", "pg", "demo-v1", "mobile")
	if err := s.Put(ctx, kept, output("dddddddddddddddd.jpg")); err != nil {
		t.Fatal(err)
	}
	if err := s.Copy(ctx, key, kept); err != nil {
		t.Fatal(err)
	}
	if got := stored(kept); len(got) != 2 || slices.Contains(got, artifact.ImageKey(kept, "dddddddddddddddd.jpg")) {
		t.Errorf("images of the copy %v, want the two copied", got)
	}

	// An audit that kept no diagnostics leaves none of the earlier audit's beside its report.
	if err := s.Put(ctx, key, artifact.Output{Report: []byte(`{}`), HTML: []byte("<html></html>")}); err != nil {
		t.Fatal(err)
	}
	if got := stored(key); len(got) != 0 {
		t.Errorf("images after an audit without diagnostics %v, want none", got)
	}
	if _, err := s.Diagnostics(ctx, key); !model.IsNotFound(err) {
		t.Errorf("diagnostics after an audit without: %v, want none", err)
	}
	if _, err := s.HAR(ctx, key); !model.IsNotFound(err) {
		t.Errorf("HAR after an audit without diagnostics: %v, want none", err)
	}
	if _, err := s.Report(ctx, key); err != nil {
		t.Errorf("the report: %v", err)
	}
}
