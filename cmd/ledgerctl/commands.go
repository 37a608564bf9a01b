package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/provider-ledger/adapter/schema"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, _ := newFlagSet("migrate", stderr)
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "Postgres URL (env DATABASE_URL)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return 2
	}
	if *dbURL == "" {
		return fail(stderr, errors.New("set DATABASE_URL or --database-url (ledgerd migrates its embedded database itself at start)"))
	}
	v, err := schema.MigrateURL(ctx, *dbURL)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintf(stdout, "schema at version %d\n", v)
	return 0
}

type account struct {
	AccountID       string `json:"accountID"`
	OwnerExternalID string `json:"ownerExternalID"`
	Currency        string `json:"currency"`
	Balance         string `json:"balance"`
	Held            string `json:"held"`
	Available       string `json:"available"`
	Status          string `json:"status"`
}

func printAccounts(w io.Writer, as ...account) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACCOUNT\tOWNER\tCURRENCY\tBALANCE\tHELD\tAVAILABLE\tSTATUS")
	for _, a := range as {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.AccountID, a.OwnerExternalID, a.Currency, a.Balance, a.Held, a.Available, a.Status)
	}
	tw.Flush()
}

func runAccounts(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: ledgerctl accounts create|get|freeze|unfreeze|close …")
		return 2
	}
	sub := args[0]
	fs, af := newFlagSet("accounts "+sub, stderr)
	var owner, currency, status *string
	if sub == "create" {
		owner = fs.String("owner", "", "the owner's externalID at the service (required)")
		fs.StringVar(owner, "owner-external-id", "", "same as --owner")
		currency = fs.String("currency", "USD", "ISO 4217 currency code")
		status = fs.String("status", "open", "open, frozen or closed")
	}
	accountID := fs.String("account-id", "", "the account (instead of the ACCOUNT_ID argument)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	if *accountID != "" && len(pos) == 0 {
		pos = []string{*accountID}
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "usage: ledgerctl accounts %s ACCOUNT_ID [flags]\n", sub)
		return 2
	}
	id := pos[0]
	path := "/v1/accounts/" + url.PathEscape(id)
	var a account
	var raw []byte
	switch sub {
	case "create":
		raw, err = af.call(ctx, "POST", "/v1/accounts", map[string]string{
			"accountID": id, "ownerExternalID": *owner, "currency": *currency, "status": *status}, &a)
	case "get":
		raw, err = af.call(ctx, "GET", path, nil, &a)
	case "freeze", "unfreeze", "close":
		st := map[string]string{"freeze": "frozen", "unfreeze": "open", "close": "closed"}[sub]
		raw, err = af.call(ctx, "PATCH", path, map[string]string{"status": st}, &a)
	default:
		fmt.Fprintf(stderr, "ledgerctl: unknown accounts command %q\n", sub)
		return 2
	}
	if err != nil {
		return fail(stderr, err)
	}
	if af.json {
		printJSON(stdout, raw)
	} else {
		printAccounts(stdout, a)
	}
	return 0
}

