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
	a.Lab = webdriver
	for _, token := range labAgents {
		if strings.Contains(l, token) {
			a.Lab = true
			break
		}
	}
	a.Browser = browserOf(l)
	a.OS = osOf(l)
	a.Device = deviceOf(l, a.OS, touch)
	return a
}

func browserOf(l string) uint64 {
	name := "other"
	switch {
	case l == "":
		name = Unknown
	case strings.Contains(l, "edg/") || strings.Contains(l, "edga/") || strings.Contains(l, "edgios/"):
		name = "edge"
	case strings.Contains(l, "opr/") || strings.Contains(l, "opera"):
		name = "opera"
	case strings.Contains(l, "samsungbrowser/"):
		name = "samsung"
	case strings.Contains(l, "firefox/") || strings.Contains(l, "fxios/"):
		name = "firefox"
	case strings.Contains(l, "chrome/") || strings.Contains(l, "crios/") || strings.Contains(l, "chromium/"):
		name = "chrome"
	case strings.Contains(l, "safari/") && strings.Contains(l, "version/"):
		name = "safari"
	}
	v, _ := DimBrowser.Value(name)
	return v
}

func osOf(l string) uint64 {
	name := "other"
	switch {
	case l == "":
		name = Unknown
	case strings.Contains(l, "android"):
		name = "android"
	case strings.Contains(l, "iphone") || strings.Contains(l, "ipad") || strings.Contains(l, "ipod"):
		name = "ios"
	case strings.Contains(l, "cros"):
		name = "chromeos"
	case strings.Contains(l, "windows"):
		name = "windows"
	case strings.Contains(l, "macintosh") || strings.Contains(l, "mac os x"):
		name = "macos"
	case strings.Contains(l, "linux") || strings.Contains(l, "x11"):
		name = "linux"
	}
	v, _ := DimOS.Value(name)
	return v
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
