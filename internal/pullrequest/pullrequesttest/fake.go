// Package pullrequesttest fakes the parts of GitHub's and GitLab's REST APIs the pull-request
// summary uses, as their documentation describes them (methods, paths, JSON bodies, page
// links), and records every request, so that tests see what a real forge would receive.
package pullrequesttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request is one request a fake received.
type Request struct {
	Method, Path, Query string
	Auth                string         // the credential header's value (Authorization, PRIVATE-TOKEN or JOB-TOKEN)
	Body                map[string]any // the JSON body, nil without one
}

// Comment is a comment (GitHub) or note (GitLab) the fake holds.
type Comment struct {
	ID   int64
	Body string
}

// Forge is a fake forge: its comments on one pull request, its check runs and the requests.
type Forge struct {
	URL string // the API's root

	mu        sync.Mutex
	requests  []Request
	comments  []Comment
	checkRuns []map[string]any
	statuses  []map[string]any
	nextID    int64
	perPage   int // the fake's page size, small to make clients follow the pages
}

// Requests returns the requests received so far.
func (f *Forge) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Comments returns the comments the pull request has.
func (f *Forge) Comments() []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Comment(nil), f.comments...)
}

// CheckRuns returns the bodies of the check runs created.
func (f *Forge) CheckRuns() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.checkRuns...)
}

// Statuses returns the bodies of the commit statuses set (GitLab), each with the commit's
// hash under "sha" as the path named it.
func (f *Forge) Statuses() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.statuses...)
}

// AddComment adds a comment someone else wrote.
func (f *Forge) AddComment(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.comments = append(f.comments, Comment{ID: f.nextID, Body: body})
}

