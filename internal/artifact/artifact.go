// Package artifact owns what a lab audit stores in the reports bucket: the median run's
// Lighthouse report (JSON and its HTML rendering) and what explains its load (the diagnostics,
// their images and the redacted HAR). It names the keys, writes every piece, reads every piece
// back as model types or as stored documents, and is the one place that compresses and
// decompresses them. The keys and formats are those of earlier versions, so that what they
// stored still reads.
package artifact

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
)

// Every artifact of an audit sits beside its report's key ("....json.gz"), under its page's,
// series' or website's prefix, so that a purge removes them with it and the bucket's expiry
// keeps them as long as the report.

// PageReportsPrefix is the key prefix of a page's daily reports (and what sits beside them):
// keys that begin with their day, so that retention deletes the days before a cutoff.
func PageReportsPrefix(account, website, page string) string {
	return blobstore.PagePrefix(account, website, page) + "lighthouse/"
}

// PageReportKey is the key of a page's report of a day (yyyymmdd) on a device.
func PageReportKey(account, website, page, day, device string) string {
	return PageReportsPrefix(account, website, page) + day + "-" + device + ".json.gz"
}

// SeriesReportKey is the key of a test series' test's report: under the website's prefix, so
// that it stays while the series does, whatever becomes of its pages. A test keeps its own
// report: a later audit the same day replaces the page's day's, not the test's.
func SeriesReportKey(account, website, series, test string) string {
	return SeriesReportsPrefix(account, website) + series + "/" + test + ".json.gz"
}

// SeriesReportsPrefix is the key prefix of every test series' reports of a website (and what
// sits beside them).
func SeriesReportsPrefix(account, website string) string {
	return blobstore.WebsitePrefix(account, website) + "testseries/"
}

// ExperimentReportKey is the report key an experiment's audit (audit: "control" or
// "experiment") keeps its diagnostics beside; nothing is stored at the key itself. Under the
// website's prefix, so they go with it.
func ExperimentReportKey(account, website, experiment, audit string) string {
	return ExperimentPrefix(account, website, experiment) + audit + ".json.gz"
}

// ExperimentPrefix is the key prefix of every object of an experiment (its audits'
// diagnostics, images and HARs).
func ExperimentPrefix(account, website, experiment string) string {
	return blobstore.WebsitePrefix(account, website) + "experiments/" + experiment + "-"
}

// HTMLKey is the key of the HTML rendering of the report stored at reportKey (a report link
// records it).
func HTMLKey(reportKey string) string { return base(reportKey) + ".html.gz" }

// DiagnosticsKey is the key of the diagnostics (model.Diagnostics as gzipped JSON) of the run
// whose report is stored at reportKey.
func DiagnosticsKey(reportKey string) string { return base(reportKey) + ".diagnostics.json.gz" }

// HARKey is the key of the gzipped, redacted HAR of the run whose report is stored at
// reportKey. HARs stored before the redaction rule existed (".har.gz", with the profiles'
// credentials in them) are under another key, so that nothing serves them again; they expire
// with the bucket's lifecycle, or go with their page or website.
func HARKey(reportKey string) string { return base(reportKey) + ".redacted.har.gz" }

// ImageKey is the key of the image named name of the run whose report is stored at reportKey
// (names are the diagnostics', unique within a run).
func ImageKey(reportKey, name string) string { return base(reportKey) + ".images/" + name }

func base(reportKey string) string { return strings.TrimSuffix(reportKey, ".json.gz") }

// Bucket keeps the artifacts; *blobstore.Bucket is one.
type Bucket interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) ([]byte, error)
	Keys(ctx context.Context, prefix string) ([]string, error)
	Delete(ctx context.Context, keys ...string) error
}

// Store writes and reads the artifacts of lab audits.
type Store struct {
	bucket Bucket
}

// New returns a Store over the reports' bucket.
func New(bucket Bucket) *Store { return &Store{bucket: bucket} }

