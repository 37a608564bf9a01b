package callbacks

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the route prefix of the callbacks when none is given.
const DefaultPrefix = "/ledger"

// CheckPrefix reports whether p is a route prefix: "/" (the callbacks at
// the root: /authorize, …) or "/" followed by segments of ASCII letters,
// digits, "-", ".", "_" and "~", separated by single slashes, without a
// trailing slash and without "." or ".." segments. Anything else (a
// percent sign, which requests would carry decoded; ":" and "*", which the
// router takes for parameters; white space, "?", "#") could not be matched
// as written or would match something else.
func CheckPrefix(p string) error {
	if p == "/" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q does not start with /", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch seg {
		case "":
			return fmt.Errorf("%q has an empty segment or a trailing slash", p)
		case ".", "..":
			return fmt.Errorf("%q has a %q segment", p, seg)
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
				return fmt.Errorf("%q holds a character other than letters, digits, -, ., _, ~ and /", p)
			}
		}
	}
	return nil
}

// route is the path of endpoint under prefix (checked by CheckPrefix): the
// root prefix "/" gives "/authorize", "/ledger" gives "/ledger/authorize".
func route(prefix, endpoint string) string {
	return strings.TrimSuffix(prefix, "/") + "/" + endpoint
}
