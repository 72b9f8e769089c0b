package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// rowIDs lists the pages of a website's rows, in their order, read in windows of limit.
func rowIDs(t *testing.T, st *store.Store, w model.Website, limit int) []string {
	t.Helper()
	var ids []string
	after := ""
	for {
		rows, more, err := st.PageRows(context.Background(), w, after, limit)
		if err != nil {
			t.Fatal(err)
		}
		if limit > 0 && len(rows) > limit {
			t.Fatalf("%d rows for a limit of %d", len(rows), limit)
		}
		for _, r := range rows {
			ids = append(ids, r.Page.ID)
		}
		if !more {
			return ids
		}
		after = store.PageOrderKey(rows[len(rows)-1].Page)
	}
}

func pageIDs(pages []model.Page) []string {
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ID
	}
	return ids
}

// TestPageRows: a page's row is made, changed and deleted with it, in the order pages were
// added, read whole or in windows; a request refused in its second transaction leaves no page
// and no row of its first.
func TestPageRows(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	var pages []model.Page
	for call := range 2 {
		batch := make([]model.Page, model.MaxPagesPerCall)
		for i := range batch {
			batch[i] = model.Page{URL: fmt.Sprintf("/p/%d/%d", call, i), Alias: "P"}
		}
		if err := st.CreatePages(ctx, w, batch); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, batch...)
	}
	want := strings.Join(pageIDs(pages), " ")
	for _, limit := range []int{0, 1, 7, 100, 199, 200, 1000} {
		if got := strings.Join(rowIDs(t, st, w, limit), " "); got != want {
			t.Errorf("limit %d: rows out of order or missing", limit)
		}
	}

	// The 60th page repeats a URL: refused in the second transaction, the first is taken back.
	refused := make([]model.Page, 60)
	for i := range refused {
		refused[i] = model.Page{URL: fmt.Sprintf("/new/%d", i), Alias: "N"}
	}
	refused[59].URL = pages[3].URL
	var conflict *model.ConflictError
	if err := st.CreatePages(ctx, w, refused); !errors.As(err, &conflict) || conflict.Field != "[59].url" {
		t.Fatalf("a repeated URL in the second transaction: %v, want a conflict on [59].url", err)
	}
	if got := strings.Join(rowIDs(t, st, w, 0), " "); got != want {
		t.Error("rows of a refused request are left")
	}
	if all, err := st.Pages(ctx, w); err != nil || len(all) != len(pages) {
		t.Errorf("%d pages after a refused request (%v), want %d", len(all), err, len(pages))
	}

	updated := pages[5]
	updated.URL, updated.Alias = "/moved", "Moved"
	if err := st.UpdatePage(ctx, w, pages[5], updated); err != nil {
		t.Fatal(err)
	}
	rows, _, err := st.PageRows(ctx, w, store.PageOrderKey(pages[4]), 1)
	if err != nil || len(rows) != 1 || rows[0].Page.ID != pages[5].ID || rows[0].Page.URL != "/moved" || rows[0].Page.Alias != "Moved" {
		t.Errorf("row after an update: %+v, %v", rows, err)
	}
	if _, err := st.DeletePage(ctx, w, pages[6]); err != nil {
		t.Fatal(err)
	}
	if got := rowIDs(t, st, w, 0); len(got) != len(pages)-1 || got[6] != pages[7].ID {
		t.Errorf("rows after a delete: %d, want %d without the deleted page", len(got), len(pages)-1)
	}
}

