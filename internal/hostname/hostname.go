// Package hostname checks host names as DNS takes them: the domains of websites and the hosts
// of notification channels' URLs follow this one rule.
package hostname

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/idna"
)

// MaxLen is the longest host name, in its ASCII form (what DNS counts).
const MaxLen = 253

// The ways a host name can be wrong; each reads as what is wrong with a field ("is ...").
var (
	ErrIPAddress    = errors.New("is an IP address, not a host name")
	ErrInvalid      = errors.New("is not a valid host name")
	ErrNotQualified = errors.New("must be a fully qualified host name such as example.com")
	ErrTooLong      = fmt.Errorf("must be at most %d characters in its ASCII form", MaxLen)
)

var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false))

// ASCII returns a fully qualified host name (example.com, bücher.de) in its lower-case ASCII
// form (xn--bcher-kva.de), or what is wrong with it: each label 1 to 63 letters, digits and
// hyphens, neither first nor last a hyphen, a punycode label one that decodes, at most MaxLen
// characters in all, and a top-level label that is not all digits.
func ASCII(s string) (string, error) {
	if net.ParseIP(s) != nil {
		return "", ErrIPAddress
	}
	ascii, err := profile.ToASCII(s)
	if err != nil {
		return "", ErrInvalid
	}
	ascii = strings.ToLower(ascii)
	if net.ParseIP(ascii) != nil {
		return "", ErrIPAddress
	}
	if len(ascii) > MaxLen {
		return "", fmt.Errorf("%w (%d)", ErrTooLong, len(ascii))
	}
	labels := strings.Split(ascii, ".")
	if len(labels) < 2 {
		return "", ErrNotQualified
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", ErrInvalid
		}
	}
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return "", ErrInvalid
	}
	return ascii, nil
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
