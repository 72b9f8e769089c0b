package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestCursorPagination walks every paginated list with several limits: each item comes
// exactly once, in the order of the whole list, the last response has no cursor, and bad
// limits and cursors answer 400.
func TestCursorPagination(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	w := "/" + site.ID
	for i := range 7 {
		e.createWebsite(fmt.Sprintf("site%d.example", i))
	}
	var body []string
	for i := range 11 {
		body = append(body, fmt.Sprintf(`{"url":"/p%d"}`, i))
	}
	e.do("POST", w+"/settings/pages", apitest.AdminKey, "["+strings.Join(body, ",")+"]").Want(t, 200)
	for i := range 5 {
		e.do("POST", w+"/budgets", apitest.AdminKey, fmt.Sprintf(`{"metric":"lcp","operator":"lt","value":%d,"device":"all"}`, 1000+i)).Want(t, 201)
		e.do("POST", w+"/multistep", apitest.AdminKey, fmt.Sprintf(`{"alias":"t%d","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`, i)).Want(t, 201)
	}
	type item struct {
		ID     string `json:"id"`
		Device string `json:"device"`
	}
	type listResponse struct {
		Result struct {
			List   []item  `json:"list"`
			Cursor *string `json:"cursor"`
		} `json:"result"`
	}
	for _, path := range []string{"/websites", w + "/settings/pages", w + "/pages", w + "/budgets", w + "/multistep"} {
		var whole listResponse
		e.do("GET", path, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &whole)
		if whole.Result.Cursor != nil || len(whole.Result.List) < 5 {
			t.Fatalf("%s without limit: %d items, cursor %v", path, len(whole.Result.List), whole.Result.Cursor)
		}
		for _, limit := range []int{1, 2, 3, 1000} {
			var walked []item
			cursor := ""
			for calls := 0; ; calls++ {
				q := url.Values{"limit": {fmt.Sprint(limit)}}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				var page listResponse
				e.do("GET", path+"?"+q.Encode(), apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page)
				walked = append(walked, page.Result.List...)
				if page.Result.Cursor == nil {
					break
				}
				if len(page.Result.List) == 0 || calls > 50 {
					t.Fatalf("%s limit %d: a cursor with an empty page, or no end", path, limit)
				}
				cursor = *page.Result.Cursor
			}
			if fmt.Sprint(walked) != fmt.Sprint(whole.Result.List) {
				t.Errorf("%s limit %d walked %v, want %v", path, limit, walked, whole.Result.List)
			}
		}
		for _, q := range []string{"limit=0", "limit=1001", "limit=x", "limit=", "cursor=abc", "limit=2&cursor=%21%21", "limit=2&cursor="} {
			e.do("GET", path+"?"+q, apitest.ViewerKey, nil).Want(t, 400).Problem(t)
		}
	}
}
