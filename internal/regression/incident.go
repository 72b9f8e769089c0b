package regression

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Incidents groups a website's regressions into incidents. A regression that names its
// incident joins it; one stored before incidents existed joins the incident of its page or
// test and kind whose first bad day is at most model.IncidentWindowDays before or after its
// own, or begins one (its ID then derived as the watcher derives it, so that both agree). The
// incidents come newest first bad day first; their members oldest first, then by metric and
// device.
func Incidents(site model.Website, regs []model.Regression) []model.Incident {
	regs = slices.Clone(regs)
	slices.SortStableFunc(regs, func(a, b model.Regression) int {
		return cmp.Or(cmp.Compare(a.FirstBad, b.FirstBad), cmp.Compare(a.ID, b.ID))
	})
	var out []model.Incident
	at := map[string]int{}
	add := func(id string, r model.Regression) {
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, model.Incident{ID: id, Kind: r.Kind, Subject: r.Subject()})
		}
		out[i].Members = append(out[i].Members, r)
	}
	for _, r := range regs {
		if r.Incident != "" {
			add(r.Incident, r)
		}
	}
	for _, r := range regs {
		if r.Incident == "" {
			add(incidentOf(site, out, r), r)
		}
	}
	for i := range out {
		slices.SortStableFunc(out[i].Members, func(a, b model.Regression) int {
			return cmp.Or(cmp.Compare(a.FirstBad, b.FirstBad), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Device, b.Device))
		})
	}
	slices.SortStableFunc(out, func(a, b model.Incident) int {
		return cmp.Or(cmp.Compare(b.FirstBad(), a.FirstBad()), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// incidentOf is the ID of the incident among known that r joins, or of the one it begins.
func incidentOf(site model.Website, known []model.Incident, r model.Regression) string {
	for _, in := range known {
		if in.Kind == r.Kind && in.Subject == r.Subject() && daysApart(in.FirstBad(), r.FirstBad) <= model.IncidentWindowDays {
			return in.ID
		}
	}
	return model.IncidentID(site, r.Subject(), r.Kind, r.FirstBad)
}

// daysApart is how many days lie between two days (yyyymmdd); unreadable days are far apart.
func daysApart(a, b string) int {
	ta, errA := time.Parse(model.DayLayout, a)
	tb, errB := time.Parse(model.DayLayout, b)
	if errA != nil || errB != nil {
		return math.MaxInt
	}
	return int(math.Abs(ta.Sub(tb).Hours()) / 24)
}

// Lead is the member that stands for an incident in a chart and a comparison: the largest
// change (in percent) of its lab regressions, else of all of them.
func Lead(in model.Incident) model.Regression {
	best, bestLab := -1, false
	for i, r := range in.Members {
		lab := r.Source == SourceLab
		switch {
		case best < 0, lab && !bestLab:
		case lab == bestLab && math.Abs(r.Percent) > math.Abs(in.Members[best].Percent):
		default:
			continue
		}
		best, bestLab = i, lab
	}
	return in.Members[best]
}

// chartDays are how many days before a change its regression keeps for the chart.
const chartDays = 14

// dayMedians are a series' daily medians from chartDays before firstBad on.
func dayMedians(days []Day, firstBad string) []model.DayValue {
	t, err := time.Parse(model.DayLayout, firstBad)
	if err != nil {
		return nil
	}
	from := t.AddDate(0, 0, -chartDays).Format(model.DayLayout)
	var out []model.DayValue
	for _, d := range days {
		if d.Day >= from && len(d.Values) > 0 {
			out = append(out, model.DayValue{Day: d.Day, Value: median(d.Values)})
		}
	}
	return out
}