func runAdjust(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, af := newFlagSet("adjust", stderr)
	key := fs.String("key", "", "idempotency key (required; the same key replays)")
	fs.StringVar(key, "idempotency-key", "", "same as --key")
	memo := fs.String("memo", "", "memo recorded on the journal transaction")
	account := fs.String("account-id", "", "the account (instead of the first argument)")
	amount := fs.String("amount", "", "the signed amount (instead of the second argument)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if *account != "" && *amount != "" && len(pos) == 0 {
		pos = []string{*account, *amount}
	}
	if len(pos) != 2 || *key == "" {
		fmt.Fprintln(stderr, "usage: ledgerctl adjust ACCOUNT_ID AMOUNT --key KEY [--memo MEMO]   (AMOUNT signed, e.g. 100.00 or -5.25)")
		return 2
	}
	var out struct {
		TransactionID string `json:"transactionID"`
		Balance       string `json:"balance"`
		Held          string `json:"held"`
		Available     string `json:"available"`
	}
	raw, err := af.call(ctx, "POST", "/v1/accounts/"+url.PathEscape(pos[0])+"/adjustments",
		map[string]string{"amount": pos[1], "idempotencyKey": *key, "memo": *memo}, &out)
	if err != nil {
		return fail(stderr, err)
	}
	if af.json {
		printJSON(stdout, raw)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TRANSACTION\tBALANCE\tHELD\tAVAILABLE")
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", out.TransactionID, out.Balance, out.Held, out.Available)
	tw.Flush()
	return 0
}

func runInstruments(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "add" {
		fmt.Fprintln(stderr, "usage: ledgerctl instruments add --token T --kind source|destination --account A")
		return 2
	}
	fs, af := newFlagSet("instruments add", stderr)
	token := fs.String("token", "", "the token the service sends as fundingSource or fundingDestination")
	kind := fs.String("kind", "source", "source or destination")
	acct := fs.String("account", "", "the account the token maps to")
	fs.StringVar(acct, "account-id", "", "same as --account")
	if _, err := parseInterleaved(fs, args[1:]); err != nil {
		return 2
	}
	var out struct{ Token, Kind, AccountID string }
	raw, err := af.call(ctx, "POST", "/v1/instruments", map[string]string{"token": *token, "kind": *kind, "accountID": *acct}, &out)
	if err != nil {
		return fail(stderr, err)
	}
	if af.json {
		printJSON(stdout, raw)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tKIND\tACCOUNT")
	fmt.Fprintf(tw, "%s\t%s\t%s\n", out.Token, out.Kind, out.AccountID)
	tw.Flush()
	return 0
}

type hold struct {
	HoldReference    string `json:"holdReference"`
	PayoutID         string `json:"payoutID"`
	AccountID        string `json:"accountID"`
	Amount           string `json:"amount"`
	Currency         string `json:"currency"`
	Status           string `json:"status"`
	CaptureReference string `json:"captureReference"`
	ReleaseReference string `json:"releaseReference"`
	PlacedAt         string `json:"placedAt"`
}

func printHolds(w io.Writer, hs []hold) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOLD\tPAYOUT\tACCOUNT\tAMOUNT\tSTATUS\tREFERENCE\tPLACED")
	for _, h := range hs {
		ref := h.CaptureReference + h.ReleaseReference
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%s\t%s\t%s\n", h.HoldReference, h.PayoutID, h.AccountID, h.Amount, h.Currency, h.Status, ref, h.PlacedAt)
	}
	tw.Flush()
}

func runHolds(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: ledgerctl holds get REF | holds list [--payout P] [--status S] [--limit N] [--all]")
		return 2
	}
	fs, af := newFlagSet("holds "+args[0], stderr)
	payout := fs.String("payout", "", "only the hold of this payoutID")
	status := fs.String("status", "", "held, captured or released")
	limit := fs.Int("limit", 25, "page size, 1 to 100")
	all := fs.Bool("all", false, "follow nextCursor through every page")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	switch args[0] {
	case "get":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "usage: ledgerctl holds get HOLD_REFERENCE")
			return 2
		}
		var h hold
		raw, err := af.call(ctx, "GET", "/v1/holds/"+url.PathEscape(pos[0]), nil, &h)
		if err != nil {
			return fail(stderr, err)
		}
		if af.json {
			printJSON(stdout, raw)
		} else {
			printHolds(stdout, []hold{h})
		}
		return 0
	case "list":
		var hs []hold
		cursor := ""
		for {
			q := url.Values{}
			q.Set("limit", strconv.Itoa(*limit))
			for k, v := range map[string]string{"payoutID": *payout, "status": *status, "cursor": cursor} {
				if v != "" {
					q.Set(k, v)
				}
			}
			var page struct {
				Holds      []hold `json:"holds"`
				NextCursor string `json:"nextCursor"`
				HasMore    bool   `json:"hasMore"`
			}
			raw, err := af.call(ctx, "GET", "/v1/holds?"+q.Encode(), nil, &page)
			if err != nil {
				return fail(stderr, err)
			}
			if af.json && !*all {
				printJSON(stdout, raw)
				return 0
			}
			hs = append(hs, page.Holds...)
			if !*all || !page.HasMore {
				break
			}
			cursor = page.NextCursor
		}
		if af.json {
			printJSONValue(stdout, map[string]any{"holds": hs})
		} else {
			printHolds(stdout, hs)
		}
		return 0
	}
	fmt.Fprintf(stderr, "ledgerctl: unknown holds command %q\n", args[0])
	return 2
}
