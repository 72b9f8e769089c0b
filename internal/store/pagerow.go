package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
)

// pageRowItem is a page's item with the summary (the row's key and type differ).
type pageRowItem struct {
	pageItem
	Summary       []byte `dynamodbav:",omitempty"`
	Opportunities []byte `dynamodbav:",omitempty"`
	Version       int    `dynamodbav:",omitempty"`
}

// rowPagesPerTransaction is how many pages one transaction creates with their rows: two
// actions a page, and at most 100 actions a transaction.
const rowPagesPerTransaction = 50

// pageRowAction upserts a page's row with its settings, keeping its summary: every field is
// set, so that a row missing before (a website stored before rows existed) is whole after.
func (s *Store) pageRowAction(w model.Website, p model.Page) ddbtypes.TransactWriteItem {
	return withAttrs(s.updateAction(key(websitePK(w.Account, w.ID), pageRowSK(p)),
		"SET #type = :type, ID = :id, #url = :url, Alias = :alias, Created = :created", "",
		map[string]ddbtypes.AttributeValue{
			":type": str("page-row"), ":id": str(p.ID), ":url": str(p.URL), ":alias": str(p.Alias),
			":created": str(p.Created.UTC().Format(time.RFC3339Nano)),
		}), nil, map[string]string{"#type": "Type", "#url": "URL"})
}

// PageRows returns a website's rows in the order the pages were added: all of them with limit
// 0, else up to limit rows after the one whose PageOrderKey is after ("" from the start);
// more tells whether rows remain after those. The website's rows must exist (EnsurePageRows).
// All rows are read as the segments between the website's row marks, in parallel: a
// thousand rows are some 3.5 MB, four query pages that one after another took most of the
// list's time.
func (s *Store) PageRows(ctx context.Context, w model.Website, after string, limit int) (rows []model.PageRow, more bool, err error) {
	if limit == 0 && after == "" {
		rows, err := s.pageRowSegments(ctx, w, "")
		return rows, false, err
	}
	from := pageRowPrefix
	if after != "" {
		from = pageRowPrefix + after + "\x00" // the first key after it
	}
	items, more, err := s.queryPageRows(ctx, w, from, pageRowPrefix+"\U0010FFFF", limit, "")
	if err != nil {
		return nil, false, err
	}
	return pageRowsOf(items), more, nil
}

// PageRowOpportunities returns all of a website's rows, in the order the pages were added,
// with their Opportunities and without their Summary: the website's opportunities list reads
// them, a few KB of rows where the summaries of 30 days are some 3.5 MB at 1,000 pages. The
// website's rows must exist (EnsurePageRows).
func (s *Store) PageRowOpportunities(ctx context.Context, w model.Website) ([]model.PageRow, error) {
	return s.pageRowSegments(ctx, w, "PK, SK, ID, #url, Alias, Created, Opportunities, Version")
}

// pageRowSegments reads all of a website's rows, segment by segment, rowSegmentReaders at a
// time, with the attributes projection names (all with ""). A segment runs from its mark to
// the next one (that one excluded).
func (s *Store) pageRowSegments(ctx context.Context, w model.Website, projection string) ([]model.PageRow, error) {
	bounds := []string{pageRowPrefix}
	for _, m := range w.RowMarks {
		bounds = append(bounds, pageRowPrefix+m)
	}
	bounds = append(bounds, pageRowPrefix+"\U0010FFFF")
	segments, err := parallel.Map(rowSegmentReaders, len(bounds)-1, func(i int) ([]pageRowItem, error) {
		items, _, err := s.queryPageRows(ctx, w, bounds[i], bounds[i+1], 0, projection)
		if n := len(items); n > 0 && items[n-1].SK == bounds[i+1] {
			items = items[:n-1] // the next segment's first row
		}
		return items, err
	})
	if err != nil {
		return nil, err
	}
	var items []pageRowItem
	for _, seg := range segments {
		items = append(items, seg...)
	}
	return pageRowsOf(items), nil
}

