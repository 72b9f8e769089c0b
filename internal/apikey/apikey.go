// Package apikey makes and hashes API keys. Keys carry 160 random bits, so a plain SHA-256 of
// the key is a safe way to store and look it up (no salt or slow hash is needed for
// high-entropy secrets).
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// Prefix starts every generated key, so that keys are recognisable in logs and secret scanners.
const Prefix = "ov_"

// MinLength is the shortest key accepted from configuration.
const MinLength = 12

// Generate returns a fresh random key.
func Generate() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return Prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Hash returns the hex SHA-256 of a key: the only form in which keys are stored.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
