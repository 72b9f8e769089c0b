package rum

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strconv"

	"github.com/openvitals/openvitals/internal/model"
)

// webVitals is npm web-vitals 6.2.3's attribution build (dist/web-vitals.attribution.iife.js,
// Apache-2.0, see snippet/LICENSE.web-vitals), embedded so that the function serving the
// snippet needs no files; a test keeps it identical to the pinned package in layers/rum.
//
//go:embed snippet/web-vitals.attribution.iife.js
var webVitals []byte

//go:embed snippet/reporter.js
var reporter []byte

// servedVitals is webVitals without its last line, which names a source map that is not served.
var servedVitals, _, _ = bytes.Cut(webVitals, []byte("\n//# sourceMappingURL="))

// The reporter's parameters: the website, its sample rate and the mark of openvitals' own
// browsers.
const (
	sitePlaceholder = "__OPENVITALS_SITE__"
	ratePlaceholder = "__OPENVITALS_RATE__"
	labPlaceholder  = "__OPENVITALS_LAB__"
)

// Snippet is the script a website includes: web-vitals and the reporter, bound to the website
// and its sample rate.
func Snippet(website string, set model.RUMSettings) []byte {
	// JSON strings and numbers are JavaScript literals.
	id, _ := json.Marshal(website)
	lab, _ := json.Marshal(model.LabUserAgentMark)
	rate := strconv.FormatFloat(1/float64(set.Weight()), 'g', -1, 64)
	r := bytes.Replace(reporter, []byte(sitePlaceholder), id, 1)
	r = bytes.Replace(r, []byte(ratePlaceholder), []byte(rate), 1)
	r = bytes.Replace(r, []byte(labPlaceholder), lab, 1)
	var b bytes.Buffer
	b.Grow(len(servedVitals) + len(r) + 1)
	b.Write(servedVitals)
	b.WriteString("\n")
	b.Write(r)
	return b.Bytes()
}
