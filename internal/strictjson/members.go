package strictjson

import (
	"encoding/json"
	"errors"
)

// errNotObject is EachMember's error for input whose top-level value is not
// a JSON object.
var errNotObject = errors.New("not a JSON object")

// SkipSpace returns the index of the first byte at or after i in b that is
// not JSON insignificant white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// EachMember calls fn with the raw (quoted) name and the raw value of each
// top-level member of the JSON object b, in order, without allocating. It
// walks the top level only, so b must be valid JSON already (json.Valid, or
// [Check]); a value that is not an object gives an error ("not a JSON object"). An error of
// fn stops the walk and is returned.
func EachMember(b []byte, fn func(name, value []byte) error) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i++
	for {
		i = SkipSpace(b, i)
		if i >= len(b) {
			return errNotObject
		}
		switch b[i] {
		case '}':
			return nil
		case ',':
			i = SkipSpace(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return errNotObject
		}
		end := skipString(b, i)
		name := b[i:end]
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errNotObject
		}
		i = SkipSpace(b, i+1)
		if i >= len(b) {
			return errNotObject
		}
		vend := skipValue(b, i)
		if err := fn(name, b[i:vend]); err != nil {
			return err
		}
		i = vend
	}
}

// UnquoteBytes decodes one JSON string token, raw (quotes included and
// nothing around them), exactly: its result never holds U+FFFD unless the
// input did. Without escapes it returns a sub-slice of raw, without
// allocating. A token that is not exact (a \u escape of a lone or reversed
// surrogate, bytes that are not UTF-8), not well-formed (a raw control
// character, a bad escape, no closing quote, anything after it), or not a
// string gives ok false; [Check] of the token says which.
func UnquoteBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	end, s, r := scanString(raw, 0, true)
	if r != 0 || end != len(raw) {
		return nil, false
	}
	return s, true
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
			j++
		}
		return j
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// AppendString appends s to b as a JSON string, escaped as encoding/json
// escapes it (HTML-safe); the common case, printable ASCII without quotes,
// backslashes or <>&, appends without allocating.
func AppendString(b []byte, s string) []byte {
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
