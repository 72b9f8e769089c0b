package compare

import (
	"cmp"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// Thresholds are the least changes of a request that count: it grew when its transfer size
// grew by both GrowBytes and GrowFraction of its size before, it slowed when its duration
// grew by both SlowMs and SlowFraction. Smaller differences are the runs' noise.
type Thresholds struct {
	GrowBytes    int64
	GrowFraction float64
	SlowMs       float64
	SlowFraction float64
	// ShiftScore is the least growth of an element's layout-shift score that counts.
	ShiftScore float64
	// PhaseMs is the least change of an LCP phase that counts.
	PhaseMs float64
}

// DefaultThresholds are the thresholds of Of.
var DefaultThresholds = Thresholds{GrowBytes: 2048, GrowFraction: 0.10, SlowMs: 100, SlowFraction: 0.25, ShiftScore: 0.005, PhaseMs: 50}

// Kinds of a request's change.
const (
	RequestAdded   = "added"
	RequestRemoved = "removed"
	RequestGrew    = "grew"
	RequestSlowed  = "slowed"
)

// RequestChange is one request that differs between the loads: added, removed, grown (by
// size) or slowed (by time; a request both grown and slowed is "grew"). Base and Target are
// the request in each load (nil where absent).
type RequestChange struct {
	Kind         string
	Base, Target *model.Request
	// SizeDelta is the change of bytes on the wire, TimeDelta of duration (end - start) in ms.
	SizeDelta int64
	TimeDelta float64
}

// Request is the changed request as it is now (as it was, when removed).
func (c RequestChange) Request() model.Request {
	if c.Target != nil {
		return *c.Target
	}
	return *c.Base
}

// Loads is what changed between two loads' diagnostics.
type Loads struct {
	Filmstrip Filmstrip
	// Requests lists the changed requests: added, grown and slowed by their effect (bytes,
	// then time), then the removed ones. Unchanged counts the requests matched without a
	// change that counts.
	Requests  []RequestChange
	Unchanged int
	LCP       LCPChange
	// Shifts are the target's layout shifts of elements that shifted less (or not at all)
	// in the base load, largest first, with the elements' score in the base load.
	Shifts []ShiftChange
	// LongTasks are both loads' long tasks, in all and by script.
	LongTasks LongTasks
}

// LCPChange compares the largest contentful paints: the element (changed when its selector
// or opening tag differs) and the phases that changed by more than the threshold. Its JSON is
// the API's answer.
type LCPChange struct {
	Base           *model.LCP    `json:"base"`
	Target         *model.LCP    `json:"target"`
	ElementChanged bool          `json:"elementChanged"`
	Phases         []PhaseChange `json:"phases"`
}

// PhaseChange is one LCP phase of both loads (nil where the load had none).
type PhaseChange struct {
	Name   string   `json:"name"` // ttfb, loadDelay, loadDuration, renderDelay
	Base   *float64 `json:"base"`
	Target *float64 `json:"target"`
	Delta  float64  `json:"change"`
}

// ShiftChange is a layout shift of the target load with what its elements shifted before.
type ShiftChange struct {
	model.LayoutShift
	// Key names its elements (their selectors); BaseScore is their score in the base load
	// (0: new).
	Key       string
	BaseScore float64
}

// CompareLoads compares two loads' diagnostics with thresholds t.
func CompareLoads(base, target *model.Diagnostics, t Thresholds) Loads {
	l := Loads{
		Filmstrip: AlignFilmstrips(base, target),
		LCP:       compareLCP(base.LCP, target.LCP, t),
		Shifts:    newShifts(base.Shifts, target.Shifts, t),
		LongTasks: compareLongTasks(base.LongTasks, target.LongTasks),
	}
	l.Requests, l.Unchanged = compareRequests(base.Requests, target.Requests, t)
	return l
}

// compareRequests matches the requests by their normalized URL (in start order when several
// share one) and lists those that changed. A request that got no answer (blocked, as an
// experiment blocks it, or failed) loaded nothing: it counts as absent from its load.
func compareRequests(base, target []model.Request, t Thresholds) ([]RequestChange, int) {
	base, target = answered(base), answered(target)
	before := map[string][]*model.Request{}
	for i := range base {
		k := RequestKey(base[i].URL)
		before[k] = append(before[k], &base[i])
	}
	var out []RequestChange
	unchanged := 0
	for i := range target {
		r := &target[i]
		k := RequestKey(r.URL)
		if len(before[k]) == 0 {
			out = append(out, RequestChange{Kind: RequestAdded, Target: r, SizeDelta: r.TransferSize, TimeDelta: r.End - r.Start})
			continue
		}
		old := before[k][0]
		before[k] = before[k][1:]
		c := RequestChange{Base: old, Target: r, SizeDelta: r.TransferSize - old.TransferSize, TimeDelta: (r.End - r.Start) - (old.End - old.Start)}
		switch {
		case c.SizeDelta >= t.GrowBytes && float64(c.SizeDelta) >= t.GrowFraction*float64(old.TransferSize):
			c.Kind = RequestGrew
		case c.TimeDelta >= t.SlowMs && c.TimeDelta >= t.SlowFraction*(old.End-old.Start):
			c.Kind = RequestSlowed
		default:
			unchanged++
			continue
		}
		out = append(out, c)
	}
	for i := range base {
		r := &base[i]
		if k := RequestKey(r.URL); slices.Contains(before[k], r) {
			out = append(out, RequestChange{Kind: RequestRemoved, Base: r, SizeDelta: -r.TransferSize, TimeDelta: -(r.End - r.Start)})
		}
	}
	rank := map[string]int{RequestAdded: 0, RequestGrew: 0, RequestSlowed: 1, RequestRemoved: 2}
	slices.SortStableFunc(out, func(a, b RequestChange) int {
		return cmp.Or(cmp.Compare(rank[a.Kind], rank[b.Kind]), cmp.Compare(abs64(b.SizeDelta), abs64(a.SizeDelta)),
			cmp.Compare(math.Abs(b.TimeDelta), math.Abs(a.TimeDelta)))
	})
	return out, unchanged
}

// answered leaves out the requests that got no answer (Lighthouse gives them status -1).
func answered(rs []model.Request) []model.Request {
	out := make([]model.Request, 0, len(rs))
	for _, r := range rs {
		if r.Status >= 0 {
			out = append(out, r)
		}
	}
	return out
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// busting are query parameters whose values change from load to load without changing what
// is loaded (cache busters, tracking); a request's key drops them.
var busting = map[string]bool{"_": true, "v": true, "ver": true, "version": true, "t": true, "ts": true, "timestamp": true,
	"cb": true, "cachebust": true, "cachebuster": true, "rand": true, "random": true, "nocache": true, "gclid": true, "fbclid": true}

// contentHash is a fingerprint in a file name (app.3f9a2c1b.js): a build changes it with the
// content, so it does not tell bundles apart.
var contentHash = regexp.MustCompile(`(^|[^0-9A-Za-z])[0-9a-fA-F]{8,}($|[^0-9A-Za-z])`)

// RequestKey is what matches a request of one load with one of another: its URL without
// fragment, scheme case and default port, with content hashes in its path replaced by "*",
// and its query's parameters sorted, cache-busting and tracking ones (utm_*) left out.
func RequestKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(strings.TrimSuffix(host, ":443"), ":80")
	path := contentHash.ReplaceAllString(u.EscapedPath(), "${1}*${2}")
	q := u.Query()
	for name := range q {
		if busting[strings.ToLower(name)] || strings.HasPrefix(strings.ToLower(name), "utm_") {
			q.Del(name)
		}
	}
	key := strings.ToLower(u.Scheme) + "://" + host + path
	if enc := q.Encode(); enc != "" { // Encode sorts by name
		key += "?" + enc
	}
	return key
}

// compareLCP compares the LCP element and phases.
func compareLCP(base, target *model.LCP, t Thresholds) LCPChange {
	c := LCPChange{Base: base, Target: target, Phases: []PhaseChange{}}
	if base == nil || target == nil {
		c.ElementChanged = (base == nil) != (target == nil)
		return c
	}
	c.ElementChanged = base.Selector != target.Selector || base.Snippet != target.Snippet
	phase := func(name string, b, a *float64) {
		var bv, av float64
		if b != nil {
			bv = *b
		}
		if a != nil {
			av = *a
		}
		if d := av - bv; math.Abs(d) >= t.PhaseMs || (b == nil) != (a == nil) {
			c.Phases = append(c.Phases, PhaseChange{Name: name, Base: b, Target: a, Delta: d})
		}
	}
	phase("ttfb", &base.Phases.TTFB, &target.Phases.TTFB)
	phase("loadDelay", base.Phases.LoadDelay, target.Phases.LoadDelay)
	phase("loadDuration", base.Phases.LoadDuration, target.Phases.LoadDuration)
	phase("renderDelay", &base.Phases.RenderDelay, &target.Phases.RenderDelay)
	return c
}

// shiftKey names a shift's elements.
func shiftKey(s model.LayoutShift) string {
	sels := make([]string, 0, len(s.Elements))
	for _, e := range s.Elements {
		sels = append(sels, cmp.Or(e.Selector, e.Snippet))
	}
	return strings.Join(sels, ", ")
}

// newShifts are the target's shifts whose elements' total score grew by the threshold.
func newShifts(base, target []model.LayoutShift, t Thresholds) []ShiftChange {
	before, after := map[string]float64{}, map[string]float64{}
	for _, s := range base {
		before[shiftKey(s)] += s.Score
	}
	for _, s := range target {
		after[shiftKey(s)] += s.Score
	}
	var out []ShiftChange
	for _, s := range target {
		k := shiftKey(s)
		if after[k]-before[k] >= t.ShiftScore {
			out = append(out, ShiftChange{LayoutShift: s, Key: k, BaseScore: before[k]})
		}
	}
	slices.SortStableFunc(out, func(a, b ShiftChange) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// LongTasks compares the long tasks of two loads: in all and per script, those grown. Its JSON
// is the API's answer.
type LongTasks struct {
	Base    model.TaskTotals `json:"base"`
	Target  model.TaskTotals `json:"target"`
	Scripts []ScriptTasks    `json:"scripts"`
}

// ScriptTasks are the long tasks attributed to one script in both loads.
type ScriptTasks struct {
	URL    string           `json:"url"`
	Base   model.TaskTotals `json:"base"`
	Target model.TaskTotals `json:"target"`
	Change float64          `json:"change"` // of the total
}

// The least growth of a script's long tasks listed (a long task's least duration), and the
// most scripts listed.
const (
	minLongTaskGrowth = 50
	maxLongTaskScript = 10
)

// compareLongTasks compares two loads' long tasks, in all and per script they are attributed to.
func compareLongTasks(base, target []model.LongTask) LongTasks {
	out := LongTasks{Scripts: []ScriptTasks{}}
	byURL := map[string]*ScriptTasks{}
	script := func(url string) *ScriptTasks {
		s := byURL[url]
		if s == nil {
			s = &ScriptTasks{URL: url}
			byURL[url] = s
		}
		return s
	}
	for _, lt := range base {
		out.Base.Add(lt)
		script(lt.URL).Base.Add(lt)
	}
	for _, lt := range target {
		out.Target.Add(lt)
		script(lt.URL).Target.Add(lt)
	}
	for _, s := range byURL {
		if s.Change = s.Target.Total - s.Base.Total; s.Change >= minLongTaskGrowth {
			out.Scripts = append(out.Scripts, *s)
		}
	}
	slices.SortFunc(out.Scripts, func(a, b ScriptTasks) int {
		return cmp.Or(cmp.Compare(b.Change, a.Change), cmp.Compare(a.URL, b.URL))
	})
	if len(out.Scripts) > maxLongTaskScript {
		out.Scripts = out.Scripts[:maxLongTaskScript]
	}
	return out
}