// queryPageRows reads the rows whose keys are from from to to, both included: all of them
// with limit 0, else up to limit and whether more remain; only the attributes projection
// names, unless it is "" (#url stands for URL).
func (s *Store) queryPageRows(ctx context.Context, w model.Website, from, to string, limit int, projection string) (items []pageRowItem, more bool, err error) {
	in := s.betweenQuery(websitePK(w.Account, w.ID), from, to)
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
		in.ExpressionAttributeNames = map[string]string{"#url": "URL"}
	}
	want := 0 // all of them
	if limit > 0 {
		want = limit + 1 // one more tells whether more remain
		in.Limit = aws.Int32(int32(want))
	}
	if items, err = query[pageRowItem](ctx, s, in, want); err != nil {
		return nil, false, fmt.Errorf("list page rows: %w", err)
	}
	if limit > 0 && len(items) > limit {
		items, more = items[:limit], true
	}
	return items, more, nil
}

func pageRowsOf(items []pageRowItem) []model.PageRow {
	rows := make([]model.PageRow, len(items))
	for i, it := range items {
		rows[i] = model.PageRow{Page: it.page(), Summary: it.Summary,
			Opportunities: it.Opportunities, Version: it.Version}
	}
	return rows
}

// Row marks split a website's rows into segments that are read in parallel: rowsPerSegment
// rows is about one query page (1 MB) of rows with 30 days of summaries.
const (
	rowsPerSegment    = 250
	rowSegmentReaders = 4
)

// rowMarks returns the row marks that pages added after rowsBefore rows (ever created) start:
// the key of every rowsPerSegment-th row. Since pages are added at the end of the order,
// the count of rows ever created places them; deleted pages leave their segments smaller,
// and pages added at once by two calls may interleave, which only makes segments uneven:
// marks are a hint for speed, any marks give every row once.
func rowMarks(rowsBefore int, added []model.Page) []string {
	var marks []string
	for i, p := range added {
		if n := rowsBefore + i; n > 0 && n%rowsPerSegment == 0 {
			marks = append(marks, PageOrderKey(p))
		}
	}
	return marks
}

// countRows counts added rows on the website's item and appends the marks they start. It is
// a hint (see rowMarks): a failure leaves the lists correct, read in fewer segments.
func (s *Store) countRows(ctx context.Context, w model.Website, added []model.Page) {
	now, err := s.updated(ctx, key(accountPK(w.Account), websiteSK(w.ID)), itemUpdate{expr: "ADD RowCount :n", cond: "attribute_exists(PK)",
		values: map[string]ddbtypes.AttributeValue{":n": num(len(added))}, returns: ddbtypes.ReturnValueUpdatedNew})
	if err != nil {
		return
	}
	var counted struct{ RowCount int }
	if attributevalue.UnmarshalMap(now, &counted) != nil {
		return
	}
	marks := rowMarks(counted.RowCount-len(added), added)
	if len(marks) == 0 {
		return
	}
	list, err := attributevalue.Marshal(marks)
	if err != nil {
		return
	}
	_ = s.update(ctx, key(accountPK(w.Account), websiteSK(w.ID)), "SET RowMarks = list_append(if_not_exists(RowMarks, :none), :marks)",
		"attribute_exists(PK)", map[string]ddbtypes.AttributeValue{":marks": list, ":none": &ddbtypes.AttributeValueMemberL{}})
}

// PageRow returns one page's row.
func (s *Store) PageRow(ctx context.Context, w model.Website, p model.Page) (model.PageRow, error) {
	var it pageRowItem
	if err := s.getItem(ctx, websitePK(w.Account, w.ID), pageRowSK(p), "row of page "+p.ID, &it); err != nil {
		return model.PageRow{}, err
	}
	return model.PageRow{Page: p, Summary: it.Summary, Opportunities: it.Opportunities, Version: it.Version}, nil
}

