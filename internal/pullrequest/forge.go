package pullrequest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v84/github"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// CheckName is the name of the check run on GitHub.
const CheckName = "openvitals"

// GitHub posts summaries on one pull request of a GitHub repository.
type GitHub struct {
	client      *github.Client
	owner, repo string
	number      int    // the pull request
	sha         string // the commit the check run is for ("": no check run)
}

// NewGitHub returns a poster for a pull request: repository is "owner/name", apiURL the REST
// API's root ("": api.github.com; a GitHub Enterprise server's or a test's otherwise), token
// the workflow's GITHUB_TOKEN.
func NewGitHub(httpClient *http.Client, apiURL, token, repository string, number int, sha string) (*GitHub, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || repo == "" {
		return nil, fmt.Errorf("repository %q is not owner/name", repository)
	}
	c := github.NewClient(httpClient).WithAuthToken(token)
	if apiURL != "" {
		// GITHUB_API_URL is the API's root as is (GitHub Enterprise's included), which
		// WithEnterpriseURLs would extend with api/v3.
		u, err := url.Parse(strings.TrimRight(apiURL, "/") + "/")
		if err != nil {
			return nil, fmt.Errorf("GitHub API URL: %w", err)
		}
		c.BaseURL = u
	}
	return &GitHub{client: c, owner: owner, repo: repo, number: number, sha: sha}, nil
}

// Post edits the pull request's comment that carries the summary's marker, or adds it, then
// creates a check run with the summary on the commit.
func (g *GitHub) Post(ctx context.Context, website string, s Summary) error {
	id, err := g.findComment(ctx, Marker(website))
	if err != nil {
		return fmt.Errorf("github: list comments: %w", err)
	}
	body := &github.IssueComment{Body: github.Ptr(s.Markdown)}
	if id != 0 {
		_, _, err = g.client.Issues.EditComment(ctx, g.owner, g.repo, id, body)
	} else {
		_, _, err = g.client.Issues.CreateComment(ctx, g.owner, g.repo, g.number, body)
	}
	if err != nil {
		return fmt.Errorf("github: write the comment: %w", err)
	}
	if g.sha == "" {
		return nil
	}
	_, _, err = g.client.Checks.CreateCheckRun(ctx, g.owner, g.repo, github.CreateCheckRunOptions{
		Name: CheckName, HeadSHA: g.sha, Status: github.Ptr("completed"), Conclusion: github.Ptr(s.Conclusion),
		CompletedAt: &github.Timestamp{Time: time.Now()},
		Output:      &github.CheckRunOutput{Title: github.Ptr(s.Title), Summary: github.Ptr(s.Markdown)},
	})
	if err != nil {
		return fmt.Errorf("github: create the check run: %w", err)
	}
	return nil
}

// findComment is the ID of the pull request's first comment holding marker (0: none).
func (g *GitHub) findComment(ctx context.Context, marker string) (int64, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		list, res, err := g.client.Issues.ListComments(ctx, g.owner, g.repo, g.number, opts)
		if err != nil {
			return 0, err
		}
		for _, c := range list {
			if strings.Contains(c.GetBody(), marker) {
				return c.GetID(), nil
			}
		}
		if res.NextPage == 0 {
			return 0, nil
		}
		opts.Page = res.NextPage
	}
}

// GitLab posts summaries on one merge request of a GitLab project.
type GitLab struct {
	client  *gitlab.Client
	project string
	mr      int64
	// sha is the commit the status is set on ("": none), pipeline the pipeline it belongs to
	// (0: GitLab picks the commit's latest).
	sha      string
	pipeline int64
}

// StatusName is the name of the commit status on GitLab, beside the pipeline's jobs.
const StatusName = "openvitals"

// NewGitLab returns a poster for a merge request: apiURL is the v4 API's root (CI_API_V4_URL),
// project the project's ID or path, token a project or personal access token, or the job's
// CI_JOB_TOKEN when job is set; sha the commit the pipeline runs for (CI_COMMIT_SHA; "": no
// commit status) and pipeline its ID (CI_PIPELINE_ID; 0: unknown).
func NewGitLab(httpClient *http.Client, apiURL, token string, job bool, project string, mr int64, sha string, pipeline int64) (*GitLab, error) {
	opts := []gitlab.ClientOptionFunc{gitlab.WithBaseURL(apiURL), gitlab.WithHTTPClient(httpClient), gitlab.WithoutRetries()}
	var c *gitlab.Client
	var err error
	if job {
		c, err = gitlab.NewJobClient(token, opts...)
	} else {
		c, err = gitlab.NewClient(token, opts...)
	}
	if err != nil {
		return nil, err
	}
	return &GitLab{client: c, project: project, mr: mr, sha: sha, pipeline: pipeline}, nil
}

// Post edits the merge request's note that carries the summary's marker, or adds it, then
// sets the commit's status in the pipeline: success or failed as the summary's conclusion,
// its title as the description, the series as its link.
func (g *GitLab) Post(ctx context.Context, website string, s Summary) error {
	if err := g.note(ctx, website, s); err != nil {
		return err
	}
	if g.sha == "" {
		return nil
	}
	state := gitlab.Success
	if s.Conclusion != "success" {
		state = gitlab.Failed
	}
	opts := &gitlab.SetCommitStatusOptions{State: state, Name: gitlab.Ptr(StatusName), Description: gitlab.Ptr(truncate(s.Title, 255))}
	if s.Link != "" {
		opts.TargetURL = gitlab.Ptr(s.Link)
	}
	if g.pipeline != 0 {
		opts.PipelineID = gitlab.Ptr(g.pipeline)
	}
	if _, _, err := g.client.Commits.SetCommitStatus(g.project, g.sha, opts, gitlab.WithContext(ctx)); err != nil {
		return fmt.Errorf("gitlab: set the commit status (a job token may not: set a token with the api scope): %w", err)
	}
	return nil
}

// truncate cuts s to at most n bytes, at a rune's start.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// note edits the merge request's note that carries the summary's marker, or adds it.
func (g *GitLab) note(ctx context.Context, website string, s Summary) error {
	marker := Marker(website)
	opts := &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}}
	for {
		notes, res, err := g.client.Notes.ListMergeRequestNotes(g.project, g.mr, opts, gitlab.WithContext(ctx))
		if err != nil {
			return fmt.Errorf("gitlab: list notes: %w", err)
		}
		for _, n := range notes {
			if strings.Contains(n.Body, marker) {
				_, _, err := g.client.Notes.UpdateMergeRequestNote(g.project, g.mr, n.ID,
					&gitlab.UpdateMergeRequestNoteOptions{Body: gitlab.Ptr(s.Markdown)}, gitlab.WithContext(ctx))
				if err != nil {
					return fmt.Errorf("gitlab: update the note: %w", err)
				}
				return nil
			}
		}
		if res.NextPage == 0 {
			break
		}
		opts.Page = res.NextPage
	}
	_, _, err := g.client.Notes.CreateMergeRequestNote(g.project, g.mr,
		&gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(s.Markdown)}, gitlab.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("gitlab: create the note: %w", err)
	}
	return nil
}
