package rum

import (
	"bytes"
	_ "embed"
	"encoding/json"
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

const sitePlaceholder = "__OPENVITALS_SITE__"

// Snippet is the script a website includes: web-vitals and the reporter, bound to the website.
func Snippet(website string) []byte {
	id, _ := json.Marshal(website) // a JSON string is a JavaScript string literal
	var b bytes.Buffer
	b.Grow(len(servedVitals) + len(reporter) + 64)
	b.Write(servedVitals)
	b.WriteString("\n")
	b.Write(bytes.Replace(reporter, []byte(sitePlaceholder), id, 1))
	return b.Bytes()
}
