package browser

import (
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// LabUserAgent is the user agent a page load of openvitals' own browsers sends: ua followed by
// model.LabUserAgentMark, which the RUM snippet and the collect endpoint recognize, so that
// audits and multistep runs of a page carrying the snippet are never counted as real users.
func LabUserAgent(ua string) string {
	if strings.HasSuffix(ua, model.LabUserAgentMark) {
		return ua
	}
	return ua + " " + model.LabUserAgentMark
}
