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
		{`{"request":""}`, "", true},
		{`{"request":"a.b-_9Z"}`, "a.b-_9Z", true},
		{`{"request":"a+b/c="}`, "a+b/c=", true},
		{`{"request":"a.b"} `, "a.b", true},
		{`{"request":"a"}"}`, "", false},
		{`{"request":"a\"}`, "", false},
		{`{"request":"a\u002eb"}`, "a.b", true},
	} {
		token, ok := requestToken([]byte(c.body))
		if ok != c.ok || token != c.token {
			t.Errorf("requestToken(%q) = %q, %v; want %q, %v", c.body, token, ok, c.token, c.ok)
		}
	}
}

// FuzzRequestToken: the reading of the service's plain body
// {"request":"<token>"} agrees with the full JSON reading on every body
// it accepts.
func FuzzRequestToken(f *testing.F) {
	for _, s := range []string{`{"request":"a.b.c.d.e"}`, `{"request":""}`, `{"request":"a"}"}`, `{"request":"x","request":"y"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		token, ok := plainRequestToken(body)
		if !ok {
			return
		}
		if full, fullOK := anyRequestToken(body); !fullOK || full != token {
			t.Fatalf("%q: plain %q, full %q %v", body, token, full, fullOK)
		}
	})
}
