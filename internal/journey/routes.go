package journey

import (
	"slices"
	"sort"
)

// SoftNavigation is a route change of a single-page app made by a step of the run: Chromium's
// soft-navigation entry (an interaction that changed the URL with the History or Navigation
// API and painted new content), with the Core Web Vitals of the route it led to, as
// web-vitals' reportSoftNavs counts them in the field.
type SoftNavigation struct {
	// Step is the index (from 0) of the step whose interaction started the navigation.
	Step int
	// URL is the route's address.
	URL string
	// LCP is the time from the interaction to the largest paint it caused, in milliseconds
	// (Chromium's interaction-contentful-paint entries of the navigation's interaction); nil
	// when the browser reported none.
	LCP *float64
	// LCPElement is that paint's element, as web-vitals names it ("#hero", "main>h1.title").
	LCPElement string
	// CLS is the largest session window of the route's layout shifts without recent input
	// (shifts within 1 s of each other, 5 s at most), as web-vitals' CLS.
	CLS float64
	// INP is the longest interaction on the route, in milliseconds (the largest Event Timing
	// entry with its navigationId, 16 ms threshold); nil when none was that long. The
	// interaction that leaves the route for the next one counts on the route it leaves, as
	// in the field.
	INP *float64
	// INPTarget is the element of that interaction's longest entry.
	INPTarget string
}

// routeKey is a navigation of a document: navigationIds are only told apart within one.
type routeKey struct {
	doc string
	nav uint64
}

// routeShift is a layout shift of a route.
type routeShift struct{ at, value float64 }

// routeData is what happened on one route (soft navigation or not), whatever came first.
type routeData struct {
	inp       float64
	inpTarget string
	shifts    []routeShift
	// paints are the interaction-contentful-paints, by the interaction that made them.
	paints map[uint64]routePaint
}

type routePaint struct {
	value   float64
	element string
}

// routeInput is a pointerdown or keydown and the step being played when it was reported.
type routeInput struct {
	doc  string
	at   float64
	step int
}

// routeSoft is a soft-navigation entry.
type routeSoft struct {
	key         routeKey
	interaction uint64
	url         string
	at          float64
	// step is the step being played when the entry arrived: used when no input of the page
	// started it (a select step, for one).
	step int
}

// routes gathers the page's reports on soft navigations. The recorder's lock guards it.
type routes struct {
	data   map[routeKey]*routeData
	softs  []routeSoft
	inputs []routeInput
}

func (rs *routes) at(doc string, nav uint64) *routeData {
	if rs.data == nil {
		rs.data = map[routeKey]*routeData{}
	}
	k := routeKey{doc, nav}
	d := rs.data[k]
	if d == nil {
		d = &routeData{}
		rs.data[k] = d
	}
	return d
}

func (rs *routes) event(doc string, nav uint64, duration float64, target string) {
	d := rs.at(doc, nav)
	if duration > d.inp {
		d.inp, d.inpTarget = duration, target
	}
}

func (rs *routes) shift(doc string, nav uint64, at, value float64) {
	d := rs.at(doc, nav)
	d.shifts = append(d.shifts, routeShift{at, value})
}

func (rs *routes) paint(doc string, nav, interaction uint64, value float64, element string) {
	d := rs.at(doc, nav)
	if d.paints == nil {
		d.paints = map[uint64]routePaint{}
	}
	if p, ok := d.paints[interaction]; !ok || value > p.value {
		d.paints[interaction] = routePaint{value, element}
	}
}

func (rs *routes) input(doc string, at float64, step int) {
	rs.inputs = append(rs.inputs, routeInput{doc, at, step})
}

func (rs *routes) soft(doc string, nav, interaction uint64, url string, at float64, step int) {
	for _, s := range rs.softs {
		if s.key == (routeKey{doc, nav}) {
			return // reported twice (a buffered entry)
		}
	}
	rs.softs = append(rs.softs, routeSoft{key: routeKey{doc, nav}, interaction: interaction, url: url, at: at, step: step})
}

// inputSlack covers the rounding of event times: a soft navigation starts at its click's time,
// the pointerdown before it.
const inputSlack = 1.0

// result is each soft navigation with its route's vitals, in the order they happened.
func (rs *routes) result() []SoftNavigation {
	var out []SoftNavigation
	for _, s := range rs.softs {
		sn := SoftNavigation{Step: s.step, URL: s.url}
		// The step of the latest input of the document at or before the navigation's start.
		best := -1.0
		for _, in := range rs.inputs {
			if in.doc == s.key.doc && in.at <= s.at+inputSlack && in.at > best {
				best, sn.Step = in.at, in.step
			}
		}
		if d := rs.data[s.key]; d != nil {
			if p, ok := d.paints[s.interaction]; ok {
				v := p.value
				sn.LCP, sn.LCPElement = &v, p.element
			}
			if d.inp > 0 {
				v := d.inp
				sn.INP, sn.INPTarget = &v, d.inpTarget
			}
			sn.CLS = windowedCLS(d.shifts)
		}
		out = append(out, sn)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}

// windowedCLS is web-vitals' CLS of a list of shifts: the largest sum of a session window
// (shifts less than 1 s apart, the window 5 s long at most).
func windowedCLS(shifts []routeShift) float64 {
	shifts = slices.Clone(shifts)
	slices.SortFunc(shifts, func(a, b routeShift) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	var best, sum, first, last float64
	for i, s := range shifts {
		if i == 0 || s.at-last >= 1000 || s.at-first >= 5000 {
			sum, first = 0, s.at
		}
		sum += s.value
		last = s.at
		best = max(best, sum)
	}
	return best
}
