package adminapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestReadbackRequests pins what the read-back methods send: paths, query
// members (times in UTC with microseconds), Accept, and what they decode.
func TestReadbackRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from := time.Date(2026, 3, 1, 1, 2, 3, 4_567_891, time.FixedZone("CET", 3600))
	to := from.Add(48 * time.Hour)

	t.Run("AccountsList", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
			wantRequest(t, r, "GET", "")
			if r.URL.RawQuery != "currency=EUR&cursor=c1&limit=7&ownerExternalID=o+1&status=frozen" {
				t.Errorf("query %s", r.URL.RawQuery)
			}
			fmt.Fprint(w, `{"accounts":[{"accountID":"a","currency":"EUR","balance":"1.00","held":"0.00","available":"1.00","status":"frozen"}],"nextCursor":"c2","hasMore":true}`)
		})
		l, resp, err := c.Accounts.List(ctx, &adminapi.AccountListOptions{Currency: "EUR", Status: adminapi.AccountFrozen, OwnerExternalID: "o 1", Cursor: "c1", Limit: 7})
		if err != nil || len(l.Accounts) != 1 || l.Accounts[0].Balance != "1.00" || !resp.HasMore || resp.NextCursor != "c2" {
			t.Fatalf("%+v %+v %v", l, resp, err)
		}
	})

	t.Run("AccountHolds", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.EscapedPath() != "/v1/accounts/a%20b/holds" || r.URL.RawQuery != "limit=3&status=held" {
				t.Errorf("request %s ? %s", r.URL.EscapedPath(), r.URL.RawQuery)
			}
			fmt.Fprint(w, `{"holds":[{"holdReference":"h1","placedAt":"2026-01-02T03:04:05.000001Z"}],"hasMore":false}`)
		})
		l, resp, err := c.Accounts.ListHolds(ctx, "a b", &adminapi.HoldListOptions{AccountID: "ignored", Status: adminapi.HoldHeld, Limit: 3})
		if err != nil || len(l.Holds) != 1 || resp.HasMore {
			t.Fatalf("%+v %v", l, err)
		}
	})

	t.Run("HoldsByAccount", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/holds", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.RawQuery != "accountID=acc-1" {
				t.Errorf("query %s", r.URL.RawQuery)
			}
			fmt.Fprint(w, `{"holds":[],"hasMore":false}`)
		})
		if _, _, err := c.Holds.List(ctx, &adminapi.HoldListOptions{AccountID: "acc-1"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("JournalTimesInUTCMicroseconds", func(t *testing.T) { readbackJournalTimesInUTCMicroseconds(t, ctx, from, to) })

	t.Run("StatementWritesTheBody", func(t *testing.T) { readbackStatementWritesTheBody(t, ctx, from, to) })

	t.Run("StatementProblemWritesNothing", func(t *testing.T) {
		t.Parallel()
		c, mux := setup(t)
		mux.HandleFunc("/v1/accounts/acc/statement", func(w http.ResponseWriter, r *http.Request) {
			if got := r.Header.Get("Accept"); got != "text/csv, application/problem+json" {
				t.Errorf("Accept %q", got)
			}
			problem(w, 400, `{"type":"urn:provider-ledger:problem:invalid-request","title":"Bad Request","status":400,"detail":"from is required","errors":[{"pointer":"/from","detail":"from is required"}]}`)
		})
		var buf bytes.Buffer
		_, err := c.Accounts.Statement(ctx, "acc", nil, &buf)
		var e *adminapi.Error
		if !errors.As(err, &e) || buf.Len() != 0 {
			t.Fatalf("%v; wrote %q", err, buf.String())
		}
		if _, ok := e.FieldError("/from"); !ok {
			t.Fatalf("no /from in %+v", e)
		}
	})

	t.Run("IteratorsFollowPages", func(t *testing.T) { readbackIteratorsFollowPages(t, ctx) })
}

// readbackStatementWritesTheBody: a statement's body is written to the
// writer as sent, with its format and window in the query.
func readbackStatementWritesTheBody(t *testing.T, ctx context.Context, from, to time.Time) {
	t.Parallel()
	c, mux := setup(t)
	mux.HandleFunc("/v1/accounts/acc/statement", func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != "application/xml, application/problem+json" {
			t.Errorf("Accept %q", got)
		}
		if r.URL.RawQuery != "format=camt053&from=2026-03-01T00%3A02%3A03.004567Z&to=2026-03-03T00%3A02%3A03.004567Z" {
			t.Errorf("query %s", r.URL.RawQuery)
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, "<Document/>")
	})
	var buf bytes.Buffer
	resp, err := c.Accounts.Statement(ctx, "acc", &adminapi.StatementOptions{From: from, To: to, Format: adminapi.StatementCamt053}, &buf)
	if err != nil || buf.String() != "<Document/>" || resp.Header.Get("Content-Type") != "application/xml" {
		t.Fatalf("%q %v", buf.String(), err)
	}
}

