// Package model is openvitals' vocabulary: the plain types of what it stores and answers
// (accounts, websites, pages, results, budgets, tests, events...), the errors every layer
// shares (ErrNotFound, ConflictError...), and the rules that belong to a type itself, such as
// its validation and the measurement method's calibration. Of openvitals it imports only its
// own model/step, and every other package may import it.
package model

import (
	"crypto/rand"
	"errors"
	"fmt"
)

// ErrNotFound is returned (wrapped) when an item does not exist or belongs to another account.
var ErrNotFound = errors.New("not found")

// ConflictError reports a write refused because a unique value is already taken.
type ConflictError struct {
	Field string // the request field holding the value, e.g. "domain" or "url"
	Value string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q already exists", e.Field, e.Value)
}

// NewID returns a fresh opaque identifier: 12 characters of lower-case base32 (60 random bits).
func NewID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b[:])
}
