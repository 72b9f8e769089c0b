package seal

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	ctx := context.Background()
	key := GenerateKey()
	k := FixedKey(key)
	secret := []byte(`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----..."}`)
	aad := []byte("search-console/acme/w1")

	a, err := k.Seal(ctx, secret, aad)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(ctx, secret, aad)
	if bytes.Equal(a, b) {
		t.Error("sealing twice gave the same bytes: the nonce is not fresh")
	}
	if bytes.Contains(a, []byte("service_account")) {
		t.Error("the sealed value holds the plaintext")
	}
	got, err := k.Open(ctx, a, aad)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v; want the plaintext", got, err)
	}

	// Another owner, another key, a flipped bit, a truncation: none opens.
	other := FixedKey(GenerateKey())
	flipped := append([]byte(nil), a...)
	flipped[len(flipped)-1] ^= 1
	for name, try := range map[string]func() ([]byte, error){
		"other owner": func() ([]byte, error) { return k.Open(ctx, a, []byte("search-console/acme/w2")) },
		"other key":   func() ([]byte, error) { return other.Open(ctx, a, aad) },
		"altered":     func() ([]byte, error) { return k.Open(ctx, flipped, aad) },
		"truncated":   func() ([]byte, error) { return k.Open(ctx, a[:10], aad) },
		"empty":       func() ([]byte, error) { return k.Open(ctx, nil, aad) },
	} {
		if p, err := try(); !errors.Is(err, ErrOpen) || p != nil {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", name, p, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	key := GenerateKey()
	got, err := ParseKey(" " + base64.StdEncoding.EncodeToString(key) + "\n")
	if err != nil || !bytes.Equal(got, key) {
		t.Errorf("ParseKey = %x, %v; want %x", got, err, key)
	}
	for _, text := range []string{base64.RawStdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key)} {
		if got, err := ParseKey(text); err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q) = %x, %v; want %x", text, got, err, key)
		}
	}
	// The stack's generated secret: 43 random characters of the base64 alphabet, whose last
	// one may carry bits beyond the 32 bytes.
	if got, err := ParseKey("Zq8+/9AbCdEfGhIjKlMnOpQrStUvWxYz0123456789z"); err != nil || len(got) != KeySize {
		t.Errorf("ParseKey of a generated secret = %d bytes, %v", len(got), err)
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 16)), base64.StdEncoding.EncodeToString(make([]byte, 33))} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestLoadFailureIsRetried(t *testing.T) {
	calls := 0
	k := NewKeyring(func(context.Context) ([]byte, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("secret unreachable")
		}
		return GenerateKey(), nil
	})
	if _, err := k.Seal(context.Background(), []byte("x"), nil); err == nil {
		t.Fatal("Seal succeeded without a key")
	}
	if _, err := k.Seal(context.Background(), []byte("x"), nil); err != nil {
		t.Fatalf("Seal after the key became available: %v", err)
	}
	if _, err := k.Seal(context.Background(), []byte("x"), nil); err != nil || calls != 2 {
		t.Errorf("the key was loaded %d times (%v), want 2: it is kept once loaded", calls, err)
	}
}
