package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type regressionItem struct {
	PK, SK, Type string
	model.Regression
	// Version counts the regression's changes (acknowledged, recovered), so that each is
	// written to both its items only if it is still as read; 0 before the first.
	Version int `dynamodbav:",omitempty"`
	// Expires is the regression's end (model.Regression.End) in epoch seconds, for the table's
	// TTL; none while it is open.
	Expires int64 `dynamodbav:"expires,omitempty"`
}

// regressionItems are a regression's item in the website's list and its copy under its page's
// or test's items (nil for a regression of neither), at version.
func (s *Store) regressionItems(w model.Website, r model.Regression, version int) (main, copied map[string]ddbtypes.AttributeValue, err error) {
	it := regressionItem{PK: websitePK(w.Account, w.ID), SK: regressionSK(r.ID), Type: "regression", Regression: r, Version: version}
	if end, ok := r.End(); ok {
		it.Expires = end.Unix()
	}
	if main, err = attributevalue.MarshalMap(it); err != nil || (r.Page == "" && r.Test == "") {
		return main, nil, err
	}
	it.SK = subjectRegressionPrefix(r.Page, r.Test) + r.ID
	copied, err = attributevalue.MarshalMap(it)
	return main, copied, err
}

// PutRegression records a change found, in the website's list and under its page or test;
// false when it was recorded already. It is written only while the website exists.
func (s *Store) PutRegression(ctx context.Context, w model.Website, r model.Regression) (bool, error) {
	main, copied, err := s.regressionItems(w, r, 0)
	if err != nil {
		return false, err
	}
	actions := []ddbtypes.TransactWriteItem{s.putAction(main, "attribute_not_exists(PK)"), s.websiteExists(w)}
	if copied != nil {
		actions = append(actions, s.putAction(copied, ""))
	}
	reasons, err := s.transact(ctx, actions...)
	switch {
	case len(reasons) >= 2 && reasons[1] == "ConditionalCheckFailed":
		return false, fmt.Errorf("regression of website %s: %w", w.ID, model.ErrNotFound)
	case len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed":
		return false, nil
	case err != nil:
		return false, fmt.Errorf("put regression: %w", err)
	}
	return true, nil
}

// Regression returns one of a website's regressions.
func (s *Store) Regression(ctx context.Context, w model.Website, id string) (model.Regression, error) {
	var it regressionItem
	if err := s.getItem(ctx, websitePK(w.Account, w.ID), regressionSK(id), "regression", &it); err != nil {
		return model.Regression{}, err
	}
	return it.Regression, nil
}

// changeTries bounds how often a change of a regression is read and tried again when another
// changed it meanwhile.
const changeTries = 5

// changeRegression reads a regression, lets change alter it (false: it stays as it is) and
// writes it to its item in the website's list and its copy under its page or test at once, if
// it is still as read (else it reads it again). It returns the regression as it now is and
// whether change changed it.
func (s *Store) changeRegression(ctx context.Context, w model.Website, id string, change func(*model.Regression) bool) (model.Regression, bool, error) {
	for range changeTries {
		var it regressionItem
		if err := s.getItem(ctx, websitePK(w.Account, w.ID), regressionSK(id), "regression", &it); err != nil {
			return model.Regression{}, false, err
		}
		r := it.Regression
		if !change(&r) {
			return r, false, nil
		}
		main, copied, err := s.regressionItems(w, r, it.Version+1)
		if err != nil {
			return r, false, err
		}
		actions := []ddbtypes.TransactWriteItem{s.versionedPut(main, it.Version, "attribute_exists(PK) AND attribute_not_exists(Version)")}
		if copied != nil {
			actions = append(actions, s.putAction(copied, ""))
		}
		reasons, err := s.transact(ctx, actions...)
		if len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
			continue // changed (or deleted) meanwhile: decide again
		}
		if err != nil {
			return r, false, fmt.Errorf("change regression: %w", err)
		}
		return r, true, nil
	}
	return model.Regression{}, false, fmt.Errorf("regression %s: changed %d times while being changed", id, changeTries)
}

