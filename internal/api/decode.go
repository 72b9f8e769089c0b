package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// maxBodyBytes bounds every request body: 100 pages of 2 KB URLs and aliases fit with room.
const maxBodyBytes = 1 << 20

// decodeJSON reads a JSON request body into v, strictly: one JSON value, not null, no unknown
// fields, at most maxBodyBytes. Every failure is a *Problem (400, 413, 415, or 422 for a number
// out of the range of its field's type).
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return newProblem(http.StatusUnsupportedMediaType, "the request body must be JSON, sent with the header 'Content-Type: application/json'")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return newProblem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxBodyBytes))
		}
		return badRequest("the request body could not be read")
	}
	switch string(bytes.TrimSpace(body)) {
	case "":
		return badRequest("the request body is empty; send a JSON document")
	case "null":
		// encoding/json leaves v as it was for null: the request would act as if it said
		// nothing (a series of every page, thresholds all reset).
		return badRequest("the request body is null; send a JSON document")
	}
	if name, dup := duplicateKey(body); dup {
		return badRequest(fmt.Sprintf("field %q appears twice in one object", name), model.FieldError{Field: name, Message: "appears twice"})
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var one json.RawMessage
	if err := dec.Decode(&one); err != nil {
		return jsonProblem(err, "")
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the request body holds more than one JSON value")
	}
	return decodeValue(one, reflect.ValueOf(v).Elem(), "")
}

// decodeValue decodes one JSON value into v, refusing unknown fields; prefix names where it
// is in the body (lcp.). An object decoded into a map is decoded a member at a time, so that
// an error names the member's key as well (encoding/json names the field within it only).
func decodeValue(raw json.RawMessage, v reflect.Value, prefix string) error {
	if v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return jsonProblem(err, prefix)
		}
		out := reflect.MakeMapWithSize(v.Type(), len(members))
		for _, key := range slices.Sorted(maps.Keys(members)) {
			elem := reflect.New(v.Type().Elem()).Elem()
			if err := decodeValue(members[key], elem, prefix+key+"."); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
		}
		v.Set(out)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Addr().Interface()); err != nil {
		return jsonProblem(err, prefix)
	}
	return nil
}

// jsonProblem explains a decoding error in terms of the request, naming the field at fault
// (after prefix, where the value decoded is in the body): a 400, or a 422 for a number out of
// the range of its field's type.
func jsonProblem(err error, prefix string) *Problem {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return badRequest(fmt.Sprintf("the request body is not valid JSON (at byte %d)", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the request body is not valid JSON (it ends too early)")
	case errors.As(err, &typ):
		field := strings.TrimSuffix(prefix+typ.Field, ".")
		want := jsonKind(typ.Type.Kind().String())
		if field != "" && want == "a number" && strings.HasPrefix(typ.Value, "number") {
			// A number where a number goes, but one the field cannot hold (1e400).
			return invalid(model.FieldError{Field: field, Message: "is out of range"})
		}
		if field == "" {
			return badRequest(fmt.Sprintf("the request body must be %s, not %s", want, typ.Value))
		}
		return badRequest(fmt.Sprintf("%s must be %s, not %s", field, want, typ.Value),
			model.FieldError{Field: field, Message: "must be " + want})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := prefix + strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(fmt.Sprintf("unknown field %q", name), model.FieldError{Field: name, Message: "unknown field"})
	default:
		return badRequest("the request body is not valid JSON: " + err.Error())
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "float64", "float32", "int", "int64":
		return "a number"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "of another type"
}

// duplicateKey finds a name used twice in one JSON object. encoding/json keeps the last value
// silently; refusing such a body avoids acting on an ambiguous request. Syntax errors are left
// to the decoder.
func duplicateKey(body []byte) (string, bool) {
	type object struct {
		keys      map[string]bool
		expectKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*object // nil entries stand for arrays
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.expectKey {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return key, true
				}
				top.keys[key] = true
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{keys: map[string]bool{}, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value just ended: the enclosing object expects its next key.
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].expectKey = true
		}
	}
}
