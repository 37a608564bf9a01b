package callbacks

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFieldsStrExact: the field decoder refuses, on its own, a string that
// encoding/json would decode with U+FFFD, and takes exact strings as
// written.
func TestFieldsStrExact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw, want, detail string
	}{
		{`"p-\ud800"`, "", "surrogate"},
		{`"p-\udc00"`, "", "surrogate"},
		{`"\udc00\ud800"`, "", "surrogate"},
		{"\"p-\xff\"", "", "UTF-8"},
		{`7`, "", "must be a string"},
		{`"p-\ud83d\ude00"`, "p-😀", ""},
		{`"p-\\u0000"`, `p-\u0000`, ""},
		{`"p-\u0000"`, "", "NUL"},
	} {
		f, err := newFields(json.RawMessage(`{"payoutID":` + c.raw + `}`))
		if err != nil {
			t.Fatal(err)
		}
		got := f.str("payoutID", true)
		switch {
		case c.detail == "" && (got != c.want || len(f.errs) != 0):
			t.Errorf("%s: str = %q, errors %v; want %q", c.raw, got, f.errs, c.want)
		case c.detail != "" && (got != "" || len(f.errs) != 1 || f.errs[0].Pointer != "/service/payoutID" || !strings.Contains(f.errs[0].Detail, c.detail)):
			t.Errorf("%s: str = %q, errors %v; want one at /service/payoutID about %s", c.raw, got, f.errs, c.detail)
		}
	}
}
