package awstest

import (
	"context"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// Website stores w as a new website with pages (which get their IDs, as CreatePages gives
// them; none when nil), in calls of at most model.MaxPagesPerCall, and returns the website and its pages as
// the store reads them back.
func Website(t testing.TB, st *store.Store, w model.Website, pages []model.Page) (model.Website, []model.Page) {
	t.Helper()
	ctx := context.Background()
	if err := st.CreateWebsite(ctx, &w); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < len(pages); start += model.MaxPagesPerCall {
		if err := st.CreatePages(ctx, w, pages[start:min(len(pages), start+model.MaxPagesPerCall)]); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := st.Pages(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	return w, stored
}
