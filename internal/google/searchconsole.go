package google

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
	"google.golang.org/api/option"
	"google.golang.org/api/searchconsole/v1"
)

// Search Console answers at most 25,000 rows a query; more pages than maxSearchRows are left
// out, which no website of this service comes near.
const (
	searchRowLimit = 25000
	maxSearchRows  = 10 * searchRowLimit
)

// SearchConsole is a Search Console client acting as one service account.
type SearchConsole struct {
	client *Client
	svc    *searchconsole.Service
}

// SearchRow is a page's search analytics over a window: the page's URL as Search Console
// reports it, its clicks and impressions, and its average position.
type SearchRow struct {
	URL                           string
	Clicks, Impressions, Position float64
}

// SearchConsole builds a Search Console client for a service-account key (its JSON). The token
// endpoint is the client's own (Google's), never the key's token_uri: stored credentials must
// not be able to send the client's requests elsewhere.
func (c *Client) SearchConsole(ctx context.Context, key []byte) (*SearchConsole, error) {
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
	// The token exchange goes through the client's HTTP client as well.
	client := conf.Client(context.WithValue(ctx, oauth2.HTTPClient, c.http))
	opts := []option.ClientOption{option.WithHTTPClient(client)}
	if c.searchEndpoint != "" {
		opts = append(opts, option.WithEndpoint(c.searchEndpoint))
	}
	svc, err := searchconsole.NewService(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return &SearchConsole{client: c, svc: svc}, nil
}

// PageRows reads a property's search analytics by page from day from to day to (yyyy-mm-dd),
// every row. The data of the last two or three days are preliminary (dataState "all");
// without them a 14-day window would hold only eleven or twelve days of data.
func (s *SearchConsole) PageRows(ctx context.Context, property, from, to string) ([]SearchRow, error) {
	var rows []SearchRow
	for start := int64(0); start < maxSearchRows; start += searchRowLimit {
		req := &searchconsole.SearchAnalyticsQueryRequest{
			StartDate: from, EndDate: to, Dimensions: []string{"page"}, DataState: "all",
			Type: "web", RowLimit: searchRowLimit, StartRow: start,
		}
		var res *searchconsole.SearchAnalyticsQueryResponse
		err := s.client.retry(ctx, nil, "Search Console "+property, func(ctx context.Context) error {
			var err error
			res, err = s.svc.Searchanalytics.Query(property, req).Context(ctx).Do()
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, r := range res.Rows {
			if len(r.Keys) > 0 {
				rows = append(rows, SearchRow{URL: r.Keys[0], Clicks: r.Clicks, Impressions: r.Impressions, Position: r.Position})
			}
		}
		if len(res.Rows) < searchRowLimit {
			break
		}
	}
	return rows, nil
}
