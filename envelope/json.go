package envelope

import (
	"encoding/json"

	"github.com/provider-ledger/adapter/internal/strictjson"
)

// This file holds the small exact JSON helpers used on the hot path. They walk
// only the top level of an object that encoding/json has already validated,
// so they neither allocate per member nor fold the case of member names as
// encoding/json's struct decoding does.

// skipWS returns the index of the first byte at or after i that is not
// JSON white space.
func skipWS(b []byte, i int) int { return strictjson.SkipSpace(b, i) }

// isObject reports whether b is valid JSON whose top-level value is an object.
func isObject(b []byte) bool {
	i := skipWS(b, 0)
	return i < len(b) && b[i] == '{' && json.Valid(b)
}

// eachMember is [strictjson.EachMember]: b must be valid JSON already.
func eachMember(b []byte, fn func(name, value []byte) error) error {
	return strictjson.EachMember(b, fn)
}

// unquote is [strictjson.UnquoteBytes]: the exact content of a JSON string
// token, a sub-slice when it has no escapes.
func unquote(raw []byte) ([]byte, bool) { return strictjson.UnquoteBytes(raw) }

// nameIs reports whether the raw member name equals want.
func nameIs(raw []byte, want string) bool {
	s, ok := unquote(raw)
	return ok && string(s) == want
}
