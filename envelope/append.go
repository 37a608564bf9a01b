package envelope

// AppendJSONString appends s to b as a JSON string, escaped as
// encoding/json escapes it.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }
