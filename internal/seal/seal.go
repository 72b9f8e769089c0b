// Package seal encrypts the secrets openvitals stores (Search Console service-account keys)
// with AES-256-GCM, so that the table alone, or a backup of it, gives none of them away.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// version is the first byte of every sealed value, so that a later format can be told apart.
const version = 1

// ErrOpen means a sealed value could not be opened: it was sealed under another key or for
// another owner, or it was altered.
var ErrOpen = errors.New("sealed value cannot be opened with this key")

// Keyring seals and opens values under one key, loaded on first use so that functions that
// never touch a secret do not pay for reading the key.
type Keyring struct {
	load func(context.Context) ([]byte, error)
	mu   sync.Mutex
	aead cipher.AEAD
}

// NewKeyring returns a Keyring whose key load returns on first use. A failed load is tried
// again on the next use.
func NewKeyring(load func(context.Context) ([]byte, error)) *Keyring {
	return &Keyring{load: load}
}

// FixedKey returns a Keyring over a key at hand (tests, and the key of a local process).
func FixedKey(key []byte) *Keyring {
	k := append([]byte(nil), key...)
	return NewKeyring(func(context.Context) ([]byte, error) { return k, nil })
}

// GenerateKey returns a fresh random key.
func GenerateKey() []byte {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// ParseKey decodes a key given as base64 of KeySize bytes, padded (44 characters, as
// `openssl rand -base64 32` writes it) or not (43, as the stack's generated secret is), in the
// standard or the URL alphabet.
func ParseKey(b64 string) ([]byte, error) {
	text := strings.TrimRight(strings.TrimSpace(b64), "=")
	k, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		k, err = base64.RawURLEncoding.DecodeString(text)
	}
	if err != nil {
		return nil, fmt.Errorf("key is not base64: %w", err)
	}
	if len(k) != KeySize {
		return nil, fmt.Errorf("key is %d bytes, want %d (base64 of 32 random bytes: openssl rand -base64 32)", len(k), KeySize)
	}
	return k, nil
}

func (k *Keyring) cipher(ctx context.Context) (cipher.AEAD, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.aead != nil {
		return k.aead, nil
	}
	key, err := k.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the credentials key: %w", err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("the credentials key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		return nil, err
	}
	return k.aead, nil
}

// Seal encrypts plaintext for an owner: aad (say, the account and website it belongs to) is
// authenticated, not stored, so that a sealed value copied to another owner does not open.
func (k *Keyring) Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error) {
	aead, err := k.cipher(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out[0] = version
	_, _ = rand.Read(out[1:]) // random 96-bit nonces: safe far beyond the number of values sealed here
	return aead.Seal(out, out[1:], plaintext, aad), nil
}

// Open decrypts what Seal returned for the same aad; anything else is ErrOpen.
func (k *Keyring) Open(ctx context.Context, sealed, aad []byte) ([]byte, error) {
	aead, err := k.cipher(ctx)
	if err != nil {
		return nil, err
	}
	n := aead.NonceSize()
	if len(sealed) < 1+n+aead.Overhead() || sealed[0] != version {
		return nil, ErrOpen
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
