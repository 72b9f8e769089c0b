package compare

import (
	"context"
	"fmt"
	"time"

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
	Audit
}

// Source reads the stored audits of a website's pages.
type Source struct {
	store *store.Store
}

// NewSource returns a Source over the table.
func NewSource(st *store.Store) *Source { return &Source{store: st} }

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
		out := Loaded{Ref: ref, ReportKey: t.ReportKey, Runs: 1, Audit: Audit{Metrics: t.Metrics}}
		if t.Finished != nil {
			out.Audited = *t.Finished
		}
		return out, nil
	}
	results, err := s.store.LabResults(ctx, site, page, device, ref.Day, ref.Day)
	if err != nil {
		return Loaded{}, err
	}
	if len(results) == 0 {
		return Loaded{}, fmt.Errorf("lab result of %s on %s: %w", model.DayToISO(ref.Day), device, model.ErrNotFound)
	}
	r := results[0]
	return Loaded{Ref: ref, Audited: r.Audited, Runs: r.Runs, ReportKey: r.ReportKey,
		Audit: Audit{Metrics: r.Metrics, Samples: r.Samples}}, nil
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
