package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// clean: what a storm left on a ledgerd that cannot delete. The admin API
// has no DELETE for accounts, instruments or holds, and the journal is
// append-only: so clean releases the prefix's held holds through release
// callbacks (the ledger's own way to drop a hold) and closes the prefix's
// accounts (final: no hold or credit reaches them again). Their rows,
// instruments and journal stay, as on any ledger.

type cleanConfig struct {
	target driveConfig
	prefix string
	dryRun bool
	conc   int
}

const cleanLong = `clean undoes what a storm left behind on a running ledgerd, as far as the
admin API allows: it cannot delete. It releases every held hold of the
prefix's payouts through a release callback (reason cancelled; the storm's
"left held" payouts), then closes the prefix's accounts (PATCH status
closed: final, they take no hold or credit again). Account rows,
instruments and journal entries stay: the journal is append-only. The
accounts are found by the IDs storms give them (<prefix>-1000000000,
-1000007919, …, until one does not exist) and by the held holds.

A run of "loadtest spawn" needs no clean: spawn drops its scratch database
(or its embedded cluster's data directory).`

func newCleanCmd(h Hooks) *cobra.Command {
	var cfg cleanConfig
	cmd := &cobra.Command{
		Use:     "clean --prefix PREFIX",
		Short:   "Release a storm's held holds and close its accounts on a running ledgerd",
		Long:    cleanLong,
		Example: "  loadtest clean --prefix lt5x1kq3mz0a --dry-run\n  loadtest clean --prefix lt5x1kq3mz0a",
		Args:    cli.NoArgs,
	}
	cli.ExitStatus(cmd, "0  nothing left to do, or everything released and closed\n1  a hold could not be released or an account closed\n2  usage or setup error")
	targetFlags(cmd, &cfg.target, "file holding a Base64 signing secret ledgerd knows, to seal the release callbacks (default: install a fresh one, retired at the end)")
	cmd.Flags().StringVar(&cfg.prefix, "prefix", "", "the run prefix of the storm (its report's \"prefix\")")
	cmd.Flags().BoolVar(&cfg.dryRun, "dry-run", false, "say what would be released and closed, change nothing")
	cmd.Flags().IntVar(&cfg.conc, "concurrency", 8, "requests in flight")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if len(cfg.prefix) < 4 || strings.ContainsAny(cfg.prefix, "/ \t\n") {
			return cli.Usagef("--prefix must be a storm's run prefix (at least 4 characters, no / or white space)")
		}
		if cfg.conc < 1 || cfg.conc > 256 {
			return cli.Usagef("--concurrency must be 1 to 256")
		}
		for _, u := range [][2]string{{"callbacks", cfg.target.callbacks}, {"admin", cfg.target.admin}} {
			if err := validURL(u[0], u[1]); err != nil {
				return err
			}
		}
		return clean(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

// clean runs `loadtest clean` with cfg: it releases the prefix's held
// holds and closes its accounts.
func clean(ctx context.Context, cfg cleanConfig, stdout, stderr io.Writer) error {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "loadtest clean: %s\n", fmt.Sprintf(format, a...)) }
	admHTTP := &http.Client{Transport: newTransport(cfg.conc)}
	defer admHTTP.CloseIdleConnections()
	adm, err := newAdminClient(cfg.target.admin, cfg.target.adminToken, admHTTP)
	if err != nil {
		return cli.Usagef("--admin: %v", err)
	}
	held, err := heldHoldsOf(ctx, adm, cfg.prefix)
	if err != nil {
		return setupExit(fmt.Errorf("listing held holds: %w", cli.AdminAPI.Explain(err)))
	}
	accounts, err := accountsOf(ctx, adm, cfg.prefix, held)
	if err != nil {
		return setupExit(fmt.Errorf("finding the prefix's accounts: %w", cli.AdminAPI.Explain(err)))
	}
	open := 0
	for _, a := range accounts {
		if a.Status != adminapi.AccountClosed {
			open++
		}
	}
	fmt.Fprintf(stdout, "prefix %s: %d held holds to release, %d accounts (%d not closed)\n", cfg.prefix, len(held), len(accounts), open)
	if cfg.dryRun || len(held)+open == 0 {
		return nil
	}

	var tally cleanTally
	if len(held) > 0 {
		key, done, err := benchKey(ctx, adm, cfg.target.secretFile, logf)
		if err != nil {
			return setupExit(err)
		}
		defer done()
		if err := releaseHeld(ctx, cfg, key, held, &tally); err != nil {
			return setupExit(err)
		}
	}
	closeAccounts(ctx, adm, accounts, cfg.conc, &tally)
	fmt.Fprintf(stdout, "released %d holds, closed %d accounts; their rows, instruments and journal entries stay (the admin API cannot delete)\n", tally.released, tally.closed)
	if failures := tally.failures; len(failures) > 0 {
		for _, f := range failures[:min(len(failures), maxListed)] {
			fmt.Fprintf(stdout, "  %s\n", f)
		}
		return &cli.ExitError{Code: exitFailed, Err: fmt.Errorf("%d holds or accounts could not be cleaned", len(failures))}
	}
	return nil
}