// readbackJournalTimesInUTCMicroseconds: the journal's window is sent in UTC
// to the microsecond, whatever the zone of the times given.
func readbackJournalTimesInUTCMicroseconds(t *testing.T, ctx context.Context, from, to time.Time) {
	t.Parallel()
	c, mux := setup(t)
	const wantQuery = "accountID=settlement%3AUSD&from=2026-03-01T00%3A02%3A03.004567Z&limit=2&to=2026-03-03T00%3A02%3A03.004567Z"
	mux.HandleFunc("/v1/journal/entries", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != wantQuery {
			t.Errorf("query %s\nwant  %s", r.URL.RawQuery, wantQuery)
		}
		fmt.Fprint(w, `{"entries":[{"transactionID":"t","accountID":"settlement:USD","contraAccountID":"acc","currency":"USD","amount":"-1.50","kind":"capture","reference":"cap_1","memo":"p-1","createdAt":"2026-03-01T00:00:00.000001Z"}],"hasMore":false}`)
	})
	mux.HandleFunc("/v1/journal/transactions", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			t.Errorf("query %s", r.URL.RawQuery)
		}
		fmt.Fprint(w, `{"transactions":[{"transactionID":"t","kind":"credit","reference":"cred_1","memo":"r","currency":"JPY","createdAt":"2026-03-01T00:00:00.000001Z","entries":[{"accountID":"a","amount":"5"},{"accountID":"settlement:JPY","amount":"-5"}]}],"hasMore":false}`)
	})
	l, _, err := c.Journal.ListEntries(ctx, &adminapi.JournalListOptions{AccountID: "settlement:USD", From: from, To: to, Limit: 2})
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Amount != "-1.50" || l.Entries[0].CreatedAt.Nanosecond() != 1000 {
		t.Fatalf("%+v %v", l, err)
	}
	tl, _, err := c.Journal.ListTransactions(ctx, nil)
	if err != nil || len(tl.Transactions) != 1 || len(tl.Transactions[0].Entries) != 2 || tl.Transactions[0].Entries[1].Amount != "-5" {
		t.Fatalf("%+v %v", tl, err)
	}
}

