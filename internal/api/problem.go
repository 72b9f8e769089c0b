package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
)

// Problem is an RFC 9457 problem detail, the body of every error response. Message repeats
// Detail, for clients that read an error's message member rather than detail.
type Problem struct {
	Type    string             `json:"type"`
	Title   string             `json:"title"`
	Status  int                `json:"status"`
	Detail  string             `json:"detail"`
	Message string             `json:"message"`
	Errors  []model.FieldError `json:"errors,omitempty"`
	// Limit says which limit refused the request (429, or 422 for a size limit).
	Limit *LimitInfo `json:"limit,omitempty"`
}

// LimitInfo is the limit a request would exceed: its name and value, what is used, and when a
// daily limit resets (the Retry-After header says the same in seconds).
type LimitInfo struct {
	Name   string     `json:"name"`
	Value  int        `json:"value"`
	Used   int        `json:"used"`
	Resets *time.Time `json:"resets,omitempty"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

func newProblem(status int, detail string, fields ...model.FieldError) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Errors: fields}
}

// badRequest is malformed input: bad JSON, wrong types, unknown fields, bad query parameters.
func badRequest(detail string, fields ...model.FieldError) *Problem {
	return newProblem(http.StatusBadRequest, detail, fields...)
}

// invalid is well-formed input with values that are not acceptable.
func invalid(fields ...model.FieldError) *Problem {
	return newProblem(http.StatusUnprocessableEntity, "invalid request: "+model.FieldErrors(fields).String(), fields...)
}

var (
	errUnauthorized = newProblem(http.StatusUnauthorized, "a valid API key is required: send it as 'Authorization: Bearer <key>'")
	errForbidden    = newProblem(http.StatusForbidden, "this operation needs an admin key")
)

// writeError turns any error into a problem response. Refused values (model.InvalidError) map
// to 422, store errors to 404 and 409;
// anything unexpected is logged and answered with a 500 that reveals nothing.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var p *Problem
	var conflict *model.ConflictError
	var refused *model.InvalidError
	var exceeded *quota.ExceededError
	switch {
	case errors.As(err, &p):
	case errors.As(err, &exceeded):
		p = newProblem(http.StatusUnprocessableEntity, exceeded.Error())
		p.Limit = &LimitInfo{Name: string(exceeded.Limit), Value: exceeded.Value, Used: exceeded.Used}
		if exceeded.Limit.Daily() {
			p.Status, p.Title = http.StatusTooManyRequests, http.StatusText(http.StatusTooManyRequests)
			p.Limit.Resets = &exceeded.Resets
			wait := max(1, int(math.Ceil(exceeded.Resets.Sub(exceeded.At).Seconds())))
			w.Header().Set("Retry-After", strconv.Itoa(wait))
		}
	case errors.As(err, &refused):
		p = invalid(refused.Fields...)
	case errors.Is(err, model.ErrNotFound):
		p = newProblem(http.StatusNotFound, notFoundDetail(err))
	case errors.As(err, &conflict):
		p = newProblem(http.StatusConflict, conflict.Error(), model.FieldError{Field: conflict.Field, Message: "already exists"})
	default:
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		p = newProblem(http.StatusInternalServerError, "the request could not be completed; it has been logged")
	}
	writeProblem(w, p)
}

// notFoundDetail keeps the "what" of a not-found error ("website abc") and drops the rest.
func notFoundDetail(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "+model.ErrNotFound.Error()); i > 0 {
		msg = msg[:i]
		if j := strings.LastIndex(msg, ": "); j >= 0 {
			msg = msg[j+2:]
		}
		return msg + " not found"
	}
	return "not found"
}

func writeProblem(w http.ResponseWriter, p *Problem) {
	out := *p
	out.Message = out.Detail
	if out.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="openvitals"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(out.Status)
	_ = json.NewEncoder(w).Encode(out)
}
