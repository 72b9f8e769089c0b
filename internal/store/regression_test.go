package store_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestRegressionsPurgedWithTheirPage: a page's purge takes its regressions (website items,
// listed together) and leaves the other page's and a test's; a regression of a deleted website
// is not written.
func TestRegressionsPurgedWithTheirPage(t *testing.T) {
	ctx := context.Background()
	_, st, w := newWebsite(t)
	pages := addPages(t, st, w, []model.Page{{URL: "/"}, {URL: "/shop"}})
	put := func(r model.Regression) model.Regression {
		t.Helper()
		r.ID = model.RegressionID(w, r.Page+r.Test+r.Metric, r.FirstBad)
		r.Kind, r.Status, r.Detected = model.KindRegression, model.RegressionOpen, time.Now()
		if created, err := st.PutRegression(ctx, w, r); err != nil || !created {
			t.Fatalf("put %+v: %v %v", r, created, err)
		}
		return r
	}
	gone := put(model.Regression{Source: "lab", Page: pages[0].ID, Device: "mobile", Metric: "lcp", FirstBad: "20261110"})
	put(model.Regression{Source: "ux", Page: pages[0].ID, Device: "mobile", Metric: "cls", FirstBad: "20261111"})
	kept := put(model.Regression{Source: "lab", Page: pages[1].ID, Device: "mobile", Metric: "lcp", FirstBad: "20261110"})
	test := put(model.Regression{Source: "multistep", Test: "t1", Metric: "duration", FirstBad: "20261112"})

	job, err := st.DeletePage(ctx, w, pages[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PurgeItems(ctx, job); err != nil {
		t.Fatal(err)
	}
	left, _, err := st.Regressions(ctx, w, model.RegressionFilter{}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].ID != test.ID || left[1].ID != kept.ID {
		t.Fatalf("after the page's purge: %+v, want the other page's and the test's", left)
	}
	if _, err := st.Regression(ctx, w, gone.ID); !model.IsNotFound(err) {
		t.Fatalf("the purged page's regression: %v", err)
	}
	if _, err := st.PurgeItems(ctx, model.PurgeJob{Account: w.Account, Website: w.ID, Test: "t1"}); err != nil {
		t.Fatal(err)
	}
	if left, _, _ := st.Regressions(ctx, w, model.RegressionFilter{}, "", 0); len(left) != 1 || left[0].ID != kept.ID {
		t.Fatalf("after the test's purge: %+v", left)
	}

	if _, err := st.DeleteWebsite(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutRegression(ctx, w, model.Regression{ID: "rg_x", Page: pages[1].ID}); !model.IsNotFound(err) {
		t.Fatalf("a regression of a deleted website: %v, want ErrNotFound", err)
	}
}

// TestPageRegressionsReadAlone: a page's regressions are one query of that page's alone,
// however many the website's other pages have; acknowledging and recovering one changes what
// that query reads too, and a recovered regression gets its end in the history.
func TestPageRegressionsReadAlone(t *testing.T) {
	ctx := context.Background()
	clients := awstest.Clients(t)
	st, reads := awstest.CountedStore(t, clients)
	w := websiteIn(t, st)
	pages := addPages(t, st, w, []model.Page{{URL: "/"}, {URL: "/shop"}})
	put := func(page, metric, firstBad string) model.Regression {
		t.Helper()
		r := model.Regression{Kind: model.KindRegression, Source: "lab", Page: page, Device: "mobile", Metric: metric,
			FirstBad: firstBad, Status: model.RegressionOpen, Detected: time.Now()}
		r.ID = model.RegressionID(w, page+metric, firstBad)
		if created, err := st.PutRegression(ctx, w, r); err != nil || !created {
			t.Fatalf("put %+v: %v %v", r, created, err)
		}
		return r
	}
	mine := put(pages[0].ID, "lcp", "20261110")
	for i := range 30 {
		put(pages[1].ID, "lcp", model.Day(time.Date(2026, 9, 1+i, 0, 0, 0, 0, time.UTC)))
	}

	reads.Reset()
	got, _, err := st.Regressions(ctx, w, model.RegressionFilter{Page: pages[0].ID}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := reads.Count(); len(got) != 1 || got[0].ID != mine.ID || c.Requests() != 1 || c.Items != 1 {
		t.Fatalf("the page's regressions: %+v, read with %s; want its one, one item read", got, c)
	}

	if _, err := st.AcknowledgeRegression(ctx, w, mine.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, _, _ = st.Regressions(ctx, w, model.RegressionFilter{Page: pages[0].ID}, "", 0)
	if len(got) != 1 || got[0].Status != model.RegressionAcknowledged || got[0].Acknowledged == nil {
		t.Fatalf("after its acknowledgement: %+v", got)
	}
	if ok, err := st.RecoverRegression(ctx, w, mine.ID, "20261120"); err != nil || !ok {
		t.Fatalf("recover: %v %v", ok, err)
	}
	if ok, err := st.RecoverRegression(ctx, w, mine.ID, "20261121"); err != nil || ok {
		t.Fatalf("recover again: %v %v, want false", ok, err)
	}
	got, _, _ = st.Regressions(ctx, w, model.RegressionFilter{Page: pages[0].ID}, "", 0)
	listed, _ := st.Regression(ctx, w, mine.ID)
	if len(got) != 1 || got[0].Status != model.RegressionRecovered || got[0].Recovered != "20261120" || got[0].Acknowledged == nil ||
		listed.Status != model.RegressionRecovered || listed.Acknowledged == nil {
		t.Fatalf("after its recovery: %+v, in the website's list %+v", got, listed)
	}
	end := model.HistoryEnd("20261120").Unix()
	for _, item := range itemsOf(t, clients, st, w) {
		if item.sk == "RG#"+mine.ID || item.sk == "P#"+pages[0].ID+"#RG#"+mine.ID {
			if item.expires != end {
				t.Errorf("%s expires at %d, want %d", item.sk, item.expires, end)
			}
		} else if strings.Contains(item.sk, "RG#") && item.expires != 0 {
			t.Errorf("the open regression %s expires at %d", item.sk, item.expires)
		}
	}
}

// TestRegressionsOfAWebsiteStoredBefore: a website whose regressions were stored before pages
// kept theirs lists a page's from the website's list, and gets the copies once.
func TestRegressionsOfAWebsiteStoredBefore(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	pages := addPages(t, st, w, []model.Page{{URL: "/"}, {URL: "/shop"}})
	var ids []string
	for i, p := range []string{pages[0].ID, pages[1].ID, pages[0].ID} {
		r := model.Regression{Kind: model.KindRegression, Source: "lab", Page: p, Metric: "lcp", FirstBad: "2026111" + strconv.Itoa(i),
			Status: model.RegressionOpen, Detected: time.Now()}
		r.ID = model.RegressionID(w, p, r.FirstBad)
		if _, err := st.PutRegression(ctx, w, r); err != nil {
			t.Fatal(err)
		}
		if p == pages[0].ID {
			ids = append([]string{r.ID}, ids...) // newest first
		}
	}
	// As an earlier version left them: no copies, the website unmarked.
	pk := "A#acme#W#" + w.ID
	for _, item := range itemsOf(t, clients, st, w) {
		if strings.HasPrefix(item.sk, "P#") && strings.Contains(item.sk, "#RG#") {
			if _, err := clients.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table()),
				Key: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: pk}, "SK": &ddbtypes.AttributeValueMemberS{Value: item.sk}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := clients.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(st.Table()),
		Key:              map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "A#acme"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "W#" + w.ID}},
		UpdateExpression: aws.String("REMOVE RegressionsBySubject")}); err != nil {
		t.Fatal(err)
	}
	old, err := st.Website(ctx, "acme", w.ID)
	if err != nil || old.RegressionsBySubject {
		t.Fatalf("the website as stored before: %+v, %v", old, err)
	}
	ofPage := func(w model.Website) []string {
		t.Helper()
		regs, _, err := st.Regressions(ctx, w, model.RegressionFilter{Page: pages[0].ID}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range regs {
			got = append(got, r.ID)
		}
		return got
	}
	if got := ofPage(old); !slices.Equal(got, ids) {
		t.Fatalf("before the copies: %v, want %v", got, ids)
	}
	now, err := st.EnsureRegressionsBySubject(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.Website(ctx, "acme", w.ID)
	if err != nil || !now.RegressionsBySubject || !again.RegressionsBySubject {
		t.Fatalf("after the copies: %+v, stored %+v, %v", now, again, err)
	}
	if got := ofPage(now); !slices.Equal(got, ids) {
		t.Fatalf("from the copies: %v, want %v", got, ids)
	}
}