// PutPageSummary writes a page's summary and its latest opportunities (none: nil) into its
// row if the row's summary is still at version (0: none yet). A row that is gone (the page
// deleted, or the website's rows not made yet) is ErrNotFound; a summary written meanwhile is
// ErrChanged.
func (s *Store) PutPageSummary(ctx context.Context, w model.Website, p model.Page, version int, summary, opportunities []byte) error {
	cond := "attribute_exists(PK) AND attribute_not_exists(Version)"
	vals := map[string]ddbtypes.AttributeValue{":s": &ddbtypes.AttributeValueMemberB{Value: summary}, ":next": num(version + 1)}
	if version > 0 {
		cond = "attribute_exists(PK) AND Version = :v"
		vals[":v"] = num(version)
	}
	update := "SET Summary = :s, Version = :next REMOVE Opportunities"
	if len(opportunities) > 0 {
		update = "SET Summary = :s, Opportunities = :o, Version = :next"
		vals[":o"] = &ddbtypes.AttributeValueMemberB{Value: opportunities}
	}
	err := s.update(ctx, key(websitePK(w.Account, w.ID), pageRowSK(p)), update, cond, vals)
	if !isConditionFailed(err) {
		if err != nil {
			return fmt.Errorf("put summary of page %s: %w", p.ID, err)
		}
		return nil
	}
	if _, err := s.PageRow(ctx, w, p); err != nil {
		return err
	}
	return fmt.Errorf("summary of page %s: %w", p.ID, model.ErrChanged)
}

// EnsurePageRows gives every page of a website stored before rows existed its row, once; it
// returns w marked as having them. A page deleted meanwhile gets none.
func (s *Store) EnsurePageRows(ctx context.Context, w model.Website) (model.Website, error) {
	if w.PageRows {
		return w, nil
	}
	pages, err := s.Pages(ctx, w)
	if err != nil {
		return w, err
	}
	for start := 0; start < len(pages); start += rowPagesPerTransaction {
		chunk := pages[start:min(start+rowPagesPerTransaction, len(pages))]
		for len(chunk) > 0 {
			actions := make([]ddbtypes.TransactWriteItem, 0, 2*len(chunk))
			for _, p := range chunk {
				actions = append(actions, s.pageExistsCheck(w, p), s.pageRowAction(w, p))
			}
			reasons, err := s.transact(ctx, actions...)
			if err == nil {
				break
			}
			if len(reasons) == 0 {
				return w, fmt.Errorf("make page rows: %w", err)
			}
			kept := chunk[:0:0]
			for i, p := range chunk {
				if reasons[2*i] != "ConditionalCheckFailed" {
					kept = append(kept, p)
				}
			}
			if len(kept) == len(chunk) {
				return w, fmt.Errorf("make page rows: %w", err)
			}
			chunk = kept
		}
	}
	slices.SortFunc(pages, func(a, b model.Page) int { return strings.Compare(PageOrderKey(a), PageOrderKey(b)) })
	w.RowMarks = rowMarks(0, pages)
	marks, err := attributevalue.Marshal(w.RowMarks)
	if err != nil {
		return w, err
	}
	err = s.markWebsite(ctx, w, "SET PageRows = :yes, RowCount = :n, RowMarks = :marks",
		map[string]ddbtypes.AttributeValue{":yes": &ddbtypes.AttributeValueMemberBOOL{Value: true}, ":n": num(len(pages)), ":marks": marks},
		"page rows made")
	if err != nil {
		return w, err
	}
	w.PageRows = true
	return w, nil
}

// pageExistsCheck holds a transaction to the page's item still being the page's.
func (s *Store) pageExistsCheck(w model.Website, p model.Page) ddbtypes.TransactWriteItem {
	return withAttrs(s.check(key(websitePK(w.Account, w.ID), pageSK(p.URL)), samePage), pageID(p.ID), nil)
}

// samePage is the condition that a page's item (keyed by its URL) is still the page's, whose
// ID pageID gives.
const samePage = "ID = :id"

func pageID(id string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{":id": str(id)}
}

// staleSummary removes a page's summary (and its opportunities) after a result of the page was stored, so that the
// lists make it again from the results; the version it counts makes a summary made from the
// results before this one fail its write. A page without a row needs nothing.
func (s *Store) staleSummary(ctx context.Context, w model.Website, p model.Page) error {
	if p.Created.IsZero() {
		return fmt.Errorf("page %s given without its creation time, which keys its row", p.ID)
	}
	err := s.update(ctx, key(websitePK(w.Account, w.ID), pageRowSK(p)), "REMOVE Summary, Opportunities ADD Version :one",
		"attribute_exists(PK)", map[string]ddbtypes.AttributeValue{":one": num(1)})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("mark the summary of page %s stale: %w", p.ID, err)
	}
	return nil
}