// TestRowMarks: the whole list is read in segments between marks, one every 250 rows made as
// pages are added; every row is read once and in order, with the page of a mark deleted, with
// pages added by two calls at once, and with marks that fall nowhere near the rows.
func TestRowMarks(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	add := func(prefix string, calls int) []model.Page {
		var added []model.Page
		for call := range calls {
			batch := make([]model.Page, model.MaxPagesPerCall)
			for i := range batch {
				batch[i] = model.Page{URL: fmt.Sprintf("/%s/%d/%d", prefix, call, i)}
			}
			if err := st.CreatePages(ctx, w, batch); err != nil {
				t.Error(err)
				return added
			}
			added = append(added, batch...)
		}
		return added
	}
	read := func() model.Website {
		t.Helper()
		got, err := st.Website(ctx, w.Account, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pages := add("a", 6)
	w = read()
	if want := []string{store.PageOrderKey(pages[250]), store.PageOrderKey(pages[500])}; strings.Join(w.RowMarks, " ") != strings.Join(want, " ") {
		t.Fatalf("marks %q after 600 pages, want the 251st and 501st page's keys %q", w.RowMarks, want)
	}
	if got, want := strings.Join(rowIDs(t, st, w, 0), " "), strings.Join(pageIDs(pages), " "); got != want {
		t.Fatal("rows read in segments are not the pages in order")
	}

	for _, p := range []model.Page{pages[250], pages[499]} {
		if _, err := st.DeletePage(ctx, w, p); err != nil {
			t.Fatal(err)
		}
	}
	kept := append(append(append([]model.Page{}, pages[:250]...), pages[251:499]...), pages[500:]...)
	if got, want := strings.Join(rowIDs(t, st, w, 0), " "), strings.Join(pageIDs(kept), " "); got != want {
		t.Error("rows read in segments after deleting the page of a mark and the row before another")
	}

	// Two calls at once: their pages interleave in time; each row is still read once.
	var wg sync.WaitGroup
	added := make([][]model.Page, 2)
	for i := range added {
		wg.Add(1)
		go func() { defer wg.Done(); added[i] = add(fmt.Sprint("c", i), 3) }()
	}
	wg.Wait()
	w = read()
	if len(w.RowMarks) != 4 {
		t.Errorf("%d marks after 1,200 rows made, want 4", len(w.RowMarks))
	}
	want := map[string]bool{}
	for _, p := range append(append(kept, added[0]...), added[1]...) {
		want[p.ID] = true
	}
	got := rowIDs(t, st, w, 0)
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] || !want[id] {
			t.Fatalf("row %s read twice or not a page", id)
		}
		seen[id] = true
	}
	if len(seen) != len(want) {
		t.Errorf("%d rows read, want %d", len(seen), len(want))
	}

	// Marks before, between and after all rows change nothing.
	w.RowMarks = []string{"0", store.PageOrderKey(kept[10]) + "~", "99999999"}
	if got2 := rowIDs(t, st, w, 0); strings.Join(got2, " ") != strings.Join(got, " ") {
		t.Error("rows read with marks away from the rows differ")
	}
}

