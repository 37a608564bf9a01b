package envelope

// AppendJSONString appends s to b as a JSON string, escaped as
// encoding/json escapes it.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }

// EachMember calls fn with the raw (quoted) name and the raw value of each
// top-level member of the JSON object b, in order, without allocating. b
// must be valid JSON (json.Valid, or checked by ParseClaims); a value that
// is not an object is an error.
func EachMember(b []byte, fn func(name, value []byte) error) error { return eachMember(b, fn) }

// Unquote returns the content of the JSON string raw (quotes included),
// exactly: a sub-slice of raw when it has no escapes; ok is false for a
// string with a lone surrogate escape or bytes that are not UTF-8.
func Unquote(raw []byte) ([]byte, bool) { return unquote(raw) }