// RecoverRegression marks an open or acknowledged regression recovered from day on; false when
// it was not open or acknowledged any more, or is gone.
func (s *Store) RecoverRegression(ctx context.Context, w model.Website, id, day string) (bool, error) {
	_, changed, err := s.changeRegression(ctx, w, id, func(r *model.Regression) bool {
		if r.Status != model.RegressionOpen && r.Status != model.RegressionAcknowledged {
			return false
		}
		r.Status, r.Recovered = model.RegressionRecovered, day
		return true
	})
	if model.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("recover regression: %w", err)
	}
	return changed, nil
}

// AcknowledgeRegression marks a regression acknowledged: an open one takes the status, a
// recovered one stays recovered; both keep the first acknowledgement's time. It returns it.
func (s *Store) AcknowledgeRegression(ctx context.Context, w model.Website, id string, at time.Time) (model.Regression, error) {
	r, _, err := s.changeRegression(ctx, w, id, func(r *model.Regression) bool {
		if r.Acknowledged != nil {
			return false
		}
		if r.Status == model.RegressionOpen {
			r.Status = model.RegressionAcknowledged
		}
		at := at.UTC()
		r.Acknowledged = &at
		return true
	})
	return r, err
}

// EnsureRegressionsBySubject gives each regression of a website stored before its page's or
// test's copy had one (see model.Website.RegressionsBySubject), once, and returns the website
// marked so. A copy written meanwhile is left as it is: every change writes both items.
func (s *Store) EnsureRegressionsBySubject(ctx context.Context, w model.Website) (model.Website, error) {
	if w.RegressionsBySubject {
		return w, nil
	}
	regs, _, err := s.Regressions(ctx, w, model.RegressionFilter{}, "", 0)
	if err != nil {
		return w, err
	}
	for _, r := range regs {
		_, copied, err := s.regressionItems(w, r, 0)
		if err != nil || copied == nil {
			if err != nil {
				return w, err
			}
			continue
		}
		err = s.putItem(ctx, copied, putNew, "copy of regression "+r.ID+" under its subject")
		if err != nil && !errors.Is(err, errInUse) {
			return w, err
		}
	}
	err = s.markWebsite(ctx, w, "SET RegressionsBySubject = :yes",
		map[string]ddbtypes.AttributeValue{":yes": &ddbtypes.AttributeValueMemberBOOL{Value: true}}, "regressions copied")
	if err != nil {
		return w, err
	}
	w.RegressionsBySubject = true
	return w, nil
}

