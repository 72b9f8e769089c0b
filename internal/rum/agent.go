package rum

import (
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// Agent is what a beacon's User-Agent header (and the snippet's hints) tell of the browser.
type Agent struct {
	Device, Browser, OS uint64 // values of DimDevice, DimBrowser, DimOS
	// OwnLab is one of openvitals' own browsers (model.LabUserAgentMark): never counted.
	OwnLab bool
	// Lab is another known lab agent (a synthetic monitor, an automated or headless browser):
	// dropped for websites that exclude them.
	Lab bool
}

// labAgents are user-agent tokens of synthetic monitors and automated browsers: Lighthouse
// (PageSpeed Insights), WebPageTest, GTmetrix, Pingdom, SpeedCurve, Calibre, DebugBear,
// Datadog, Catchpoint, Checkly, New Relic, Dynatrace synthetic, Uptrends, Site24x7, headless
// Chrome and Playwright's and Puppeteer's defaults, and bots that run scripts.
var labAgents = []string{
	"chrome-lighthouse", "lighthouse", "ptst/", "webpagetest", "gtmetrix", "pingdom", "speedcurve",
	"calibre", "debugbear", "datadogsynthetics", "catchpoint", "checkly", "newrelicsynthetics",
	"ruxitsynthetic", "dynatrace", "uptrends", "site24x7", "headlesschrome", "playwright",
	"puppeteer", "phantomjs", "electron/", "googlebot", "bingbot", "yandexbot", "baiduspider",
	"duckduckbot", "applebot", "bot/", "crawler", "spider",
}

// ClassifyAgent reads a user agent. touch tells that the page saw more than one touch point,
// which tells an iPad (whose Safari says Macintosh) from a Mac; webdriver that the page saw
// navigator.webdriver set (an automated browser).
func ClassifyAgent(ua string, touch, webdriver bool) Agent {
	var a Agent
	if strings.Contains(ua, model.LabUserAgentMark) {
		a.OwnLab = true
	}
	l := strings.ToLower(ua)
	a.Lab = webdriver || containsAny(l, labAgents)
	a.Browser = browserOf(l)
	a.OS = osOf(l)
	a.Device = deviceOf(l, a.OS, touch)
	return a
}

// agentRule says that a user agent holding any of its tokens, and every one of also, is name.
type agentRule struct {
	name   string
	tokens []string
	also   []string
}

// browserRules and osRules tell a lowercased user agent's browser and operating system: the
// first rule it matches. Order matters: Edge and Opera also say Chrome, Chrome also says
// Safari, Android also says Linux.
var (
	browserRules = []agentRule{
		{name: "edge", tokens: []string{"edg/", "edga/", "edgios/"}},
		{name: "opera", tokens: []string{"opr/", "opera"}},
		{name: "samsung", tokens: []string{"samsungbrowser/"}},
		{name: "firefox", tokens: []string{"firefox/", "fxios/"}},
		{name: "chrome", tokens: []string{"chrome/", "crios/", "chromium/"}},
		{name: "safari", tokens: []string{"safari/"}, also: []string{"version/"}},
	}
	osRules = []agentRule{
		{name: "android", tokens: []string{"android"}},
		{name: "ios", tokens: []string{"iphone", "ipad", "ipod"}},
		{name: "chromeos", tokens: []string{"cros"}},
		{name: "windows", tokens: []string{"windows"}},
		{name: "macos", tokens: []string{"macintosh", "mac os x"}},
		{name: "linux", tokens: []string{"linux", "x11"}},
	}
)

func browserOf(l string) uint64 { return classify(DimBrowser, l, browserRules) }

func osOf(l string) uint64 { return classify(DimOS, l, osRules) }

// classify returns dim's value of the first rule the lowercased user agent l matches: Unknown
// for an empty one, "other" when it matches none.
func classify(dim *Dim, l string, rules []agentRule) uint64 {
	name := "other"
	if l == "" {
		name = Unknown
	}
	for _, r := range rules {
		if l != "" && containsAny(l, r.tokens) && containsAll(l, r.also) {
			name = r.name
			break
		}
	}
	v, _ := dim.Value(name)
	return v
}

func containsAny(s string, tokens []string) bool {
	for _, t := range tokens {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

func containsAll(s string, tokens []string) bool {
	for _, t := range tokens {
		if !strings.Contains(s, t) {
			return false
		}
	}
	return true
}

func deviceOf(l string, os uint64, touch bool) uint64 {
	name := "desktop"
	android, _ := DimOS.Value("android")
	macos, _ := DimOS.Value("macos")
	switch {
	case l == "":
		name = Unknown
	case strings.Contains(l, "ipad") || strings.Contains(l, "tablet") || (os == android && !strings.Contains(l, "mobile")) ||
		(os == macos && touch):
		name = "tablet"
	case strings.Contains(l, "mobi") || strings.Contains(l, "iphone") || strings.Contains(l, "ipod") || os == android:
		name = "mobile"
	}
	v, _ := DimDevice.Value(name)
	return v
}
