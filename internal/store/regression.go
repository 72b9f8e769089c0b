package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type regressionItem struct {
	PK, SK, Type string
	model.Regression
}

// PutRegression records a change found; false when it was recorded already. It is written only
// while the website exists.
func (s *Store) PutRegression(ctx context.Context, w model.Website, r model.Regression) (bool, error) {
	item, err := attributevalue.MarshalMap(regressionItem{PK: websitePK(w.Account, w.ID), SK: regressionSK(r.ID), Type: "regression", Regression: r})
	if err != nil {
		return false, err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		s.websiteExists(w),
	}})
	reasons := cancellationReasons(err)
	switch {
	case len(reasons) == 2 && reasons[1] == "ConditionalCheckFailed":
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

// RecoverRegression marks an open or acknowledged regression recovered from day on; false when
// it was not open or acknowledged any more.
func (s *Store) RecoverRegression(ctx context.Context, w model.Website, id, day string) (bool, error) {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), regressionSK(id)),
		UpdateExpression:         aws.String("SET #status = :recovered, Recovered = :day"),
		ConditionExpression:      aws.String("#status IN (:open, :ack)"),
		ExpressionAttributeNames: map[string]string{"#status": "Status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":recovered": str(model.RegressionRecovered), ":day": str(day), ":open": str(model.RegressionOpen), ":ack": str(model.RegressionAcknowledged),
		},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("recover regression: %w", err)
	}
	return true, nil
}

// AcknowledgeRegression marks a regression acknowledged: an open one takes the status, a
// recovered one stays recovered; both keep the first acknowledgement's time. It returns it.
func (s *Store) AcknowledgeRegression(ctx context.Context, w model.Website, id string, at time.Time) (model.Regression, error) {
	for {
		r, err := s.Regression(ctx, w, id)
		if err != nil || r.Acknowledged != nil {
			return r, err
		}
		was := r.Status
		if r.Status == model.RegressionOpen {
			r.Status = model.RegressionAcknowledged
		}
		at := at.UTC()
		r.Acknowledged = &at
		when, err := attributevalue.Marshal(at)
		if err != nil {
			return r, err
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: key(websitePK(w.Account, w.ID), regressionSK(id)),
			UpdateExpression:         aws.String("SET #status = :status, Acknowledged = :at"),
			ConditionExpression:      aws.String("#status = :was"),
			ExpressionAttributeNames: map[string]string{"#status": "Status"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
				":status": str(r.Status), ":at": when, ":was": str(was),
			},
		})
		if isConditionFailed(err) {
			continue // recovered (or deleted) meanwhile: decide again
		}
		if err != nil {
			return r, fmt.Errorf("acknowledge regression: %w", err)
		}
		return r, nil
	}
}

// Regressions lists a website's regressions newest first (by first bad day): up to limit (0:
// all) after the one whose ID is after ("" from the newest), and whether more remain.
func (s *Store) Regressions(ctx context.Context, w model.Website, f model.RegressionFilter, after string, limit int) ([]model.Regression, bool, error) {
	lo, hi := regressionSKPrefix, regressionSKPrefix+"\U0010FFFF"
	if f.From != "" {
		lo = regressionSKPrefix + "rg_" + f.From
	}
	if f.To != "" {
		hi = regressionSKPrefix + "rg_" + f.To + "\U0010FFFF"
	}
	skip := ""
	if after != "" {
		skip = regressionSK(after)
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
	err := s.getItem(ctx, websitePK(w.Account, w.ID), regressionThresholdsSK, "regression thresholds", &it)
	if model.IsNotFound(err) {
		return map[string]model.RegressionThreshold{}, nil
	}
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
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String(s.table), Item: av}}, s.websiteExists(w),
	}})
	if len(cancellationReasons(err)) > 0 {
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
	in.ProjectionExpression = aws.String("PK, SK")
	var reqs []ddbtypes.WriteRequest
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("list items under %s to purge: %w", skPrefix, err)
		}
		for _, k := range page.Items {
			reqs = append(reqs, ddbtypes.WriteRequest{DeleteRequest: &ddbtypes.DeleteRequest{Key: k}})
		}
	}
	for start := 0; start < len(reqs); start += 25 {
		if err := s.batchWrite(ctx, reqs[start:min(start+25, len(reqs))]); err != nil {
			return start, err
		}
	}
	return len(reqs), nil
}
