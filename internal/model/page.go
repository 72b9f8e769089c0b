package model

import (
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model/step"
)

// MaxPagesPerCall is how many pages one CreatePages call may write: one transaction of
// DynamoDB holds at most 100 actions, and every page is one conditional put.
const MaxPagesPerCall = 100

// Devices are the devices a page is audited on and a multistep test runs on.
var Devices = []string{"desktop", "mobile"}

// Page is a monitored page of a website. The API shows it as it is (its JSON names), when it
// was created aside.
type Page struct {
	ID      string    `json:"id"`
	URL     string    `json:"url"` // path relative to the website's domain, starting with "/"
	Alias   string    `json:"alias"`
	Created time.Time `json:"-"`
}

// PagePatch is one page of a create or update request; nil means omitted.
type PagePatch struct {
	URL   *string `json:"url"`
	Alias *string `json:"alias"`
}

// NewPages checks the pages of a create request, 1 to MaxPagesPerCall of them with no url
// twice, and returns them; each is named by its index ("[2].url").
func NewPages(in []PagePatch) ([]Page, error) {
	var errs FieldErrors
	switch {
	case len(in) == 0:
		errs.Add("body", "send an array of 1 to %d pages", MaxPagesPerCall)
	case len(in) > MaxPagesPerCall:
		errs.Add("body", "at most %d pages a call, not %d", MaxPagesPerCall, len(in))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	pages := make([]Page, len(in))
	seen := make(map[string]int, len(in))
	for i, p := range in {
		field := fmt.Sprintf("[%d]", i)
		pages[i] = p.apply(Page{}, field+".", &errs)
		if first, dup := seen[pages[i].URL]; dup && pages[i].URL != "" {
			errs.Add(field+".url", "repeats the url of [%d]", first)
		}
		seen[pages[i].URL] = i
	}
	return pages, errs.Err()
}

// Update applies an update's patch, which must send url, alias or both, over the stored page
// that read reads, and returns the page as stored and as updated.
func (in PagePatch) Update(read func() (Page, error)) (old, updated Page, err error) {
	if in.URL == nil && in.Alias == nil {
		return old, updated, FieldErrors{{Field: "body", Message: "send url, alias or both"}}.Err()
	}
	if old, err = read(); err != nil {
		return old, updated, err
	}
	var errs FieldErrors
	updated = in.apply(old, "", &errs)
	return old, updated, errs.Err()
}

// apply applies the patch over base (the stored page, or empty for a new one) and records what
// is wrong under prefix. A new page's alias defaults to its url.
func (in PagePatch) apply(base Page, prefix string, errs *FieldErrors) Page {
	p := base
	if in.URL != nil {
		p.URL = *in.URL
	}
	if in.URL != nil || base.URL == "" {
		if msg := step.CheckPath(p.URL); msg != "" {
			errs.Add(prefix+"url", "%s", msg)
		}
	}
	if in.Alias != nil && *in.Alias != "" {
		p.Alias = *in.Alias
		if msg := CheckName(p.Alias); msg != "" {
			errs.Add(prefix+"alias", "%s", msg)
		}
	} else if p.Alias == "" {
		p.Alias = p.URL
	}
	return p
}
