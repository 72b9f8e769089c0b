package model

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameLen bounds a display name or alias, in characters, so that no name bloats an item.
const maxNameLen = 200

// CheckName checks a display name or alias: 1 to maxNameLen characters of printable text. It
// says what is wrong, "" when nothing is.
func CheckName(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "must not be empty"
	case utf8.RuneCountInString(s) > maxNameLen:
		return fmt.Sprintf("must be at most %d characters", maxNameLen)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }) >= 0:
		return "must not contain control characters or invalid UTF-8"
	}
	return ""
}

// checkHeaderValue checks text a browser sends in a request header (or matches against a
// request's URL): printable, no line break, at most max bytes. It says what is wrong, "" when
// nothing is.
func checkHeaderValue(v string, max int) string {
	if len(v) > max || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Sprintf("must be up to %d bytes of printable text", max)
	}
	return ""
}
