package pullrequest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/pullrequest"
	"github.com/openvitals/openvitals/internal/pullrequest/pullrequesttest"
)

// TestGitHubEditsOneComment: the first push adds the comment, every later one edits it (found
// by its marker past the first page of comments, among others'), and each adds a check run
// with the summary's conclusion; requests are the documented ones, with the workflow's token.
func TestGitHubEditsOneComment(t *testing.T) {
	fake := pullrequesttest.GitHub(t, "acme/shop", 7)
	for _, c := range []string{"LGTM", "nit: a typo", "<!-- openvitals-testseries website=other -->\nanother website's"} {
		fake.AddComment(c)
	}
	gh, err := pullrequest.NewGitHub(http.DefaultClient, fake.URL, "ghs_token", "acme/shop", 7, "abc123")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, s := range []pullrequest.Summary{
		{Title: "1 tests, every threshold met", Conclusion: "success", Markdown: pullrequest.Marker("site1") + "\nfirst push"},
		{Title: "1 tests, 1 thresholds not met", Conclusion: "failure", Markdown: pullrequest.Marker("site1") + "\nsecond push"},
		{Title: "1 tests, every threshold met", Conclusion: "success", Markdown: pullrequest.Marker("site1") + "\nthird push"},
	} {
		if err := gh.Post(ctx, "site1", s); err != nil {
			t.Fatalf("push %d: %v", i+1, err)
		}
	}
	var ours []pullrequesttest.Comment
	for _, c := range fake.Comments() {
		if strings.Contains(c.Body, pullrequest.Marker("site1")) {
			ours = append(ours, c)
		}
	}
	if len(fake.Comments()) != 4 || len(ours) != 1 || !strings.HasSuffix(ours[0].Body, "third push") {
		t.Fatalf("comments %+v: want the three others and ours, edited to the third push", fake.Comments())
	}
	runs := fake.CheckRuns()
	if len(runs) != 3 || runs[1]["conclusion"] != "failure" || runs[2]["conclusion"] != "success" || runs[0]["head_sha"] != "abc123" ||
		runs[0]["name"] != pullrequest.CheckName || runs[0]["status"] != "completed" || runs[0]["completed_at"] == nil {
		t.Fatalf("check runs %v", runs)
	}
	if out, _ := runs[1]["output"].(map[string]any); out["title"] != "1 tests, 1 thresholds not met" || out["summary"] != pullrequest.Marker("site1")+"\nsecond push" {
		t.Errorf("check run output %v", out)
	}
	var shape []string
	for _, r := range fake.Requests() {
		if r.Auth != "Authorization: Bearer ghs_token" {
			t.Errorf("%s %s with %q", r.Method, r.Path, r.Auth)
		}
		shape = append(shape, r.Method+" "+r.Path)
	}
	want := []string{
		"GET /repos/acme/shop/issues/7/comments", "GET /repos/acme/shop/issues/7/comments", "POST /repos/acme/shop/issues/7/comments", "POST /repos/acme/shop/check-runs",
		"GET /repos/acme/shop/issues/7/comments", "GET /repos/acme/shop/issues/7/comments", "PATCH /repos/acme/shop/issues/comments/104", "POST /repos/acme/shop/check-runs",
		"GET /repos/acme/shop/issues/7/comments", "GET /repos/acme/shop/issues/7/comments", "PATCH /repos/acme/shop/issues/comments/104", "POST /repos/acme/shop/check-runs",
	}
	if strings.Join(shape, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(shape, "\n"), strings.Join(want, "\n"))
	}
}

// TestGitLabEditsOneNote: the same on a merge request, with the job's token or a configured
// one.
func TestGitLabEditsOneNote(t *testing.T) {
	for _, job := range []bool{true, false} {
		fake := pullrequesttest.GitLab(t, "42", 5)
		fake.AddComment("a review note")
		fake.AddComment("another")
		gl, err := pullrequest.NewGitLab(http.DefaultClient, fake.URL, "tok", job, "42", 5, "c0ffee12", 901)
		if err != nil {
			t.Fatal(err)
		}
		for i, body := range []string{"first push", "second push"} {
			s := pullrequest.Summary{Markdown: pullrequest.Marker("site1") + "\n" + body, Title: body, Conclusion: []string{"success", "failure"}[i],
				Link: "https://api.example.com/site1/testseries/ts_" + body[:1]}
			if err := gl.Post(context.Background(), "site1", s); err != nil {
				t.Fatal(err)
			}
		}
		cs := fake.Comments()
		if len(cs) != 3 || cs[2].Body != pullrequest.Marker("site1")+"\nsecond push" {
			t.Fatalf("job token %v: notes %+v", job, cs)
		}
		wantAuth := map[bool]string{true: "JOB-TOKEN: tok", false: "PRIVATE-TOKEN: tok"}[job]
		var shape []string
		for _, r := range fake.Requests() {
			if r.Auth != wantAuth {
				t.Errorf("%s %s with %q, want %q", r.Method, r.Path, r.Auth, wantAuth)
			}
			shape = append(shape, r.Method+" "+r.Path)
		}
		notes := "/api/v4/projects/42/merge_requests/5/notes"
		status := "POST /api/v4/projects/42/statuses/c0ffee12"
		want := []string{"GET " + notes, "POST " + notes, status, "GET " + notes, "GET " + notes, "PUT " + notes + "/103", status}
		if strings.Join(shape, "\n") != strings.Join(want, "\n") {
			t.Errorf("job token %v: requests:\n%s\nwant:\n%s", job, strings.Join(shape, "\n"), strings.Join(want, "\n"))
		}
		// A commit status per push in the pipeline, following the outcome.
		st := fake.Statuses()
		if len(st) != 2 || st[0]["state"] != "success" || st[1]["state"] != "failed" || st[1]["name"] != pullrequest.StatusName ||
			st[1]["description"] != "second push" || st[1]["pipeline_id"] != float64(901) || st[1]["sha"] != "c0ffee12" ||
			st[1]["target_url"] != "https://api.example.com/site1/testseries/ts_s" {
			t.Errorf("job token %v: statuses %v", job, st)
		}
	}
}