// Output is what one audit stores beside its report's key; a piece left empty is not stored.
type Output struct {
	// Report is the median run's Lighthouse report (JSON) and HTML Lighthouse's rendering of
	// it; an experiment's audits store neither.
	Report, HTML []byte
	// Diagnostics explain the run's load; Images are the images they name, HAR its requests.
	Diagnostics *model.Diagnostics
	Images      []model.Image
	HAR         []byte
}

const gzipType = "application/gzip"

// Put stores an audit's output at reportKey, replacing whatever an earlier audit stored there
// (the day's second audit of a page, a retry): pieces this output lacks are deleted, and so
// are the earlier audit's images it does not name, so that the explanation beside a report is
// always its own load's and a day's reruns leave nothing behind. The diagnostics go last: a
// reader finding them finds their images and HAR.
func (s *Store) Put(ctx context.Context, reportKey string, o Output) error {
	put := func(key string, body []byte) error {
		if body == nil {
			return nil
		}
		return s.bucket.Put(ctx, key, gzipped(body), gzipType)
	}
	if err := put(reportKey, o.Report); err != nil {
		return err
	}
	if err := put(HTMLKey(reportKey), o.HTML); err != nil {
		return err
	}
	if o.Diagnostics == nil {
		return s.replaced(ctx, reportKey, nil, true)
	}
	names := map[string]bool{}
	for _, im := range o.Images {
		// Images are stored as they are: JPEG, PNG and WebP compress no further.
		if err := s.bucket.Put(ctx, ImageKey(reportKey, im.Name), im.Data, im.ContentType); err != nil {
			return err
		}
		names[im.Name] = true
	}
	if err := put(HARKey(reportKey), o.HAR); err != nil {
		return err
	}
	body, err := json.Marshal(o.Diagnostics)
	if err != nil {
		return err
	}
	if err := put(DiagnosticsKey(reportKey), body); err != nil {
		return err
	}
	return s.replaced(ctx, reportKey, names, o.HAR == nil)
}

// replaced deletes what an earlier output at reportKey left that the one just stored does not
// have: its images but those named in keep, its HAR when noHAR, and its diagnostics when keep
// is nil (the new output has none; deleted first, so that no reader follows them to pieces
// already gone).
func (s *Store) replaced(ctx context.Context, reportKey string, keep map[string]bool, noHAR bool) error {
	var stale []string
	if keep == nil {
		if err := s.bucket.Delete(ctx, DiagnosticsKey(reportKey)); err != nil {
			return err
		}
	}
	if noHAR {
		stale = append(stale, HARKey(reportKey))
	}
	images, err := s.bucket.Keys(ctx, ImageKey(reportKey, ""))
	if err != nil {
		return err
	}
	for _, k := range images {
		if !keep[strings.TrimPrefix(k, ImageKey(reportKey, ""))] {
			stale = append(stale, k)
		}
	}
	return s.bucket.Delete(ctx, stale...)
}

// Copy copies the output stored at from to the key to, replacing what is there as Put does:
// the report, its HTML, and the diagnostics with their images and HAR when the audit kept them
// (a keeper of a day's audit the next audit of the day would replace). As in Put, the
// diagnostics go last.
func (s *Store) Copy(ctx context.Context, from, to string) error {
	type object struct {
		from, to, contentType string
		optional              bool // absent from an audit that kept no diagnostics
	}
	copies := []object{{from, to, gzipType, false}, {HTMLKey(from), HTMLKey(to), gzipType, false}}
	images, err := s.bucket.Keys(ctx, ImageKey(from, ""))
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, k := range images {
		name := strings.TrimPrefix(k, ImageKey(from, ""))
		names[name] = true
		copies = append(copies, object{k, ImageKey(to, name), imageTypes[extension(k)], false})
	}
	copies = append(copies, object{HARKey(from), HARKey(to), gzipType, true}, object{DiagnosticsKey(from), DiagnosticsKey(to), gzipType, true})
	copied := map[string]bool{}
	for _, c := range copies {
		b, err := s.bucket.Get(ctx, c.from)
		if c.optional && errors.Is(err, blobstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := s.bucket.Put(ctx, c.to, b, c.contentType); err != nil {
			return err
		}
		copied[c.to] = true
	}
	if !copied[DiagnosticsKey(to)] {
		names = nil
	}
	return s.replaced(ctx, to, names, !copied[HARKey(to)])
}

// Document is a stored document (a report, an HTML report, a HAR) as stored: gzipped, which
// keeps a large one under a Lambda response's 6 MB when it is served as it is.
type Document struct {
	key string
	gz  []byte
}

// Gzipped is the document as stored.
func (d Document) Gzipped() []byte { return d.gz }

// Plain is the document decompressed, up to maxPlain.
func (d Document) Plain() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(d.gz))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.key, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxPlain))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.key, err)
	}
	return out, nil
}

