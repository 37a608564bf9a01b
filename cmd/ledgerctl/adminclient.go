package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// adminFlags are the flags every admin command takes.
type adminFlags struct {
	admin   string
	json    bool
	timeout time.Duration // of one admin call; 0 means defaultCallTimeout
}

// defaultCallTimeout bounds one admin call.
const defaultCallTimeout = 30 * time.Second

func newFlagSet(name string, stderr io.Writer) (*flag.FlagSet, *adminFlags) {
	fs := flag.NewFlagSet("ledgerctl "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := &adminFlags{}
	def := os.Getenv("LEDGER_ADMIN_URL")
	if def == "" {
		def = "http://127.0.0.1:8081"
	}
	fs.StringVar(&af.admin, "admin", def, "admin API base URL (env LEDGER_ADMIN_URL)")
	fs.BoolVar(&af.json, "json", false, "print the API's JSON instead of a table")
	return fs, af
}

// parseInterleaved parses flags that may come before or after positional
// arguments and returns the positional ones. A negative number ("-5.25")
// is a positional argument, not a flag.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		// Take positional arguments that look like flags (negative amounts)
		// off the front before the flag package sees them.
		for len(args) > 0 && negativeNumber(args[0]) {
			pos, args = append(pos, args[0]), args[1:]
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func negativeNumber(s string) bool {
	return len(s) > 1 && s[0] == '-' && (s[1] >= '0' && s[1] <= '9' || s[1] == '.')
}

// apiError is a problem+json answer of the admin API.
type apiError struct {
	Status int
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Pointer string `json:"pointer"`
		Detail  string `json:"detail"`
	} `json:"errors"`
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", e.Status, e.Title)
	if e.Detail != "" {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	for _, fe := range e.Errors {
		fmt.Fprintf(&b, "\n  %s: %s", fe.Pointer, fe.Detail)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, "\n  (%s)", e.Type)
	}
	return b.String()
}

// call sends one admin API request and decodes a 2xx JSON answer into out
// (when non-nil), returning the raw body too.
func (af *adminFlags) call(ctx context.Context, method, path string, body any, out any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u, err := url.JoinPath(af.admin, path)
	if err != nil {
		return nil, fmt.Errorf("--admin %q: %w", af.admin, err)
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		u, _ = url.JoinPath(af.admin, path[:i])
		u += path[i:]
	}
	timeout := af.timeout
	if timeout <= 0 {
		timeout = defaultCallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if tok := os.Getenv("LEDGER_ADMIN_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API at %s: %w", af.admin, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode)}
		_ = json.Unmarshal(raw, e)
		e.Status = resp.StatusCode
		return raw, e
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, fmt.Errorf("decoding the admin API's answer: %w", err)
		}
	}
	return raw, nil
}

// fail prints err and returns the exit code for it.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "ledgerctl:", err)
	return 1
}

// printJSON writes raw JSON indented.
func printJSON(w io.Writer, raw []byte) {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		w.Write(raw)
		return
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

// printJSONValue writes v as indented JSON.
func printJSONValue(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	w.Write(append(b, '\n'))
}
