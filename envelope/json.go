package envelope

import (
	"bytes"
	"encoding/json"
	"strconv"

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

// parseIntegral parses a JSON number token whose exact value is an integer in
// int64 range: "17", "-3", "1.7e9", "1700000000.0", "0e-5". Fractions,
// out-of-range values and anything that is not a number are rejected. The
// arithmetic is exact (digit strings, never floats).
func parseIntegral(raw []byte) (int64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	// Slow path: split sign, integer digits, fraction digits, exponent.
	s := raw
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[:i]
	var frac []byte
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = s[i+1 : j]
		i = j
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		e, err := strconv.Atoi(string(s[i+1:]))
		if err != nil {
			// An exponent too large for int: the value is 0 if every digit
			// is 0, else out of range or a fraction.
			if allZero(intPart) && allZero(frac) {
				return 0, true
			}
			return 0, false
		}
		exp = e
		i = len(s)
	}
	if i != len(s) || len(intPart) == 0 {
		return 0, false
	}
	digits := make([]byte, 0, len(intPart)+len(frac))
	digits = append(digits, intPart...)
	digits = append(digits, frac...)
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return 0, true
	}
	// The decimal point sits after point digits of the trimmed string.
	point := len(intPart) - (len(intPart) + len(frac) - len(digits)) + exp
	if point < 0 || point > 19 {
		return 0, false // below 1 (and non-zero) or more than 19 digits
	}
	if point < len(digits) {
		if !allZero(digits[point:]) {
			return 0, false
		}
		digits = digits[:point]
	}
	for len(digits) < point {
		digits = append(digits, '0')
	}
	if neg {
		digits = append([]byte{'-'}, digits...)
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