// maxPlain bounds what a stored document decompresses to: a heavy page's report is a few MB,
// its diagnostics a few hundred KB.
const maxPlain = 64 << 20

// Report reads the Lighthouse report stored at reportKey.
func (s *Store) Report(ctx context.Context, reportKey string) (Document, error) {
	return s.document(ctx, reportKey)
}

// HTML reads the HTML report at htmlKey (HTMLKey of its report's key).
func (s *Store) HTML(ctx context.Context, htmlKey string) (Document, error) {
	return s.document(ctx, htmlKey)
}

// HAR reads the HAR of the run whose report is stored at reportKey.
func (s *Store) HAR(ctx context.Context, reportKey string) (Document, error) {
	if reportKey == "" {
		return Document{}, fmt.Errorf("HAR of an audit that kept no report: %w", model.ErrNotFound)
	}
	return s.document(ctx, HARKey(reportKey))
}

// document reads a gzipped object; a missing one (or none named) is model.ErrNotFound.
func (s *Store) document(ctx context.Context, key string) (Document, error) {
	if key == "" {
		return Document{}, fmt.Errorf("no stored document named: %w", model.ErrNotFound)
	}
	gz, err := s.bucket.Get(ctx, key)
	if errors.Is(err, blobstore.ErrNotFound) {
		return Document{}, fmt.Errorf("%w: %w", model.ErrNotFound, err)
	}
	if err != nil {
		return Document{}, err
	}
	return Document{key: key, gz: gz}, nil
}

// Diagnostics reads the diagnostics of the run whose report is stored at reportKey:
// model.ErrNotFound when the audit kept none (no report, or an audit from before diagnostics
// were kept).
func (s *Store) Diagnostics(ctx context.Context, reportKey string) (*model.Diagnostics, error) {
	if reportKey == "" {
		return nil, fmt.Errorf("diagnostics of an audit that kept no report: %w", model.ErrNotFound)
	}
	doc, err := s.document(ctx, DiagnosticsKey(reportKey))
	if err != nil {
		return nil, err
	}
	plain, err := doc.Plain()
	if err != nil {
		return nil, err
	}
	var d model.Diagnostics
	if err := json.Unmarshal(plain, &d); err != nil {
		return nil, fmt.Errorf("diagnostics %s: %w", doc.key, err)
	}
	return &d, nil
}

// imageName is how images are named (lighthouse names them): 16 hex digits of their hash and
// a type.
var imageName = regexp.MustCompile(`^[0-9a-f]{16}\.(jpg|png|webp)$`)

var imageTypes = map[string]string{"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp"}

// extension is a name's extension, without its dot.
func extension(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// Image reads the image named name of the run whose report is stored at reportKey:
// model.ErrNotFound when there is none, or name is not an image's name.
func (s *Store) Image(ctx context.Context, reportKey, name string) (model.Image, error) {
	if reportKey == "" || !imageName.MatchString(name) {
		return model.Image{}, fmt.Errorf("image %q: %w", name, model.ErrNotFound)
	}
	data, err := s.bucket.Get(ctx, ImageKey(reportKey, name))
	if errors.Is(err, blobstore.ErrNotFound) {
		return model.Image{}, fmt.Errorf("%w: %w", model.ErrNotFound, err)
	}
	if err != nil {
		return model.Image{}, err
	}
	return model.Image{Name: name, ContentType: imageTypes[extension(name)], Data: data}, nil
}

// gzipped compresses b (writing to memory cannot fail).
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
