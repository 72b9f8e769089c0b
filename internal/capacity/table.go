package capacity

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// WriteTable writes the estimates side by side as a Markdown table, a column a size: the
// figures first, the month's bill item by item, then the quotas.
func WriteTable(w io.Writer, ests []Estimate) {
	p := message.NewPrinter(language.English)
	row := func(name string, cell func(e Estimate) string) {
		cells := []string{name}
		for _, e := range ests {
			cells = append(cells, cell(e))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	head := []string{""}
	align := []string{"---"}
	for _, e := range ests {
		head = append(head, e.Size.Name)
		align = append(align, "---:")
	}
	fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(align, " | "))
	row("audits a day (pages × devices)", func(e Estimate) string { return p.Sprintf("%d", e.AuditsPerDay) })
	row("audit workers to finish them within the window", func(e Estimate) string { return p.Sprintf("%d", e.AuditWorkers) })
	row("the day's fan-out, start to last audit queued", func(e Estimate) string {
		pages := "pages"
		if e.ListingPages == 1 {
			pages = "page"
		}
		return p.Sprintf("%.1f s (%d %s of the listing)", e.Fanout.Seconds(), e.ListingPages, pages)
	})
	row("DynamoDB units a second during the fan-out, write / read", func(e Estimate) string {
		return p.Sprintf("%.0f / %.0f", e.FanoutWrites, e.FanoutReads)
	})
	row("DynamoDB units a second during the audit window, write / read", func(e Estimate) string {
		return p.Sprintf("%.0f / %.0f", e.Writes, e.Reads)
	})
	row("busiest partition during the fan-out, write units a second (limit 1,000)", func(e Estimate) string {
		return p.Sprintf("%.0f (%s)", e.FanoutHottestWrites, e.FanoutHottestBy)
	})
	row("busiest partition during the audit window: a website's, write / read units a second (limits 1,000 / 3,000)", func(e Estimate) string {
		return p.Sprintf("%.0f / %.0f (%.1f audits finishing a second)", e.HottestWrites, e.HottestReads, e.AuditsTogether)
	})
	row("busiest item during the audit window, write units a second (limit 1,000 once the partition is split)", func(e Estimate) string {
		name := itemNames[e.HottestItem]
		if name == "" {
			name = e.HottestItem
		}
		return p.Sprintf("%.0f (%s)", e.HottestItemWrites, name)
	})
	if len(ests) > 0 {
		for i, l := range ests[0].Month {
			row(l.Item, func(e Estimate) string { return dollars(p, e.Month[i].Dollars) })
		}
	}
	row("**a month**", func(e Estimate) string { return "**" + dollars(p, e.Total) + "**" })
	row("a page-month: all / the audit worker's Lambda time alone", func(e Estimate) string {
		pages := float64(e.Size.Pages())
		return p.Sprintf("$%.4f / $%.4f (%.2f×)", e.PerPageMonth, e.AuditLambda/pages, e.Total/e.AuditLambda)
	})
	if len(ests) > 0 {
		for i, q := range ests[0].Quotas {
			row(p.Sprintf("quota: %s (default %.0f)", q.Name, q.Default), func(e Estimate) string {
				q := e.Quotas[i]
				if q.Raise() {
					return p.Sprintf("**%.0f: raise**", q.Needed)
				}
				return p.Sprintf("%.0f", q.Needed)
			})
		}
	}
}

// itemNames say what the items of a sort key's first part are, for people (the store's keys).
var itemNames = map[string]string{
	"W":    "the website's item, which each audit's transaction checks",
	"PAGE": "a page's item",
	"ROW":  "a page's summary",
}

func dollars(p *message.Printer, d float64) string {
	switch {
	case d == 0:
		return "—"
	case d < 0.01:
		return "< $0.01"
	case d < 100:
		return p.Sprintf("$%.2f", d)
	}
	return p.Sprintf("$%.0f", d)
}
