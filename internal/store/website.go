package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

type websiteItem struct {
	PK          string
	SK          string
	Type        string
	ID          string
	Account     string
	Domain      string
	DisplayName string
	Created     time.Time
	PageRows    bool     `dynamodbav:",omitempty"`
	RowCount    int      `dynamodbav:",omitempty"` // rows ever created, for the marks
	RowMarks    []string `dynamodbav:",omitempty"`
	// RegressionsBySubject: see model.Website.
	RegressionsBySubject bool `dynamodbav:",omitempty"`
	// Method: see model.Website ("" for a website stored before methods).
	Method string `dynamodbav:",omitempty"`
}

type siteEntryItem struct {
	PK      string
	SK      string
	Type    string
	Account string
	Website string
}

func (it siteEntryItem) ref() model.SiteRef {
	return model.SiteRef{Account: it.Account, Website: it.Website}
}

// sitePointerItem finds a website by its ID alone, for the public RUM endpoints, which know no
// account: one GetItem, whatever the number of websites.
type sitePointerItem struct {
	PK      string
	SK      string
	Type    string
	Account string
	Domain  string
}

// WebsiteByID returns the account and domain of a website from its ID alone (ID, Account and
// Domain are set); an unknown ID is ErrNotFound. Only the public RUM endpoints use it.
func (s *Store) WebsiteByID(ctx context.Context, id string) (model.Website, error) {
	var it sitePointerItem
	if err := s.getItem(ctx, sitePointerPK(id), sitePointerSK, "website "+id, &it); err != nil {
		return model.Website{}, err
	}
	return model.Website{ID: id, Account: it.Account, Domain: it.Domain}, nil
}

// AllWebsites lists every website of every account, for the daily scheduler.
func (s *Store) AllWebsites(ctx context.Context) ([]model.SiteRef, error) {
	items, err := query[siteEntryItem](ctx, s, prefixQuery(s.table, sitesPK, "", false), 0)
	if err != nil {
		return nil, fmt.Errorf("list all websites: %w", err)
	}
	return values(items, siteEntryItem.ref), nil
}

type domainLockItem struct {
	PK      string
	SK      string
	Type    string
	Website string
}

// CreateWebsite stores a new website. A domain already used in the account is a *ConflictError.
func (s *Store) CreateWebsite(ctx context.Context, w *model.Website) error {
	w.ID = model.NewID()
	w.Created = s.now()
	w.PageRows, w.RegressionsBySubject = true, true
	site, err := attributevalue.MarshalMap(websiteItem{
		PK: accountPK(w.Account), SK: websiteSK(w.ID), Type: "website",
		ID: w.ID, Account: w.Account, Domain: w.Domain, DisplayName: w.DisplayName, Created: w.Created, PageRows: true,
		RegressionsBySubject: true, Method: w.Method,
	})
	if err != nil {
		return err
	}
	lock, err := attributevalue.MarshalMap(domainLockItem{
		PK: accountPK(w.Account), SK: domainSK(w.Domain), Type: "domain", Website: w.ID,
	})
	if err != nil {
		return err
	}
	entry, err := attributevalue.MarshalMap(siteEntryItem{
		PK: sitesPK, SK: siteEntrySK(w.Account, w.ID), Type: "site", Account: w.Account, Website: w.ID,
	})
	if err != nil {
		return err
	}
	pointer, err := attributevalue.MarshalMap(sitePointerItem{
		PK: sitePointerPK(w.ID), SK: sitePointerSK, Type: "site-pointer", Account: w.Account, Domain: w.Domain,
	})
	if err != nil {
		return err
	}
	r, err := s.transact(ctx, s.putAction(site, "attribute_not_exists(PK)"), s.putAction(lock, "attribute_not_exists(PK)"),
		s.putAction(entry, ""), s.putAction(pointer, ""))
	if len(r) == 4 && r[1] == "ConditionalCheckFailed" {
		return &model.ConflictError{Field: "domain", Value: w.Domain}
	}
	if err != nil {
		return fmt.Errorf("create website: %w", err)
	}
	return nil
}

// Websites lists an account's websites, oldest first.
func (s *Store) Websites(ctx context.Context, account string) ([]model.Website, error) {
	sites, err := withPrefix(ctx, s, accountPK(account), websiteSK(""), "websites", websiteItem.website)
	if err != nil {
		return nil, err
	}
	byTime(sites, func(w model.Website) time.Time { return w.Created }, false)
	return sites, nil
}

// Website returns one website of an account; another account's website is ErrNotFound.
func (s *Store) Website(ctx context.Context, account, id string) (model.Website, error) {
	var it websiteItem
	if err := s.getItem(ctx, accountPK(account), websiteSK(id), "website "+id, &it); err != nil {
		return model.Website{}, err
	}
	return it.website(), nil
}

// DeleteWebsite removes a website and its domain lock at once and records a purge marker for
// everything else that belonged to it, all in one transaction.
func (s *Store) DeleteWebsite(ctx context.Context, w model.Website) (model.PurgeJob, error) {
	job := model.PurgeJob{Account: w.Account, Website: w.ID, Requested: s.now()}
	marker, err := s.purgeMarker(job)
	if err != nil {
		return job, err
	}
	r, err := s.transact(ctx,
		s.deleteAction(key(accountPK(w.Account), websiteSK(w.ID)), "attribute_exists(PK)"),
		s.deleteAction(key(accountPK(w.Account), domainSK(w.Domain)), ""),
		s.deleteAction(key(sitesPK, siteEntrySK(w.Account, w.ID)), ""),
		s.deleteAction(key(sitePointerPK(w.ID), sitePointerSK), ""),
		s.putAction(marker, ""))
	if len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return job, fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return job, fmt.Errorf("delete website: %w", err)
	}
	return job, nil
}

// markWebsite applies an update expression to a website's item, while it exists (else
// ErrNotFound); what says what it marks, in an error.
func (s *Store) markWebsite(ctx context.Context, w model.Website, expr string, values map[string]ddbtypes.AttributeValue, what string) error {
	err := s.update(ctx, key(accountPK(w.Account), websiteSK(w.ID)), expr, "attribute_exists(PK)", values)
	if isConditionFailed(err) {
		return fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("mark %s: %w", what, err)
	}
	return nil
}

func (it websiteItem) website() model.Website {
	return model.Website{ID: it.ID, Account: it.Account, Domain: it.Domain, DisplayName: it.DisplayName, Created: it.Created, PageRows: it.PageRows,
		RegressionsBySubject: it.RegressionsBySubject, Method: it.Method,
		// Calls adding pages at once may append their marks out of order.
		RowMarks: slices.Compact(slices.Sorted(slices.Values(it.RowMarks)))}
}
