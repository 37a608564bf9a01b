package admin

// Strict decoding of JSON request bodies.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/ledger"
)

// decodeBody reads the request body strictly into v (a pointer to a struct):
// one JSON object, each member named exactly as a field's JSON name (no
// case-insensitive match, none twice), no trailing data, right types. Its
// errors are ledger.Errors with a pointer to the field.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeError(err)
	}
	if err := checkStrings(body); err != nil {
		return err
	}
	if string(bytes.TrimSpace(body)) == "null" {
		// encoding/json reads null into a struct or a map as nothing
		// at all: {} for a run, which would start one.
		return ledger.InvalidBody("the body must be a JSON object, not null")
	}
	if err := checkMembers(body, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); err != io.EOF {
		return ledger.InvalidBody("the body must be one JSON object")
	}
	return nil
}

// checkStrings refuses, with a pointer, what encoding/json would decode
// silently into something else: a string with a lone or reversed surrogate
// escape or bytes that are not UTF-8 (decoded as U+FFFD), a member named
// twice (the last taken), and a NUL (Postgres text cannot hold it; only a
// real NUL: the text \\u0000 is a backslash and five characters). A body
// that is not well-formed JSON is left to the decoder, whose messages say
// more.
func checkStrings(body []byte) error {
	err := strictjson.Check(body, strictjson.Options{RefuseNUL: true})
	var se *strictjson.Error
	if err == nil || !errors.As(err, &se) || se.Reason == strictjson.Syntax {
		return nil
	}
	// The pointer names the field; "" is the body, whose own member name
	// is at fault.
	what := strings.TrimPrefix(se.Pointer, "/")
	if what == "" {
		what = "a member name"
	}
	switch se.Reason {
	case strictjson.InvalidEscape:
		return ledger.Invalid(se.Pointer, "%s has a \\u escape of a lone or reversed UTF-16 surrogate", what)
	case strictjson.InvalidUTF8:
		return ledger.Invalid(se.Pointer, "%s is not valid UTF-8", what)
	case strictjson.NUL:
		return ledger.Invalid(se.Pointer, "%s must not contain NUL characters", what)
	case strictjson.DuplicateName:
		return ledger.Invalid(se.Pointer, "%s is given twice", what)
	}
	return ledger.Invalid(se.Pointer, "%s", se.Reason.Detail())
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		return &ledger.Error{Code: ledger.CodeInvalid, Slug: slugBodyTooLarge, Message: fmt.Sprintf("the body is over %d bytes", MaxBody)}
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return ledger.InvalidBody("the body must be a JSON object")
		}
		ptr := "/" + strings.ReplaceAll(typeErr.Field, ".", "/")
		return ledger.Invalid(ptr, "%s must be a JSON %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return ledger.InvalidBody("the body is not valid JSON")
	case errors.Is(err, io.EOF):
		return ledger.InvalidBody("the body is empty")
	}
	// An unknown field (encoding/json has no typed error for it) was
	// refused with its pointer by checkMembers before decoding.
	return ledger.InvalidBody("the body is not a valid JSON object")
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	}
	return "number"
}
