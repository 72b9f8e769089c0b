package channel

import "testing"

// TestMaskRecipients: recipients in the clear and masked ones show alike.
func TestMaskRecipients(t *testing.T) {
	for in, want := range map[string]string{
		"perf@example.com, o@ops.example.org":    "p***@example.com, o***@ops.example.org",
		"p***@example.com, o***@ops.example.org": "p***@example.com, o***@ops.example.org",
		"élise@exämple.fr":                       "é***@exämple.fr",
		"":                                       "",
		"nobody":                                 "***",
	} {
		if got := MaskRecipients(in); got != want {
			t.Errorf("MaskRecipients(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckURL: hosts and ports as DNS and TCP take them.
func TestCheckURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://hooks.example.com/x":       true,
		"https://hooks.example.com:8443/x":  true,
		"https://203.0.113.5/x":             true,
		"https://[2001:db8::1]:443/x":       true,
		"https://bücher.example/x":          true,
		"https://hooks.example.com:99999/x": false,
		"https://hooks.example.com:0/x":     false,
		"https://xn--.example.com/x":        false,
		"https://localhost/x":               false,
		"https://u:p@hooks.example.com/x":   false,
		"http://hooks.example.com/x":        false,
	} {
		if msg := CheckURL(raw, false); (msg == "") != ok {
			t.Errorf("CheckURL(%q) = %q, want ok %v", raw, msg, ok)
		}
	}
	if msg := CheckURL("http://localhost:8090/hook", true); msg != "" {
		t.Errorf("a local target with private targets allowed: %q", msg)
	}
}
