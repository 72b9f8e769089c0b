package rum

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
)

// DailyRow is a day's real-user views of one vital for one combination of segments.
// Website-wide rows (Page empty) are per page group, device, country and navigation type; a
// monitored page's rows are per device and navigation type (Country empty) and, apart, per
// device and country (Navigation empty), the only ways its stored tables keep them together.
type DailyRow struct {
	Page       string // a monitored page's ID; empty for the website's rows
	Group      string // the page group's name, "(none)" outside every group; empty for a page's rows
	Device     string
	Country    string
	Navigation string
	Metric     string
	Summary    // the views with the vital, its 75th percentile and ratings
}

// dailyKey is what a DailyRow's counts are merged by.
type dailyKey struct {
	page                                 string
	group, device, country, navigation   uint64
	hasCountry, hasNavigation, websiteOf bool
}

// Daily reads the real-user aggregates of a website's UTC day (yyyymmdd) for every vital from
// the day's segment tables: the website's table of every segment (browser, OS and connection
// summed) and the monitored pages' tables. A reader filtering by segments gets the same
// numbers (the same tables, the same sketches). Views a day's table could not tell apart by
// segment (it reached its size) are left out, as the segment reports leave them out; partial
// says there were some.
func (r *SegmentReader) Daily(ctx context.Context, account, website, day string) (rows []DailyRow, partial bool, err error) {
	_, _, groupName, err := r.resolve(ctx, SegmentQuery{Account: account, Website: website})
	if err != nil {
		return nil, false, err
	}
	siteDim := SegmentDim(Full)
	byNav, byCountry := PageSegmentDim(PageMasks[0]), PageSegmentDim(PageMasks[1])
	var cells []model.RUMCell
	for _, v := range Vitals {
		for _, dim := range []string{siteDim, byNav, byCountry} {
			for s := range Shards(dim) {
				cells = append(cells, model.RUMCell{Day: day, Dim: dim, Metric: v.Name, Shard: s, Daily: true})
			}
		}
	}
	stored, err := r.tables.RUMTables(ctx, account, website, cells, false)
	if err != nil {
		return nil, false, err
	}
	type metricKey struct {
		metric string
		dailyKey
	}
	counts := map[metricKey]*rollup.Counts{}
	for _, c := range cells {
		st, ok := stored[c]
		if !ok {
			continue
		}
		keyOf := func(k rollup.RowKey) (dailyKey, bool) {
			s := Segments(k.Seg)
			switch c.Dim {
			case siteDim:
				if k.Key != "" { // the overflow row
					partial = true
					return dailyKey{}, false
				}
				return dailyKey{websiteOf: true, group: DimGroup.Of(s), device: DimDevice.Of(s), country: DimCountry.Of(s),
					navigation: DimNavigation.Of(s), hasCountry: true, hasNavigation: true}, true
			case byNav:
				return dailyKey{page: k.Key, device: DimDevice.Of(s), navigation: DimNavigation.Of(s), hasNavigation: true}, k.Key != ""
			default:
				return dailyKey{page: k.Key, device: DimDevice.Of(s), country: DimCountry.Of(s), hasCountry: true}, k.Key != ""
			}
		}
		keep := func(k rollup.RowKey) bool { _, ok := keyOf(k); return ok }
		err := rollup.ScanStatTableReusing(st.Data, keep, func(k rollup.RowKey, s *rollup.Stat) {
			dk, _ := keyOf(k)
			merge(counts, metricKey{c.Metric, dk}, s)
		})
		if err != nil {
			return nil, false, fmt.Errorf("RUM table %v: %w", c, err)
		}
	}
	for k, c := range counts {
		row := DailyRow{Page: k.page, Device: DimDevice.ValueName(k.device), Metric: k.metric, Summary: summarize(c, k.metric, 0.75)}
		if k.websiteOf {
			row.Group = groupName(k.group)
		}
		if k.hasCountry {
			row.Country = DimCountry.ValueName(k.country)
		}
		if k.hasNavigation {
			row.Navigation = DimNavigation.ValueName(k.navigation)
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b DailyRow) int {
		return cmp.Or(cmp.Compare(a.Page, b.Page), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Device, b.Device),
			cmp.Compare(a.Country, b.Country), cmp.Compare(a.Navigation, b.Navigation), cmp.Compare(a.Metric, b.Metric))
	})
	return rows, partial, nil
}
