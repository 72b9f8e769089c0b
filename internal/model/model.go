// Package model is openvitals' vocabulary: the plain types of what it stores and answers
// (accounts, websites, pages, results, budgets, tests, events...), the errors every layer
// shares (ErrNotFound, ConflictError, InvalidError...), and the rules that belong to a type
// itself, such as its validation and the measurement method's calibration. The requests that
// create or change an item are model types too (BudgetPatch, ProfilePatch, PagePatch...): the
// API decodes one and calls its Apply, whose refusal is an *InvalidError naming every bad
// field; what a rule needs from elsewhere (a store read, another package's table) is passed
// in. Of openvitals it imports only its own model/step, and every other package may import it.
package model

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
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

// FieldError is one bad field of a value, named as the API names it ("pages[2].device"), and
// what is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// FieldErrors collects what is wrong with a value, so that a refusal names every bad field at
// once rather than the first.
type FieldErrors []FieldError

// Add records a bad field, its message formatted as by fmt.Sprintf.
func (fe *FieldErrors) Add(field, format string, args ...any) {
	*fe = append(*fe, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err is nil when nothing was wrong, otherwise an *InvalidError naming every bad field.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return &InvalidError{Fields: fe}
}

// InvalidError refuses a value that is well formed but not acceptable (the API answers 422),
// naming each bad field.
type InvalidError struct {
	Fields []FieldError
}

// Error lists the bad fields.
func (e *InvalidError) Error() string { return "invalid: " + FieldErrors(e.Fields).String() }

// String lists the bad fields as "field: message", separated by "; ".
func (fe FieldErrors) String() string {
	msgs := make([]string, len(fe))
	for i, f := range fe {
		msgs[i] = f.Field + ": " + f.Message
	}
	return strings.Join(msgs, "; ")
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
