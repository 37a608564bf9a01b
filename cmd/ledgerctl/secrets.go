package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
)

type secretInfo struct {
	SecretID    string `json:"secretID"`
	Fingerprint string `json:"fingerprint"`
	AddedOn     string `json:"addedOn"`
	RetiredOn   string `json:"retiredOn"`
	Secret      string `json:"secret"`
}

// runSecrets manages the adapter's keyring of signing secrets. A secret to
// add is read from a file or standard input, never from the command line
// (where shell history and ps would keep it).
func runSecrets(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: ledgerctl secrets list | add --from-file F|- | generate | retire SECRET_ID")
		return 2
	}
	sub := args[0]
	fs, af := newFlagSet("secrets "+sub, stderr)
	from := fs.String("from-file", "-", "add: file holding the Base64 secret (- for standard input)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	switch sub {
	case "list":
		var out struct {
			SigningSecrets []secretInfo `json:"signingSecrets"`
		}
		raw, err := af.call(ctx, "GET", "/v1/signing-secrets", nil, &out)
		if err != nil {
			return fail(stderr, err)
		}
		if af.json {
			printJSON(stdout, raw)
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SECRET ID\tFINGERPRINT\tADDED\tRETIRED")
		for _, s := range out.SigningSecrets {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.SecretID, s.Fingerprint, s.AddedOn, s.RetiredOn)
		}
		tw.Flush()
		return 0
	case "add", "generate":
		body := map[string]any{"generate": true}
		if sub == "add" {
			secret, err := readSecret(*from)
			if err != nil {
				return fail(stderr, err)
			}
			body = map[string]any{"secret": secret}
		}
		var out secretInfo
		raw, err := af.call(ctx, "POST", "/v1/signing-secrets", body, &out)
		if err != nil {
			return fail(stderr, err)
		}
		if af.json {
			printJSON(stdout, raw)
			return 0
		}
		fmt.Fprintf(stdout, "secret %s added (fingerprint %s)\n", out.SecretID, out.Fingerprint)
		if out.Secret != "" {
			fmt.Fprintf(stdout, "secret (shown once, store it now): %s\n", out.Secret)
		}
		return 0
	case "retire":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "usage: ledgerctl secrets retire SECRET_ID")
			return 2
		}
		if _, err := af.call(ctx, "DELETE", "/v1/signing-secrets/"+url.PathEscape(pos[0]), nil, nil); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "secret %s retired\n", pos[0])
		return 0
	}
	fmt.Fprintf(stderr, "ledgerctl: unknown secrets command %q\n", sub)
	return 2
}

func readSecret(path string) (string, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("no secret read from %s", path)
	}
	return line, nil
}
