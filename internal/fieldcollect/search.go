package fieldcollect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/searchconsole/v1"

	"github.com/openvitals/openvitals/internal/store"
)

// searchWindowDays is how many days search analytics cover: the 14 days before the day of
// collection.
const searchWindowDays = 14

// Search Console answers at most 25,000 rows a query; more pages than maxSearchRows are left
// out, which no website of this service comes near.
const (
	searchRowLimit = 25000
	maxSearchRows  = 10 * searchRowLimit
)

// searchClient builds a Search Console client for a service-account key. The token endpoint
// is the collector's own (Google's), never the key's token_uri: stored credentials must not be
// able to send the collector's requests elsewhere.
func (c *Collector) searchClient(ctx context.Context, key []byte) (*searchconsole.Service, error) {
	var k struct {
		ClientEmail  string `json:"client_email"`
		PrivateKey   string `json:"private_key"`
		PrivateKeyID string `json:"private_key_id"`
	}
	if err := json.Unmarshal(key, &k); err != nil {
		return nil, fmt.Errorf("read the service-account key: %w", err)
	}
	conf := &jwt.Config{
		Email: k.ClientEmail, PrivateKey: []byte(k.PrivateKey), PrivateKeyID: k.PrivateKeyID,
		Scopes: []string{searchconsole.WebmastersReadonlyScope}, TokenURL: c.tokenURL,
	}
	// The token exchange goes through the collector's HTTP client as well.
	client := conf.Client(context.WithValue(ctx, oauth2.HTTPClient, c.http))
	opts := []option.ClientOption{option.WithHTTPClient(client)}
	if c.searchEndpoint != "" {
		opts = append(opts, option.WithEndpoint(c.searchEndpoint))
	}
	return searchconsole.NewService(ctx, opts...)
}

// searchWindow is the days queried for a collection on day (yyyymmdd): the 14 days before it,
// as yyyy-mm-dd.
func searchWindow(day string) (from, to string, err error) {
	d, err := time.Parse(store.DayLayout, day)
	if err != nil {
		return "", "", fmt.Errorf("day %q: %w", day, err)
	}
	end := d.AddDate(0, 0, -1)
	return end.AddDate(0, 0, -(searchWindowDays - 1)).Format(time.DateOnly), end.Format(time.DateOnly), nil
}

// searchRows reads a property's search analytics by page over the window, every row. The
// data of the last two or three days are preliminary (dataState "all"); without them the
// window would hold only eleven or twelve days of data.
func (c *Collector) searchRows(ctx context.Context, svc *searchconsole.Service, property, from, to string) ([]*searchconsole.ApiDataRow, error) {
	var rows []*searchconsole.ApiDataRow
	for start := int64(0); start < maxSearchRows; start += searchRowLimit {
		req := &searchconsole.SearchAnalyticsQueryRequest{
			StartDate: from, EndDate: to, Dimensions: []string{"page"}, DataState: "all",
			Type: "web", RowLimit: searchRowLimit, StartRow: start,
		}
		var res *searchconsole.SearchAnalyticsQueryResponse
		err := c.retry(ctx, nil, "Search Console "+property, func(ctx context.Context) error {
			var err error
			res, err = svc.Searchanalytics.Query(property, req).Context(ctx).Do()
			return err
		})
		if err != nil {
			return nil, err
		}
		rows = append(rows, res.Rows...)
		if len(res.Rows) < searchRowLimit {
			break
		}
	}
	return rows, nil
}

// searchResults maps search rows to the website's pages by normalized path (lower-cased,
// without query, fragment or trailing slash), summing what several rows bring to one page:
// http and https, www and not, query variants. Rows of other hosts (a domain property covers
// every subdomain) and of pages not monitored are left out. Every page gets a result, with
// zero impressions when no row maps to it.
func searchResults(w store.Website, pages []store.Page, rows []*searchconsole.ApiDataRow, day, from, to string, at time.Time) []store.SearchResult {
	type sums struct{ impressions, clicks, weighted float64 }
	byPath := map[string]*sums{}
	for _, p := range pages {
		byPath[normalizedPath(p.URL)] = &sums{}
	}
	for _, r := range rows {
		if len(r.Keys) == 0 {
			continue
		}
		u, err := url.Parse(r.Keys[0])
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
	out := make([]store.SearchResult, len(pages))
	for i, p := range pages {
		s := byPath[normalizedPath(p.URL)]
		out[i] = store.SearchResult{Page: p.ID, Day: day, From: from, To: to, Impressions: s.impressions, Clicks: s.clicks, Collected: at}
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

// permanent tells whether an API's answer will not change by asking again: bad requests,
// refused credentials, missing permissions.
func permanent(err error) bool {
	code, ok := statusOf(err)
	return ok && code >= 400 && code < 500 && code != 429
}

// message is an error as a user can act on it: the API's own message when there is one.
func message(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code, desc := re.ErrorCode, re.ErrorDescription
		if code == "" {
			// The JWT flow leaves the token endpoint's answer unparsed.
			var body struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			_ = json.Unmarshal(re.Body, &body)
			code, desc = body.Error, body.Description
		}
		return strings.TrimSuffix("the service account's key was refused: "+code+": "+desc, ": ")
	}
	var g *googleapi.Error
	if errors.As(err, &g) && g.Message != "" {
		return fmt.Sprintf("%d: %s", g.Code, g.Message)
	}
	return err.Error()
}
