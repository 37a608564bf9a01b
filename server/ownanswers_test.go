package server_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/store/storetest"
)

// rawRequests are requests net/http refuses before any handler sees them,
// sent as raw bytes, with the status it answers.
var rawRequests = []struct {
	name, request string
	status        int
	slug          string
}{
	{"BadPercentEscape", "GET /ledger/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad-request"},
	{"DuplicateContentLength", "POST /ledger/authorize HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "bad-request"},
	{"MissingHost", "GET /healthz HTTP/1.1\r\n\r\n", 400, "bad-request"},
	{"HeadersTooLarge", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 431, "header-fields-too-large"},
	{"UnknownTransferEncoding", "POST /ledger/authorize HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "not-implemented"},
	{"MalformedHeaderLine", "GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "bad-request"},
}

// TestServerOwnAnswersAreProblems: the answers net/http writes itself,
// on both listeners, are problem+json with Cache-Control: no-store like
// every other answer of ledgerd's, and never echo the request.
func TestServerOwnAnswersAreProblems(t *testing.T) {
	t.Parallel()
	d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-own", "LEDGER_RECONCILE_EVERY", "0"))
	for _, l := range []struct{ name, addr string }{{"Callbacks", d.callbacks}, {"Admin", d.admin}} {
		for _, c := range rawRequests {
			t.Run(l.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				conn, err := net.Dial("tcp", l.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				checkOwnAnswer(t, conn, c.request, c.status, c.slug)
			})
		}
	}
}

// TestServerOwnAnswersOverTLS: the same over the TLS callback listener, and
// plain HTTP sent to it is a problem+json 400 too.
func TestServerOwnAnswersOverTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, roots := selfSigned(t)
	d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-own-tls", "LEDGER_RECONCILE_EVERY", "0",
		"LEDGER_TLS_CERT", certFile, "LEDGER_TLS_KEY", keyFile))
	for _, c := range rawRequests {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn, err := tls.Dial("tcp", d.callbacks, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			checkOwnAnswer(t, conn, c.request, c.status, c.slug)
		})
	}
	t.Run("PlainHTTPToTLS", func(t *testing.T) {
		t.Parallel()
		conn, err := net.Dial("tcp", d.callbacks)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		checkOwnAnswer(t, conn, "POST /ledger/authorize HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 400, "bad-request")
	})
}

// checkOwnAnswer sends request on conn and checks the answer: status, a
// problem+json body of slug, Cache-Control: no-store.
func checkOwnAnswer(t *testing.T, conn net.Conn, request string, status int, slug string) {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	// The server may answer and close before reading all of a large
	// request: a failed write is not the test's failure, the answer is.
	go func() { _, _ = io.WriteString(conn, request) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no HTTP answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" ||
		resp.Header.Get("Cache-Control") != "no-store" || json.Unmarshal(body, &p) != nil ||
		p.Type != "urn:provider-ledger:problem:"+slug || p.Status != status || p.Title != http.StatusText(status) {
		t.Fatalf("got %d %v %s, want %d problem+json %s with no-store", resp.StatusCode, resp.Header, body, status, slug)
	}
	if strings.Contains(string(body), "aaaa") || strings.Contains(string(body), "zz") {
		t.Fatalf("the answer echoes the request: %s", body)
	}
}
