package model

import "errors"

// ErrOverLimit is a reservation refused: it would take the count over its limit.
var ErrOverLimit = errors.New("over the limit")
