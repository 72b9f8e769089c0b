package rum

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/openvitals/openvitals/internal/rum/entity"
)

// Attribution is why a page view's Core Web Vitals were what they were, from web-vitals'
// attribution build, reduced to what the reports need: element selectors (tag names, ids and
// classes, never text), resource and script URLs without query or fragment, durations. Runs
// of four or more digits in selectors and URLs become "{n}", so that per-item ids and numbers
// neither identify anyone nor split one element into thousands.
type Attribution struct {
	LCP *LCPAttribution `json:"l,omitempty"`
	INP *INPAttribution `json:"i,omitempty"`
	CLS *CLSAttribution `json:"c,omitempty"`
	// NotRestored are the reasons the back/forward cache gave for not restoring a back or
	// forward navigation (tokens such as "unload-listener", at most three).
	NotRestored []string `json:"b,omitempty"`
	// Start is the interaction that started a soft navigation; only soft views have one.
	Start *StartAttribution `json:"n,omitempty"`
}

// StartAttribution is the interaction that started a soft navigation of a single-page app:
// its target (a link or button, as web-vitals names elements) and type (pointer or keyboard).
type StartAttribution struct {
	Target string `json:"e,omitempty"`
	Type   string `json:"t,omitempty"`
}

// LCPAttribution is the largest contentful paint's element, its resource and its four
// phases (milliseconds): time to first byte, resource load delay, resource load duration and
// element render delay, which add up to the LCP.
type LCPAttribution struct {
	Element string     `json:"e,omitempty"`
	URL     string     `json:"u,omitempty"`
	Phases  [4]float64 `json:"p"`
}

// INPAttribution is the slowest interaction's target, its type (pointer or keyboard), its
// three phases (input delay, processing duration, presentation delay, in milliseconds) and
// the scripts that ran longest in its long animation frames.
type INPAttribution struct {
	Target  string     `json:"e,omitempty"`
	Type    string     `json:"t,omitempty"`
	Phases  [3]float64 `json:"p"`
	Scripts []Script   `json:"s,omitempty"`
}

// Script is a script of a long animation frame: its source URL, its function, the entity
// behind its host (first party, a third-party-web entity or the host's domain) and how long
// it ran in milliseconds.
type Script struct {
	URL      string  `json:"u,omitempty"`
	Function string  `json:"f,omitempty"`
	Entity   string  `json:"n,omitempty"`
	Duration float64 `json:"d"`
}

// CLSAttribution is the element the largest layout shift moved first and when (milliseconds
// since the navigation).
type CLSAttribution struct {
	Target string  `json:"e,omitempty"`
	Time   float64 `json:"t"`
}

// The names of attribution kinds in the reports.
const (
	FirstParty    = "first party"
	UnknownEntity = "unknown"
)

// The limits of what is kept.
const (
	maxSelector    = 100
	maxAttrURL     = 200
	maxFunction    = 64
	MaxScripts     = 3
	maxPhaseMillis = hour
)