// cleanTally counts what clean released and closed and collects what it
// could not; it is safe for concurrent use.
type cleanTally struct {
	mu               sync.Mutex
	released, closed int
	failures         []string
}

// count adds one to n, a counter of t.
func (t *cleanTally) count(n *int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	*n++
}

// failf records a failure.
func (t *cleanTally) failf(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, fmt.Sprintf(format, a...))
}

// releaseHeld releases the held holds through release callbacks sealed
// with key, cfg.conc at a time. It fails only when the callbacks endpoint
// cannot be reached; a hold not released is a failure in tally.
func releaseHeld(ctx context.Context, cfg cleanConfig, key envelope.Key, held []adminapi.Hold, tally *cleanTally) error {
	hc := &http.Client{Transport: newTransport(cfg.conc), Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	client := &caller.Client{BaseURL: cfg.target.callbacks, Key: key, HTTP: hc}
	if err := probeCallbacks(ctx, hc, cfg.target.callbacks); err != nil {
		return err
	}
	_ = forEach(ctx, held, cfg.conc, func(h adminapi.Hold) error {
		svc, err := releaseHold(ctx, client, cfg.target.providerID, cfg.prefix, h)
		switch {
		case err != nil:
			tally.failf("hold %s (payout %s): %v", h.HoldReference, h.PayoutID, err)
		case svc.Outcome() == "approved":
			tally.count(&tally.released)
		case svc.Str("reason") == "hold_captured":
			// Captured since it was listed: nothing to release.
		default:
			tally.failf("hold %s (payout %s): release answered %s %s", h.HoldReference, h.PayoutID, svc.Outcome(), svc.Str("reason"))
		}
		return nil
	})
	return nil
}

// closeAccounts closes the accounts not closed yet, conc at a time; an
// account already closed meanwhile counts as closed.
func closeAccounts(ctx context.Context, adm *adminClient, accounts []adminapi.Account, conc int, tally *cleanTally) {
	_ = forEach(ctx, accounts, conc, func(a adminapi.Account) error {
		if a.Status == adminapi.AccountClosed {
			return nil
		}
		_, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
			return adm.Accounts.Update(ctx, a.AccountID, &adminapi.AccountUpdateRequest{Status: adminapi.Ptr(adminapi.AccountClosed)})
		})
		if err != nil && !errors.Is(err, adminapi.ErrAccountClosed) {
			tally.failf("closing account %s: %v", a.AccountID, cli.AdminAPI.Explain(err))
			return nil
		}
		tally.count(&tally.closed)
		return nil
	})
}

// heldHoldsOf lists the held holds whose payout or account carries prefix.
func heldHoldsOf(ctx context.Context, adm *adminClient, prefix string) ([]adminapi.Hold, error) {
	var out []adminapi.Hold
	for h, err := range adm.Holds.ListIter(ctx, &adminapi.HoldListOptions{Status: adminapi.HoldHeld, Limit: 100}) {
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(h.PayoutID, prefix+"-") || strings.HasPrefix(h.AccountID, prefix+"-") {
			out = append(out, *h)
		}
	}
	return out, nil
}

// accountsOf finds the prefix's accounts: by the IDs storms number them
// with, until one does not exist, and those of held holds.
func accountsOf(ctx context.Context, adm *adminClient, prefix string, held []adminapi.Hold) ([]adminapi.Account, error) {
	var out []adminapi.Account
	seen := map[string]bool{}
	get := func(id string) (bool, error) {
		a, _, err := retryAdmin(ctx, func(ctx context.Context) (*adminapi.Account, *adminapi.Response, error) {
			return adm.Accounts.Get(ctx, id)
		})
		if errors.Is(err, adminapi.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		seen[id] = true
		out = append(out, *a)
		return true, nil
	}
	for i := 0; i < 100000; i++ {
		ok, err := get(AccountID(prefix, i))
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
	}
	for _, h := range held {
		if !seen[h.AccountID] && strings.HasPrefix(h.AccountID, prefix+"-") {
			if _, err := get(h.AccountID); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// releaseHold sends one release callback under the service's retry policy.
func releaseHold(ctx context.Context, client *caller.Client, providerID, prefix string, h adminapi.Hold) (*caller.Reply, error) {
	svc, err := json.Marshal(map[string]any{"holdReference": h.HoldReference, "payoutID": h.PayoutID, "providerID": providerID,
		"idempotencyKey": prefix + "-clean-" + h.HoldReference, "reason": "cancelled"})
	if err != nil {
		return nil, err
	}
	w := &cycleWorker{statuses: map[int]int{}}
	if out := w.send(ctx, client, claims.Release, svc); out != nil {
		return out, nil
	}
	codes := make([]string, 0, len(w.statuses))
	for c, n := range w.statuses {
		codes = append(codes, fmt.Sprintf("%d×%d", c, n))
	}
	return nil, fmt.Errorf("no approved answer (statuses %s; 0 is a transport error)", strings.Join(codes, " "))
}
