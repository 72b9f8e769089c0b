package uxworker

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/google"
	"github.com/openvitals/openvitals/internal/model"
)

// searchWindowDays is how many days search analytics cover: the 14 days before the day of
// collection.
const searchWindowDays = 14

// searchWindow is the days queried for a collection on day (yyyymmdd): the 14 days before it,
// as yyyy-mm-dd.
func searchWindow(day string) (from, to string, err error) {
	d, err := time.Parse(model.DayLayout, day)
	if err != nil {
		return "", "", fmt.Errorf("day %q: %w", day, err)
	}
	end := d.AddDate(0, 0, -1)
	return end.AddDate(0, 0, -(searchWindowDays - 1)).Format(time.DateOnly), end.Format(time.DateOnly), nil
}

// searchResults maps search rows to the website's pages by normalized path (lower-cased,
// without query, fragment or trailing slash), summing what several rows bring to one page:
// http and https, www and not, query variants. Rows of other hosts (a domain property covers
// every subdomain) and of pages not monitored are left out. Every page gets a result, with
// zero impressions when no row maps to it.
func searchResults(w model.Website, pages []model.Page, rows []google.SearchRow, day, from, to string, at time.Time) []model.SearchResult {
	type sums struct{ impressions, clicks, weighted float64 }
	byPath := map[string]*sums{}
	for _, p := range pages {
		byPath[normalizedPath(p.URL)] = &sums{}
	}
	for _, r := range rows {
		u, err := url.Parse(r.URL)
		if err != nil || !sameSite(strings.ToLower(u.Host), w.Domain) {
			continue
		}
		s, ok := byPath[normalizedPath(u.EscapedPath())]
		if !ok {
			continue
		}
		s.impressions += r.Impressions
		s.clicks += r.Clicks
		s.weighted += r.Position * r.Impressions
	}
	out := make([]model.SearchResult, len(pages))
	for i, p := range pages {
		s := byPath[normalizedPath(p.URL)]
		out[i] = model.SearchResult{Page: p.ID, Day: day, From: from, To: to, Impressions: s.impressions, Clicks: s.clicks, Collected: at}
		if s.impressions > 0 {
			out[i].Position = s.weighted / s.impressions
		}
	}
	return out
}

// normalizedPath is a URL path as the interface keys pages: lower-cased, without query or
// fragment, without a trailing slash except for the home path.
func normalizedPath(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = strings.ToLower(p)
	for len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	if p == "" {
		p = "/"
	}
	return p
}

// sameSite tells whether a search row's host is the website's domain, give or take a leading
// "www.".
func sameSite(host, domain string) bool {
	return strings.TrimPrefix(host, "www.") == strings.TrimPrefix(domain, "www.")
}