// readbackIteratorsFollowPages: the accounts' and the journal's iterators
// follow every page and yield a page's error.
func readbackIteratorsFollowPages(t *testing.T, ctx context.Context) {
	t.Parallel()
	c, mux := setup(t)
	mux.HandleFunc("/v1/accounts", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("cursor") {
		case "":
			fmt.Fprint(w, `{"accounts":[{"accountID":"a1"},{"accountID":"a2"}],"nextCursor":"n","hasMore":true}`)
		case "n":
			fmt.Fprint(w, `{"accounts":[{"accountID":"a3"}],"hasMore":false}`)
		}
	})
	mux.HandleFunc("/v1/journal/entries", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"entries":[{"transactionID":"t1"}],"hasMore":true}`) // no cursor: an error
	})
	mux.HandleFunc("/v1/journal/transactions", func(w http.ResponseWriter, r *http.Request) {
		problem(w, 503, `{"type":"urn:provider-ledger:problem:database-unavailable","title":"Service Unavailable","status":503}`)
	})
	var ids []string
	for a, err := range c.Accounts.ListIter(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.AccountID)
	}
	if strings.Join(ids, ",") != "a1,a2,a3" {
		t.Fatalf("accounts %v", ids)
	}
	var errs []error
	for _, err := range c.Journal.ListEntriesIter(ctx, nil) {
		errs = append(errs, err)
	}
	if len(errs) != 2 || errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "GET /v1/journal/entries answered hasMore without nextCursor") {
		t.Fatalf("entries: %v", errs)
	}
	for tx, err := range c.Journal.ListTransactionsIter(ctx, nil) {
		if tx != nil || !errors.Is(err, adminapi.ErrUnavailable) {
			t.Fatalf("transactions: %v %v", tx, err)
		}
	}
}

// TestReadbackAgainstLedgerd runs the read-back methods against the real
// handlers on a random workload: every account and entry comes back once,
// transactions sum to zero, and a statement's CSV closes at the account's
// balance.
func TestReadbackAgainstLedgerd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The admin API under a path prefix with a token, as setupServer, on
	// a store whose clock the workload sets.
	_, pool := storetest.DB(t)
	clock := storetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	db := store.Wrap(pool, clock.Now)
	mux := http.NewServeMux()
	mux.Handle(baseURLPath+"/", http.StripPrefix(baseURLPath, admin.New(admin.Config{DB: db, Token: adminToken})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := adminapi.NewClient(srv.URL+baseURLPath, adminapi.WithToken(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerd{client: client, url: srv.URL + baseURLPath, db: db}
	w := storetest.RunWorkload(t, db, clock, storetest.WorkloadOpts{Seed: 7, Accounts: 3, Ops: 60})

	t.Run("Accounts", func(t *testing.T) {
		t.Parallel()
		var ids []string
		for a, err := range l.client.Accounts.ListIter(ctx, &adminapi.AccountListOptions{Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.AccountID)
		}
		if strings.Join(ids, ",") != "wl-00,wl-01,wl-02" {
			t.Fatalf("accounts %v", ids)
		}
		if _, _, err := l.client.Accounts.List(ctx, &adminapi.AccountListOptions{Status: "gone"}); !errors.Is(err, adminapi.ErrInvalidRequest) {
			t.Fatalf("bad status: %v", err)
		}
	})

	t.Run("Holds", func(t *testing.T) {
		t.Parallel()
		mine, _, err := l.client.Accounts.ListHolds(ctx, "wl-00", &adminapi.HoldListOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		filtered, _, err := l.client.Holds.List(ctx, &adminapi.HoldListOptions{AccountID: "wl-00", Limit: 100})
		if err != nil || len(mine.Holds) == 0 || len(mine.Holds) != len(filtered.Holds) {
			t.Fatalf("%d holds by route, %d by filter: %v", len(mine.Holds), len(filtered.Holds), err)
		}
		if _, _, err := l.client.Accounts.ListHolds(ctx, "nobody", nil); !errors.Is(err, adminapi.ErrAccountNotFound) {
			t.Fatalf("unknown account: %v", err)
		}
	})

	t.Run("Journal", func(t *testing.T) { againstLedgerdJournal(t, ctx, l, w) })

	t.Run("Statement", func(t *testing.T) { againstLedgerdStatement(t, ctx, l, w) })

	t.Run("OpenAPIIsServed", func(t *testing.T) {
		t.Parallel()
		req, err := l.client.NewRequest("GET", "openapi.json", nil)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		var buf bytes.Buffer
		if _, err := l.client.Do(ctx, req, &buf); err != nil || json.Unmarshal(buf.Bytes(), &doc) != nil || doc["openapi"] != "3.1.0" {
			t.Fatalf("GET openapi.json: %v %.80s", err, buf.String())
		}
	})
}

// againstLedgerdStatement: a CSV statement closes at the account's balance
// with a row per entry, and a backwards window is refused at /to, with
// nothing written.
func againstLedgerdStatement(t *testing.T, ctx context.Context, l ledgerd, w *storetest.Workload) {
	t.Parallel()
	var buf bytes.Buffer
	if _, err := l.client.Accounts.Statement(ctx, "wl-02", &adminapi.StatementOptions{From: w.Times[0], To: w.End}, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	closing := decimal.RequireFromString(rows[len(rows)-1][10])
	acct, _, err := l.client.Accounts.Get(ctx, "wl-02")
	if err != nil {
		t.Fatal(err)
	}
	if bal, _ := acct.Balance.Decimal(); !closing.Equal(bal) || len(rows) != len(w.EntriesOf("wl-02", time.Time{}, time.Time{}))+3 {
		t.Fatalf("closing %s, balance %s, %d rows", closing, bal, len(rows))
	}
	buf.Reset()
	_, err = l.client.Accounts.Statement(ctx, "wl-02", &adminapi.StatementOptions{From: w.End, To: w.Times[0]}, &buf)
	var e *adminapi.Error
	if !errors.As(err, &e) || e.Status != 400 || buf.Len() != 0 {
		t.Fatalf("a backwards period: %v, %d bytes", err, buf.Len())
	}
	if _, ok := e.FieldError("/to"); !ok {
		t.Fatalf("no /to in %+v", e)
	}
}

// againstLedgerdJournal: an account's entries, through every page, are the
// workload's, and every transaction balances.
func againstLedgerdJournal(t *testing.T, ctx context.Context, l ledgerd, w *storetest.Workload) {
	t.Parallel()
	n := 0
	for e, err := range l.client.Journal.ListEntriesIter(ctx, &adminapi.JournalListOptions{AccountID: "wl-01", Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		want := w.EntriesOf("wl-01", time.Time{}, time.Time{})[n]
		if d, _ := e.Amount.Decimal(); e.TransactionID != want.TransactionID || !d.Equal(want.Amount) {
			t.Fatalf("entry %d %+v, want %+v", n, e, want)
		}
		n++
	}
	if n != len(w.EntriesOf("wl-01", time.Time{}, time.Time{})) {
		t.Fatalf("%d entries", n)
	}
	n = 0
	for tx, err := range l.client.Journal.ListTransactionsIter(ctx, &adminapi.JournalListOptions{Limit: 7}) {
		if err != nil {
			t.Fatal(err)
		}
		a, _ := tx.Entries[0].Amount.Decimal()
		b, _ := tx.Entries[1].Amount.Decimal()
		if !a.Add(b).IsZero() {
			t.Fatalf("transaction %+v does not balance", tx)
		}
		n++
	}
	if n != len(w.Entries) {
		t.Fatalf("%d transactions, want %d", n, len(w.Entries))
	}
}
