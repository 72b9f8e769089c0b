// Package geo finds the country of a client address with the embedded IP-to-country table of
// github.com/phuslu/iploc. It is its own package because the table adds ~4 MB to a binary:
// only the RUM aggregator links it.
package geo

import (
	"net"
	"net/netip"
	"strings"

	"github.com/phuslu/iploc"
)

// Unknown is the country of an address the table does not place.
const Unknown = "XX"

// Country returns the ISO 3166-1 alpha-2 code of an address ("203.0.113.9" or with a port), or
// Unknown for loopback, private and unplaced addresses.
func Country(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(strings.TrimSpace(host))
	if err != nil {
		return Unknown
	}
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() {
		return Unknown
	}
	cc := iploc.IPCountry(ip)
	if len(cc) != 2 || cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z' {
		return Unknown
	}
	return cc
}
