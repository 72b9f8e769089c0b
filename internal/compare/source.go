package compare

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// Ref names an audit of a page on a device: a day's lab result (Day, yyyymmdd) or a test
// series' test (Test, its ID). Exactly one is set.
type Ref struct {
	Day  string
	Test string
}

// Loaded is a stored audit: what identifies it and what is compared.
type Loaded struct {
	Ref
	Audited   time.Time
	Runs      int
	ReportKey string
	// Method is the audit's measurement method (model.MethodOr read).
	Method string
	Audit
}

// Objects reads stored objects (the reports' bucket, where diagnostics are stored beside the
// reports); *blobstore.Bucket is one.
type Objects interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// ReadDiagnostics reads the diagnostics stored beside the report at reportKey: nil when the
// audit kept none (no report, or an audit from before diagnostics were kept).
func ReadDiagnostics(ctx context.Context, objects Objects, reportKey string) (*model.Diagnostics, error) {
	if reportKey == "" {
		return nil, nil
	}
	key := blobstore.DiagnosticsKey(reportKey)
	gz, err := objects.Get(ctx, key)
	if errors.Is(err, blobstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("diagnostics %s: %w", key, err)
	}
	var d model.Diagnostics
	if err := json.NewDecoder(io.LimitReader(zr, maxDiagnostics)).Decode(&d); err != nil {
		return nil, fmt.Errorf("diagnostics %s: %w", key, err)
	}
	return &d, nil
}

// maxDiagnostics bounds the diagnostics read (decompressed): a few hundred KB for a heavy page.
const maxDiagnostics = 64 << 20

// Source reads the stored audits of a website's pages with their diagnostics.
type Source struct {
	store   *store.Store
	objects Objects
}

// NewSource returns a Source over the table and the reports' bucket (nil: audits are compared
// without their diagnostics).
func NewSource(st *store.Store, objects Objects) *Source { return &Source{store: st, objects: objects} }

// Audit reads the audit ref of a page on a device: model.ErrNotFound when there is none (no
// result that day, an unknown test, a test of another page or device, or one that measured
// nothing).
func (s *Source) Audit(ctx context.Context, site model.Website, page, device string, ref Ref) (Loaded, error) {
	if ref.Test != "" {
		t, err := s.store.SeriesTest(ctx, site, ref.Test)
		if err != nil {
			return Loaded{}, err
		}
		if t.Page != page || t.Device != device || len(t.Metrics) == 0 {
			return Loaded{}, fmt.Errorf("test %s of this page on %s: %w", ref.Test, device, model.ErrNotFound)
		}
		out := Loaded{Ref: ref, ReportKey: t.ReportKey, Runs: 1, Method: model.MethodOr(t.Method, ""), Audit: Audit{Metrics: t.Metrics}}
		if t.Finished != nil {
			out.Audited = *t.Finished
		}
		return s.withDiagnostics(ctx, out)
	}
	results, err := s.store.LabResults(ctx, site, page, device, ref.Day, ref.Day)
	if err != nil {
		return Loaded{}, err
	}
	if len(results) == 0 {
		return Loaded{}, fmt.Errorf("lab result of %s on %s: %w", model.DayToISO(ref.Day), device, model.ErrNotFound)
	}
	r := results[0]
	return s.withDiagnostics(ctx, Loaded{Ref: ref, Audited: r.Audited, Runs: r.Runs, ReportKey: r.ReportKey, Method: model.MethodOr(r.Method, ""),
		Audit: Audit{Metrics: r.Metrics, Samples: r.Samples}})
}

func (s *Source) withDiagnostics(ctx context.Context, l Loaded) (Loaded, error) {
	if s.objects == nil {
		return l, nil
	}
	var err error
	l.Diagnostics, err = ReadDiagnostics(ctx, s.objects, l.ReportKey)
	return l, err
}

// Pair is two stored audits of a page on a device and their comparison.
type Pair struct {
	Base, Target Loaded
	Comparison
}

// Compare reads the audits base and target of a page on a device and compares them; first
// names the metrics listed first.
func (s *Source) Compare(ctx context.Context, site model.Website, page, device string, base, target Ref, first []string) (Pair, error) {
	b, err := s.Audit(ctx, site, page, device, base)
	if err != nil {
		return Pair{}, err
	}
	t, err := s.Audit(ctx, site, page, device, target)
	if err != nil {
		return Pair{}, err
	}
	return Pair{Base: b, Target: t, Comparison: Of(b.Audit, t.Audit, first)}, nil
}