func newForge(t testing.TB, handle func(f *Forge, w http.ResponseWriter, r Request) bool) *Forge {
	f := &Forge{nextID: 100, perPage: 2}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		for _, h := range []string{"Authorization", "PRIVATE-TOKEN", "JOB-TOKEN"} {
			if v := r.Header.Get(h); v != "" {
				rec.Auth = h + ": " + v
			}
		}
		if raw, _ := io.ReadAll(r.Body); len(raw) > 0 {
			if err := json.Unmarshal(raw, &rec.Body); err != nil {
				http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
				return
			}
		}
		f.mu.Lock()
		f.requests = append(f.requests, rec)
		f.mu.Unlock()
		if !handle(f, w, rec) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"message":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// page answers one page of the comments, with the paging headers of each forge.
func (f *Forge) page(w http.ResponseWriter, r Request, shape func(Comment) any, gitlab bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := parseQuery(r.Query)
	n, _ := strconv.Atoi(q["page"])
	n = max(n, 1)
	from, to := min((n-1)*f.perPage, len(f.comments)), min(n*f.perPage, len(f.comments))
	out := []any{}
	for _, c := range f.comments[from:to] {
		out = append(out, shape(c))
	}
	if to < len(f.comments) {
		if gitlab {
			w.Header().Set("X-Next-Page", strconv.Itoa(n+1))
		} else {
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?page=%d&per_page=%d>; rel="next"`, f.URL, r.Path, n+1, f.perPage))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Forge) add(body string) Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := Comment{ID: f.nextID, Body: body}
	f.comments = append(f.comments, c)
	return c
}

func (f *Forge) edit(id int64, body string) (Comment, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.comments {
		if f.comments[i].ID == id {
			f.comments[i].Body = body
			return f.comments[i], true
		}
	}
	return Comment{}, false
}

// GitHub fakes GitHub's REST API for pull request number of owner/repo: list, create and
// edit issue comments (GET/POST /repos/{o}/{r}/issues/{n}/comments, PATCH
// /repos/{o}/{r}/issues/comments/{id}) and create check runs (POST /repos/{o}/{r}/check-runs).
func GitHub(t testing.TB, repo string, number int) *Forge {
	comments := fmt.Sprintf("/repos/%s/issues/%d/comments", repo, number)
	shape := func(c Comment) any {
		return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": "github-actions[bot]"}}
	}
	return newForge(t, func(f *Forge, w http.ResponseWriter, r Request) bool {
		switch {
		case r.Method == "GET" && r.Path == comments:
			f.page(w, r, shape, false)
		case r.Method == "POST" && r.Path == comments:
			body, ok := r.Body["body"].(string)
			if !ok {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed"})
				return true
			}
			writeJSON(w, http.StatusCreated, shape(f.add(body)))
		case r.Method == "PATCH" && strings.HasPrefix(r.Path, "/repos/"+repo+"/issues/comments/"):
			id, _ := strconv.ParseInt(strings.TrimPrefix(r.Path, "/repos/"+repo+"/issues/comments/"), 10, 64)
			body, _ := r.Body["body"].(string)
			c, ok := f.edit(id, body)
			if !ok {
				return false
			}
			writeJSON(w, http.StatusOK, shape(c))
		case r.Method == "POST" && r.Path == "/repos/"+repo+"/check-runs":
			for _, k := range []string{"name", "head_sha"} {
				if s, _ := r.Body[k].(string); s == "" {
					writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed: " + k})
					return true
				}
			}
			f.mu.Lock()
			f.checkRuns = append(f.checkRuns, r.Body)
			f.mu.Unlock()
			writeJSON(w, http.StatusCreated, map[string]any{"id": 1, "name": r.Body["name"], "conclusion": r.Body["conclusion"]})
		default:
			return false
		}
		return true
	})
}

// GitLab fakes GitLab's REST API (v4) for merge request iid of a project: list, create and
// update notes (GET/POST /api/v4/projects/{id}/merge_requests/{iid}/notes, PUT
// .../notes/{note_id}) and set commit statuses (POST /api/v4/projects/{id}/statuses/{sha}:
// state pending, running, success, failed or canceled; name, description, target_url,
// pipeline_id). Its URL is the v4 root (CI_API_V4_URL).
func GitLab(t testing.TB, project string, iid int) *Forge {
	notes := fmt.Sprintf("/api/v4/projects/%s/merge_requests/%d/notes", project, iid)
	statuses := fmt.Sprintf("/api/v4/projects/%s/statuses/", project)
	shape := func(c Comment) any {
		return map[string]any{"id": c.ID, "body": c.Body, "system": false, "noteable_type": "MergeRequest"}
	}
	f := newForge(t, func(f *Forge, w http.ResponseWriter, r Request) bool {
		switch {
		case r.Method == "GET" && r.Path == notes:
			f.page(w, r, shape, true)
		case r.Method == "POST" && r.Path == notes:
			body, ok := r.Body["body"].(string)
			if !ok {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "body is missing"})
				return true
			}
			writeJSON(w, http.StatusCreated, shape(f.add(body)))
		case r.Method == "PUT" && strings.HasPrefix(r.Path, notes+"/"):
			id, _ := strconv.ParseInt(strings.TrimPrefix(r.Path, notes+"/"), 10, 64)
			body, _ := r.Body["body"].(string)
			c, ok := f.edit(id, body)
			if !ok {
				return false
			}
			writeJSON(w, http.StatusOK, shape(c))
		case r.Method == "POST" && strings.HasPrefix(r.Path, statuses):
			sha := strings.TrimPrefix(r.Path, statuses)
			state, _ := r.Body["state"].(string)
			switch state {
			case "pending", "running", "success", "failed", "canceled":
			default:
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "state is invalid"})
				return true
			}
			if sha == "" || strings.Contains(sha, "/") {
				return false
			}
			st := map[string]any{"sha": sha}
			for k, v := range r.Body {
				st[k] = v
			}
			f.mu.Lock()
			f.statuses = append(f.statuses, st)
			f.mu.Unlock()
			writeJSON(w, http.StatusCreated, map[string]any{"id": 1, "sha": sha, "status": state, "name": r.Body["name"]})
		default:
			return false
		}
		return true
	})
	f.URL += "/api/v4"
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func parseQuery(raw string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(raw, "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}
