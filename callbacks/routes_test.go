package callbacks_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestMethodNotAllowed: a 405 lists in Allow the methods the route serves,
// and not OPTIONS, which is answered 405 too.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t, opts{})
	for _, method := range []string{"GET", "PUT", "DELETE", "OPTIONS"} {
		req, _ := http.NewRequest(method, b.http.URL+"/ledger/capture", strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d, Allow %q, Cache-Control %q; want 405, Allow POST, no-store", method, resp.StatusCode,
				resp.Header.Get("Allow"), resp.Header.Get("Cache-Control"))
		}
	}
}
