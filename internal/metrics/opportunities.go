package metrics

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
)

// impactMetrics are the metrics whose estimated savings rank opportunities, by Lighthouse's
// name in metricSavings: each metric's weight in Lighthouse 13's performance score and its
// "good" threshold. INP is not in the lab score: it takes TBT's weight, its lab stand-in.
var impactMetrics = map[string]struct{ weight, good float64 }{
	"FCP": {10, 1800},
	"LCP": {25, 2500},
	"TBT": {30, 200},
	"CLS": {25, 0.1},
	"INP": {30, 200},
}

// Impact ranks an opportunity: each metric's estimated saving as a share of the metric's good
// threshold, weighted by the metric's weight in the performance score, summed (an LCP saving of
// 500 ms is 25 x 500/2500 = 5; a CLS saving of 0.05 is 25 x 0.05/0.1 = 12.5). Audits without
// metric savings (accessibility, best practices, SEO, most diagnostics) have 0.
func Impact(o model.Opportunity) float64 {
	sum := 0.0
	for m, v := range o.MetricSavings {
		if im, ok := impactMetrics[m]; ok {
			sum += im.weight * v / im.good
		}
	}
	return roundImpact(sum)
}

// roundImpact rounds an impact to a tenth, so that sums do not show floating-point noise.
func roundImpact(v float64) float64 { return math.Round(v*10) / 10 }

// Rank orders opportunities by impact, highest first: Impact, then the estimated bytes saved,
// then the estimated time saved, then by category in the report's order (performance,
// accessibility, best practices, SEO) and by audit id.
func Rank(opps []model.Opportunity) {
	slices.SortStableFunc(opps, func(a, b model.Opportunity) int {
		return compareImpact(Impact(a), Impact(b), a.SavingsBytes, b.SavingsBytes, a.SavingsMs, b.SavingsMs, a.Category, b.Category, a.ID, b.ID)
	})
}

// compareImpact compares two opportunities' impact, bytes and time (a first when larger), then
// their categories and ids.
func compareImpact(ia, ib, bytesA, bytesB, msA, msB float64, catA, catB, idA, idB string) int {
	if c := cmp.Compare(ib, ia); c != 0 {
		return c
	}
	if c := cmp.Compare(bytesB, bytesA); c != 0 {
		return c
	}
	if c := cmp.Compare(msB, msA); c != 0 {
		return c
	}
	if c := cmp.Compare(lighthouse.CategoryOrder(catA), lighthouse.CategoryOrder(catB)); c != 0 {
		return c
	}
	return cmp.Compare(idA, idB)
}

// Opportunity is an audit that fails in the latest result of at least one page and device,
// with its estimated savings summed over them.
type Opportunity struct {
	ID string
	model.OpportunityText
	// FirstSeen is the first day it failed on any page of the website (zero if unrecorded).
	FirstSeen time.Time
	// Pages are where it fails in the latest results, in the page list's order.
	Pages []PageSavings
	// Impact, SavingsMs, SavingsBytes and MetricSavings are the sums of the pages'.
	Impact, SavingsMs, SavingsBytes float64
	MetricSavings                   map[string]float64
}

// PageDevice is a page on one device.
type PageDevice struct {
	Page   model.Page
	Device string
}

// PageSavings is where an opportunity fails, with what fixing it there saves.
type PageSavings struct {
	PageDevice
	Impact, SavingsMs, SavingsBytes float64
}

// Opportunities lists every audit that fails in a page's latest result of the window, ranked
// by impact over the website (Impact summed over its pages and devices, then bytes, time,
// category and id).
//
// It reads the pages' rows without their days (each row keeps its page's latest opportunities
// with their savings beside its summary) and the website's opportunity items for their texts:
// a few queries whatever the number of pages and results. An opportunity recorded before its
// texts were kept has them read from one latest result where it occurs.
func (r *Reader) Opportunities(ctx context.Context, w model.Website) ([]Opportunity, error) {
	ls, err := r.opportunityListings(ctx, w)
	if err != nil {
		return nil, err
	}
	seen, err := r.store.Opportunities(ctx, w)
	if err != nil {
		return nil, err
	}
	out := opportunities(ls, seen)
	for i, o := range out {
		if o.Title != "" {
			continue
		}
		where := o.Pages[0]
		latest, ok, err := r.LatestResult(ctx, w, where.Page.ID, where.Device)
		if err != nil {
			return nil, err
		}
		if j := slices.IndexFunc(latest.Opportunities, func(x model.Opportunity) bool { return x.ID == o.ID }); ok && j >= 0 {
			out[i].OpportunityText = latest.Opportunities[j].Text()
		}
	}
	return out, nil
}

// opportunities groups the listings' latest opportunities by audit id and ranks them; seen
// gives their first days and texts.
func opportunities(ls []Listing, seen map[string]model.SeenOpportunity) []Opportunity {
	byID := map[string]int{}
	var out []Opportunity
	for _, l := range ls {
		for _, o := range l.Opportunities {
			i, ok := byID[o.ID]
			if !ok {
				i = len(out)
				byID[o.ID] = i
				start, _ := time.Parse(model.DayLayout, seen[o.ID].FirstSeen)
				out = append(out, Opportunity{ID: o.ID, OpportunityText: seen[o.ID].OpportunityText, FirstSeen: start, Pages: []PageSavings{}})
			}
			ps := PageSavings{PageDevice: PageDevice{l.Page, l.Device}, Impact: Impact(o), SavingsMs: o.SavingsMs, SavingsBytes: o.SavingsBytes}
			item := &out[i]
			item.Pages = append(item.Pages, ps)
			item.Impact = roundImpact(item.Impact + ps.Impact)
			item.SavingsMs += ps.SavingsMs
			item.SavingsBytes += ps.SavingsBytes
			for m, v := range o.MetricSavings {
				if item.MetricSavings == nil {
					item.MetricSavings = map[string]float64{}
				}
				item.MetricSavings[m] = Round(strings.ToLower(m), item.MetricSavings[m]+v)
			}
			if item.Category == "" {
				item.Category = o.Category
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Opportunity) int {
		return compareImpact(a.Impact, b.Impact, a.SavingsBytes, b.SavingsBytes, a.SavingsMs, b.SavingsMs, a.Category, b.Category, a.ID, b.ID)
	})
	return out
}