// TestPageSummaryVersions: a summary is written only over the version it was made from; a
// stored result marks it stale (removed, version counted), so a summary made before the result
// is refused; a deleted page's row takes no summary.
func TestPageSummaryVersions(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	pages := addPages(t, st, w, []model.Page{{URL: "/", Alias: "Home"}})
	home := pages[0]
	row, err := st.PageRow(ctx, w, home)
	if err != nil || row.Summary != nil || row.Version != 0 {
		t.Fatalf("a new row: %+v, %v; want no summary", row, err)
	}
	if err := st.PutPageSummary(ctx, w, home, 0, []byte("first"), nil); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPageSummary(ctx, w, home, 0, []byte("late"), nil); !errors.Is(err, model.ErrChanged) {
		t.Errorf("a summary made from version 0 after another: %v, want ErrChanged", err)
	}
	if err := st.PutLabResult(ctx, w, home, model.LabResult{Device: "mobile", Day: "20261125", Metrics: map[string]float64{"lcp": 1}}); err != nil {
		t.Fatal(err)
	}
	row, err = st.PageRow(ctx, w, home)
	if err != nil || row.Summary != nil || row.Version != 2 {
		t.Errorf("after a result: %+v, %v; want no summary, version 2", row, err)
	}
	if err := st.PutPageSummary(ctx, w, home, 1, []byte("made before the result"), nil); !errors.Is(err, model.ErrChanged) {
		t.Errorf("a summary made before the result: %v, want ErrChanged", err)
	}
	if err := st.PutPageSummary(ctx, w, home, 2, []byte("second"), []byte("opportunities")); err != nil {
		t.Fatal(err)
	}
	if row, err = st.PageRow(ctx, w, home); err != nil || string(row.Summary) != "second" || string(row.Opportunities) != "opportunities" || row.Version != 3 {
		t.Errorf("row %+v, %v", row, err)
	}
	// The website's opportunities read the rows without their summaries.
	if w, err = st.EnsurePageRows(ctx, w); err != nil {
		t.Fatal(err)
	}
	if rows, err := st.PageRowOpportunities(ctx, w); err != nil || len(rows) != 1 || rows[0].Page.ID != home.ID || rows[0].Page.URL != "/" ||
		rows[0].Summary != nil || string(rows[0].Opportunities) != "opportunities" || rows[0].Version != 3 {
		t.Errorf("rows with their opportunities %+v, %v", rows, err)
	}
	for _, put := range []func() error{
		func() error { return st.PutUXResult(ctx, w, home, model.UXResult{Device: "mobile", Day: "20261125"}) },
		func() error {
			return st.PutSearchResults(ctx, w, []model.Page{home}, []model.SearchResult{{Page: home.ID, Day: "20261125"}})
		},
	} {
		before := row.Version
		if err := put(); err != nil {
			t.Fatal(err)
		}
		if row, err = st.PageRow(ctx, w, home); err != nil || row.Summary != nil || row.Opportunities != nil || row.Version != before+1 {
			t.Errorf("a user-experience record or search analytics left the summary: %+v, %v", row, err)
		}
		if err := st.PutPageSummary(ctx, w, home, row.Version, []byte("again"), []byte("opportunities")); err != nil {
			t.Fatal(err)
		}
		if row, err = st.PageRow(ctx, w, home); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DeletePage(ctx, w, home); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPageSummary(ctx, w, home, row.Version, []byte("after the delete"), nil); !model.IsNotFound(err) {
		t.Errorf("a summary of a deleted page: %v, want not found", err)
	}
	if _, err := st.PageRow(ctx, w, home); !model.IsNotFound(err) {
		t.Errorf("a deleted page's row: %v, want not found", err)
	}
}

// TestEnsurePageRows: the pages of a website stored before rows existed get them once, in
// their order, and the website is marked.
func TestEnsurePageRows(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	pages := make([]model.Page, 70)
	for i := range pages {
		pages[i] = model.Page{URL: fmt.Sprintf("/%d", i), Alias: "P"}
	}
	if err := st.CreatePages(ctx, w, pages); err != nil {
		t.Fatal(err)
	}
	// As stored before rows: no rows, the website unmarked.
	rows, _, err := st.PageRows(ctx, w, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	pk := &ddbtypes.AttributeValueMemberS{Value: "A#acme#W#" + w.ID}
	for _, r := range rows {
		_, err := clients.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()), Key: map[string]ddbtypes.AttributeValue{
			"PK": pk, "SK": &ddbtypes.AttributeValueMemberS{Value: "ROW#" + store.PageOrderKey(r.Page)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = clients.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()),
		Key:              map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "A#acme"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "W#" + w.ID}},
		UpdateExpression: aws.String("REMOVE PageRows")})
	if err != nil {
		t.Fatal(err)
	}
	old, err := st.Website(ctx, "acme", w.ID)
	if err != nil || old.PageRows {
		t.Fatalf("website %+v, %v; want it unmarked", old, err)
	}
	if got := rowIDs(t, st, old, 0); len(got) != 0 {
		t.Fatalf("%d rows left", len(got))
	}
	marked, err := st.EnsurePageRows(ctx, old)
	if err != nil || !marked.PageRows {
		t.Fatalf("ensure: %+v, %v", marked, err)
	}
	if got := strings.Join(rowIDs(t, st, marked, 9), " "); got != strings.Join(pageIDs(pages), " ") {
		t.Error("rows made out of order or missing")
	}
	if again, err := st.Website(ctx, "acme", w.ID); err != nil || !again.PageRows {
		t.Errorf("website not marked: %+v, %v", again, err)
	}
}
