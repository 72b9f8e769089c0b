package hostname

import (
	"errors"
	"strings"
	"testing"
)

func TestASCII(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":                    "example.com",
		"WWW.Example.COM":                "www.example.com",
		"bücher.de":                      "xn--bcher-kva.de",
		"xn--bcher-kva.de":               "xn--bcher-kva.de",
		"a-b.c0.example":                 "a-b.c0.example",
		strings.Repeat("a", 63) + ".com": strings.Repeat("a", 63) + ".com",
	} {
		if got, err := ASCII(in); err != nil || got != want {
			t.Errorf("ASCII(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"1.2.3.4":                         ErrIPAddress,
		"::1":                             ErrIPAddress,
		"localhost":                       ErrNotQualified,
		"xn--.example.com":                ErrInvalid,
		"xn--zz.example.com":              ErrInvalid,
		"-a.example.com":                  ErrInvalid,
		"a-.example.com":                  ErrInvalid,
		"a..example.com":                  ErrInvalid,
		"ex_ample.com":                    ErrInvalid,
		strings.Repeat("a", 64) + ".com":  ErrInvalid,
		strings.Repeat("a", 300) + ".com": ErrTooLong,
		"example.123":                     ErrInvalid,
		"":                                ErrNotQualified,
	} {
		if got, err := ASCII(in); !errors.Is(err, want) {
			t.Errorf("ASCII(%q) = %q, %v; want %v", in, got, err, want)
		}
	}
	// 253 characters in ASCII is the limit, whatever the name looks like as written.
	long := strings.Repeat(strings.Repeat("ü", 20)+".", 11) + "de"
	if _, err := ASCII(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("ASCII of a %d-character internationalized name whose ASCII form is longer than 253: %v", len([]rune(long)), err)
	}
	if _, err := ASCII(strings.Repeat("abcdefghi.", 25) + "com"); err != nil {
		t.Errorf("a 253-character name: %v", err)
	}
}