// parseAttribution reads the beacon's attribution field by field: what is not valid is
// dropped, the rest kept.
func parseAttribution(raw json.RawMessage) *Attribution {
	var in struct {
		LCP *struct {
			Element json.RawMessage   `json:"e"`
			URL     json.RawMessage   `json:"u"`
			Phases  []json.RawMessage `json:"p"`
		} `json:"lcp"`
		INP *struct {
			Target  json.RawMessage   `json:"e"`
			Type    json.RawMessage   `json:"t"`
			Phases  []json.RawMessage `json:"p"`
			Scripts []json.RawMessage `json:"s"`
		} `json:"inp"`
		CLS *struct {
			Target json.RawMessage `json:"e"`
			Time   json.RawMessage `json:"t"`
		} `json:"cls"`
		Start *struct {
			Target json.RawMessage `json:"e"`
			Type   json.RawMessage `json:"t"`
		} `json:"nav"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return nil
	}
	var a Attribution
	if l := in.LCP; l != nil {
		out := LCPAttribution{Element: Selector(str(l.Element)), URL: ReduceURL(str(l.URL))}
		if phases(l.Phases, out.Phases[:]) {
			a.LCP = &out
		}
	}
	if i := in.INP; i != nil {
		out := INPAttribution{Target: Selector(str(i.Target))}
		if t := str(i.Type); t == "pointer" || t == "keyboard" {
			out.Type = t
		}
		for _, s := range i.Scripts {
			if len(out.Scripts) == MaxScripts {
				break
			}
			var sc struct {
				URL      json.RawMessage `json:"u"`
				Function json.RawMessage `json:"f"`
				Duration json.RawMessage `json:"d"`
			}
			if json.Unmarshal(s, &sc) != nil {
				continue
			}
			d, ok := number(sc.Duration)
			script := Script{URL: ReduceURL(str(sc.URL)), Function: functionName(str(sc.Function)), Duration: d}
			if ok && d <= maxPhaseMillis && (script.URL != "" || script.Function != "") {
				out.Scripts = append(out.Scripts, script)
			}
		}
		if phases(i.Phases, out.Phases[:]) {
			a.INP = &out
		}
	}
	if c := in.CLS; c != nil {
		t, ok := number(c.Time)
		if target := Selector(str(c.Target)); target != "" || ok {
			a.CLS = &CLSAttribution{Target: target, Time: min(t, maxPhaseMillis)}
		}
	}
	if n := in.Start; n != nil {
		out := StartAttribution{Target: Selector(str(n.Target))}
		if t := str(n.Type); t == "pointer" || t == "keyboard" {
			out.Type = t
		}
		if out.Target != "" || out.Type != "" {
			a.Start = &out
		}
	}
	if a.LCP == nil && a.INP == nil && a.CLS == nil && a.Start == nil {
		return nil
	}
	return &a
}

// phases reads durations into out; false unless every one is a plausible number.
func phases(raw []json.RawMessage, out []float64) bool {
	if len(raw) != len(out) {
		return false
	}
	for i, r := range raw {
		f, ok := number(r)
		if !ok || f > maxPhaseMillis {
			return false
		}
		out[i] = round3(f)
	}
	return true
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// Selector reduces an element selector: printable ASCII only, digit runs of four or more
// as {n}, and at most 100 characters (the end kept: the element itself is there).
func Selector(s string) string {
	s = digitRuns(printable(strings.TrimSpace(s)))
	if len(s) > maxSelector {
		s = s[len(s)-maxSelector:]
	}
	return s
}

// ReduceURL keeps of a resource or script URL its scheme, host and path (at most 200
// characters, digit runs of the path as {n}); data: and blob: URLs become their scheme alone; anything
// else is dropped.
func ReduceURL(raw string) string {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return ""
	case strings.HasPrefix(raw, "data:"):
		return "data:"
	case strings.HasPrefix(raw, "blob:"):
		return "blob:"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	out := printable(u.Scheme + "://" + strings.ToLower(u.Host) + digitRuns(u.EscapedPath()))
	if len(out) > maxAttrURL {
		out = out[:maxAttrURL]
	}
	return out
}

// functionName keeps a script function's name: identifier characters, dots and spaces, at
// most 64.
func functionName(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		if b.Len() == maxFunction {
			break
		}
		if r == '_' || r == '$' || r == '.' || r == ' ' || r == '<' || r == '>' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, s)
}

// digitRuns writes runs of four or more digits as {n}.
func digitRuns(s string) string {
	var b strings.Builder
	run := 0
	flush := func(end int) {
		if run >= 4 {
			b.WriteString("{n}")
		} else {
			b.WriteString(s[end-run : end])
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			run++
			continue
		}
		flush(i)
		b.WriteByte(s[i])
	}
	flush(len(s))
	return b.String()
}

// NameEntities names the entity of each script: first party for the website's own hosts
// (its domain, the www. twin and their subdomains) and for scripts without a URL (inline),
// else third-party-web's entity of the host, else the host's registrable domain.
func (a *Attribution) NameEntities(domain string) {
	if a == nil || a.INP == nil {
		return
	}
	site := strings.TrimPrefix(strings.ToLower(hostOnly(domain)), "www.")
	for i := range a.INP.Scripts {
		s := &a.INP.Scripts[i]
		host := ""
		if u, err := url.Parse(s.URL); err == nil {
			host = strings.ToLower(u.Hostname())
		}
		switch {
		case host == "" && s.URL == "":
			s.Entity = FirstParty
		case host == "":
			s.Entity = UnknownEntity
		case host == site || strings.HasSuffix(host, "."+site):
			s.Entity = FirstParty
		default:
			if s.Entity = entity.Of(host); s.Entity == "" {
				s.Entity = entity.RootDomain(host)
			}
		}
	}
}

// hostOnly drops a port from a website's domain.
func hostOnly(domain string) string {
	if u, err := url.Parse("http://" + domain); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return domain
}
