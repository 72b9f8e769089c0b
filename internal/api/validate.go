package api

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/hostname"
)

// maxURLLen bounds a Search Console property (bytes), so that no single field can bloat an item.
const maxURLLen = 2048

// finiteNumber reads a number a query parameter carries, a finite one only. strconv.ParseFloat
// takes NaN and Inf in any case and sign, and answers ±Inf for a number beyond float64 (1e309);
// NaN would pass any range check after it and reach the answer, which JSON cannot hold.
func finiteNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// normalizeDomain checks that s is a host name only (no scheme, path, query or port) and returns
// it lower-cased, internationalized names in their ASCII (punycode) form. A leading "www." is kept.
// With local, an IP address or a host with a port is accepted too, for auditing pages served on
// loopback or a private network.
func normalizeDomain(s string, local bool) (string, string) {
	s = strings.TrimSpace(s)
	if local {
		if d, ok := localTarget(s); ok {
			return d, ""
		}
	}
	switch {
	case s == "":
		return "", "is required"
	case strings.Contains(s, "://"):
		return "", "must be a host name only, without a scheme such as https://"
	case strings.ContainsAny(s, "/?#"):
		return "", "must be a host name only, without a path, query or fragment"
	case strings.ContainsAny(s, "@ \t"):
		return "", "must be a host name only"
	case strings.Contains(s, ":"):
		return "", "must be a host name only, without a port"
	}
	ascii, err := hostname.ASCII(s)
	switch {
	case errors.Is(err, hostname.ErrIPAddress):
		return "", "must be a host name, not an IP address"
	case err != nil:
		return "", err.Error()
	}
	return ascii, ""
}

// localTarget accepts host:port or an IP address (with or without a port) as a local target.
func localTarget(s string) (string, bool) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, ""
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", false
		}
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return strings.ToLower(s), true
	}
	if port != "" {
		if d, msg := normalizeDomain(host, false); msg == "" || host == "localhost" {
			if d == "" {
				d = "localhost"
			}
			return d + ":" + port, true
		}
	}
	return "", false
}
