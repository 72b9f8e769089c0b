package model

import (
	"errors"
	"testing"
)

func TestWebsiteRequest(t *testing.T) {
	str := func(s string) *string { return &s }
	lower := func(d string) (string, string) {
		if d == "" {
			return "", "is required"
		}
		return "example.com", ""
	}
	site, err := WebsiteRequest{Domain: str("Example.com")}.Website("acct", lower)
	if err != nil || site.Domain != "example.com" || site.DisplayName != "example.com" || site.Method != MethodApplied || site.Account != "acct" {
		t.Errorf("a domain alone: %+v, %v", site, err)
	}
	_, err = WebsiteRequest{Method: str("guessed"), DisplayName: str("\x00")}.Website("acct", lower)
	var invalid *InvalidError
	if !errors.As(err, &invalid) || len(invalid.Fields) != 3 || invalid.Fields[0].Field != "method" ||
		invalid.Fields[1].Field != "domain" || invalid.Fields[2].Field != "displayName" {
		t.Errorf("a bad method, no domain and a bad name: %v", err)
	}
}
