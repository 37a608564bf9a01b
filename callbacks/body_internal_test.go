package callbacks

import "testing"

// TestRequestToken: the body is a JSON object with exactly one string
// member "request"; anything else is malformed, never half-read.
func TestRequestToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, token string
		ok          bool
	}{
		{`{"request":"a.b.c.d.e"}`, "a.b.c.d.e", true},
		{` { "other": 1, "request" : "x" } `, "x", true},
		{`{"requ\u0065st":"x"}`, "x", true},
		{`{"request":"x","request":"y"}`, "", false},
		{`{"request":"x","requ\u0065st":"y"}`, "", false},
		{`{"request":1}`, "", false},
		{`{"request":null}`, "", false},
		{`{"request":"\ud800"}`, "", false},
		{"{\"request\":\"\xff\"}", "", false},
		{`{"Request":"x"}`, "", false},
		{`{}`, "", false},
		{`["request","x"]`, "", false},
		{`{"request":"x"`, "", false},
		{`{"request":"x"} {}`, "", false},
		{``, "", false},
	} {
		token, ok := requestToken([]byte(c.body))
		if ok != c.ok || token != c.token {
			t.Errorf("requestToken(%q) = %q, %v; want %q, %v", c.body, token, ok, c.token, c.ok)
		}
	}
}
