package admin

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/ledger"
)

// checkPath refuses a path parameter (accountID, holdReference, secretID)
// that no row can hold: Postgres text takes neither NUL nor bytes that are
// not UTF-8, and would answer SQLSTATE 22021 (a 500) instead of a 400. It
// runs before the handler, so before any database call.
func checkPath(ps httprouter.Params) error {
	for _, p := range ps {
		if err := checkText(p.Key, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// checkText refuses a value with NUL or bytes that are not UTF-8; the
// error points at name and never holds the value.
func checkText(name, v string) error {
	if !utf8.ValidString(v) {
		return ledger.Invalid("/"+escapePointer(name), "%s must be UTF-8 text", name)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return ledger.Invalid("/"+escapePointer(name), "%s must not contain NUL characters", name)
	}
	return nil
}

// param is one name=value pair of a query string, decoded.
type param struct{ name, value string }

// parseQuery decodes a query string strictly, where url.ParseQuery (and
// Request.URL.Query) drop a malformed pair silently: each name and value
// percent-decoded, UTF-8 without NUL. Errors are 400s pointing at the
// parameter.
func parseQuery(raw string) ([]param, error) {
	var out []param
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil || checkText("parameter", name) != nil {
			return nil, ledger.Invalid("", "the query string is malformed")
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return nil, ledger.Invalid("/"+escapePointer(name), "%s is not a valid percent-encoded value", name)
		}
		if err := checkText(name, value); err != nil {
			return nil, err
		}
		out = append(out, param{name, value})
	}
	return out, nil
}

// query is a request's query string, read strictly.
type query map[string]string

// readQuery returns the parameters of a route that takes the known ones:
// another name, a name given twice (where Query().Get would read the
// first silently), or an empty value (limit=: leave the parameter out
// instead) is a 400 pointing at it; values are decoded strictly
// (parseQuery).
func readQuery(r *http.Request, known ...string) (query, error) {
	params, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	out := make(query, len(params))
	for _, p := range params {
		if !slices.Contains(known, p.name) {
			return nil, ledger.Invalid("/"+escapePointer(p.name), "unknown query parameter %q (known: %s)", p.name, strings.Join(known, ", "))
		}
		if _, twice := out[p.name]; twice {
			return nil, ledger.Invalid("/"+escapePointer(p.name), "%s is given more than once", p.name)
		}
		if p.value == "" {
			return nil, ledger.Invalid("/"+escapePointer(p.name), "%s is empty: give a value, or leave the parameter out", p.name)
		}
		out[p.name] = p.value
	}
	return out, nil
}