// Regressions lists a website's regressions newest first (by first bad day): up to limit (0:
// all) after the one whose ID is after ("" from the newest), and whether more remain. Those of
// one page or test are read from its own copies (see model.Website.RegressionsBySubject), so
// that they cost what they are, whatever the website's others.
func (s *Store) Regressions(ctx context.Context, w model.Website, f model.RegressionFilter, after string, limit int) ([]model.Regression, bool, error) {
	base := regressionSKPrefix
	if w.RegressionsBySubject && (f.Page != "" || f.Test != "") {
		base = subjectRegressionPrefix(f.Page, f.Test)
	}
	lo, hi := base, base+"\U0010FFFF"
	if f.From != "" {
		lo = base + "rg_" + f.From
	}
	if f.To != "" {
		hi = base + "rg_" + f.To + "\U0010FFFF"
	}
	skip := ""
	if after != "" {
		skip = base + after
	}
	in := s.newestFirst(websitePK(w.Account, w.ID), lo, hi, skip)
	var conds []string
	for attr, v := range map[string]string{"Status": f.Status, "Metric": f.Metric, "Page": f.Page, "Device": f.Device, "Test": f.Test, "Kind": f.Kind, "Source": f.Source} {
		if v != "" {
			if in.ExpressionAttributeNames == nil {
				in.ExpressionAttributeNames = map[string]string{}
			}
			conds = append(conds, "#"+attr+" = :"+attr)
			in.ExpressionAttributeNames["#"+attr] = attr
			in.ExpressionAttributeValues[":"+attr] = str(v)
		}
	}
	if len(conds) > 0 {
		slices.Sort(conds) // one expression for one filter, whatever the map's order
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	return window(ctx, s, in, skip, limit, "regressions", func(it regressionItem) (string, model.Regression) { return it.SK, it.Regression })
}

type thresholdsItem struct {
	PK, SK, Type string
	Thresholds   map[string]model.RegressionThreshold
}

// RegressionThresholds returns a website's own least changes by metric (none set: empty).
func (s *Store) RegressionThresholds(ctx context.Context, w model.Website) (map[string]model.RegressionThreshold, error) {
	var it thresholdsItem
	_, err := s.getOr(ctx, websitePK(w.Account, w.ID), regressionThresholdsSK, "regression thresholds", &it)
	if it.Thresholds == nil {
		it.Thresholds = map[string]model.RegressionThreshold{}
	}
	return it.Thresholds, err
}

// PutRegressionThresholds replaces a website's own least changes, while the website exists.
func (s *Store) PutRegressionThresholds(ctx context.Context, w model.Website, t map[string]model.RegressionThreshold) error {
	return s.putWhileWebsite(ctx, w, thresholdsItem{PK: websitePK(w.Account, w.ID), SK: regressionThresholdsSK, Type: "regression-thresholds", Thresholds: t}, "regression thresholds")
}

// putWhileWebsite writes item (creating or replacing it) only while the website exists
// (ErrNotFound otherwise): nothing written after a deletion outlives its purge.
func (s *Store) putWhileWebsite(ctx context.Context, w model.Website, item any, what string) error {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return err
	}
	reasons, err := s.transact(ctx, s.putAction(av, ""), s.websiteExists(w))
	if len(reasons) > 0 {
		return fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", what, err)
	}
	return nil
}

type annotationItem struct {
	PK, SK, Type string
	model.Annotation
}

// PutAnnotation records an annotation (its ID set by the caller), while the website exists.
func (s *Store) PutAnnotation(ctx context.Context, w model.Website, a model.Annotation) error {
	return s.putWhileWebsite(ctx, w, annotationItem{PK: websitePK(w.Account, w.ID), SK: annotationSK(a.At, a.ID), Type: "annotation", Annotation: a}, "annotation")
}

// Annotations lists a website's annotations from from to to (both included; zero: no bound),
// newest first: up to limit (0: all) after the one whose key (AnnotationKey) is after.
func (s *Store) Annotations(ctx context.Context, w model.Website, from, to time.Time, after string, limit int) ([]model.Annotation, bool, error) {
	lo, hi := annotationSKPrefix, annotationSKPrefix+"\U0010FFFF"
	if !from.IsZero() {
		lo = annotationSK(from, "")
	}
	if !to.IsZero() {
		hi = annotationSK(to, "\U0010FFFF")
	}
	skip := ""
	if after != "" {
		skip = annotationSKPrefix + after
	}
	in := s.newestFirst(websitePK(w.Account, w.ID), lo, hi, skip)
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit + 1))
	}
	return window(ctx, s, in, skip, limit, "annotations", func(it annotationItem) (string, model.Annotation) { return it.SK, it.Annotation })
}

// AnnotationKey is an annotation's place in the list: the cursor of the annotations list.
func AnnotationKey(a model.Annotation) string {
	return strings.TrimPrefix(annotationSK(a.At, a.ID), annotationSKPrefix)
}

// deleteItemsOf deletes a website's items under skPrefix (its regressions, its experiments)
// of one page or test (attr "Page" or "Test"), when the page or test is purged.
func (s *Store) deleteItemsOf(ctx context.Context, pk, skPrefix, attr, id string) (int, error) {
	in := prefixQuery(s.table, pk, skPrefix, true)
	in.FilterExpression = aws.String("#a = :id")
	in.ExpressionAttributeNames = map[string]string{"#a": attr}
	in.ExpressionAttributeValues[":id"] = str(id)
	keys, err := s.queryKeys(ctx, in)
	if err != nil {
		return 0, fmt.Errorf("list items under %s to purge: %w", skPrefix, err)
	}
	return s.writeAll(ctx, deleteRequests(keys))
}
