package reconciliation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

const paymentsRoute = "GET /providers/{providerID}/participants/{participantID}/payments"

// gate holds requests for payments lists until Open, reporting each one
// that enters: a deterministic way to stop a run between its snapshot and
// its fixes.
type gate struct {
	entered chan string
	open    chan struct{}
	once    sync.Once
}

// newGate returns a closed gate, opened at the latest when t ends (before
// the fake's server closes, which waits for the requests it holds).
func newGate(t *testing.T) *gate {
	g := &gate{entered: make(chan string, 64), open: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

type bundle struct {
	url    string
	pool   *pgxpool.Pool
	db     *store.DB
	fake   *providertest.Service
	client *provider.Client
	gate   atomic.Pointer[gate]
	// failing: the participant whose payments lists answer 500.
	failing atomic.Pointer[string]
	now     atomic.Pointer[time.Time]
}

type setupOpts struct {
	noProvider bool
}

// setup gives a fresh database, the fake provider API over real HTTP (its
// payments lists can be held at a gate), and a clock pinned at the wall
// time of the start of the test.
func setup(t *testing.T, o setupOpts) *bundle {
	t.Helper()
	b := &bundle{url: storetest.URL(t)}
	b.pool = storetest.PoolURL(t, b.url)
	b.db = store.Wrap(b.pool, nil)
	now := time.Now().UTC().Truncate(time.Microsecond)
	b.now.Store(&now)
	if o.noProvider {
		return b
	}
	b.fake = providertest.NewService()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := b.failing.Load(); f != nil && strings.HasSuffix(r.URL.Path, "/participants/"+*f+"/payments") {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"type":"about:blank","title":"Internal error","status":500,"detail":"injected"}`))
			return
		}
		if g := b.gate.Load(); g != nil && strings.HasSuffix(r.URL.Path, "/payments") {
			g.entered <- r.URL.Path
			<-g.open
		}
		b.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	id, secret := b.fake.APIKey()
	c, err := provider.NewClient(ts.URL, provider.WithProviderID(b.fake.ProviderID()), provider.WithAPIKey(id, secret),
		provider.WithRetryPolicy(provider.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	b.client = c
	return b
}

func (b *bundle) clock() time.Time { return *b.now.Load() }

func (b *bundle) setNow(t time.Time) { b.now.Store(&t) }

// reconciler returns a Reconciler on the bundle's database (or pool, when
// given: another replica), its provider and clock.
func (b *bundle) reconciler(t *testing.T, mod ...func(*reconciliation.Config)) *reconciliation.Reconciler {
	t.Helper()
	cfg := reconciliation.Config{DB: b.db, Now: b.clock}
	if b.client != nil {
		cfg.Provider = b.client
	}
	for _, m := range mod {
		m(&cfg)
	}
	r, err := reconciliation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (b *bundle) run(t *testing.T, fix bool) reconciliation.Report {
	t.Helper()
	rep, err := b.reconciler(t).Run(context.Background(), fix)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rep
}

// sender is a customer account with a funding source, registered with the
// fake as a participant whose externalID is the account's owner.
type sender struct {
	account ledger.Account
	source  string
}

func (b *bundle) sender(t *testing.T, ownerPrefix, funds string) sender {
	t.Helper()
	src := storetest.Unique("card-")
	a := storetest.Account(t, b.db, storetest.AccountOpts{Owner: storetest.Unique(ownerPrefix), Funds: funds, Source: src})
	if b.client != nil {
		_, _, err := b.client.Participants.Create(context.Background(), &provider.ParticipantCreateRequest{
			ExternalID: a.OwnerExternalID, GivenName: "Pat", FamilyName: "Payer",
			Address:      provider.Address{AddressLine1: "1 Main St", City: "Springfield", StateOrProvince: "IL", PostalCode: "62701", Country: "US"},
			PhoneNumbers: []string{"+15555550100"}})
		if err != nil {
			t.Fatalf("register participant: %v", err)
		}
	}
	return sender{account: a, source: src}
}

type hold struct {
	ref, payoutID, amount string
}

// hold places a hold of amount for a new payout, at the given time (zero:
// now).
func (b *bundle) hold(t *testing.T, s sender, amount string, at time.Time) hold {
	t.Helper()
	payout := storetest.Unique("pay-")
	if at.IsZero() {
		at = time.Now()
	}
	d, err := b.db.Authorize(context.Background(), holds.AuthorizeParams{Key: "k-" + payout, Fingerprint: make([]byte, 32),
		KeyFingerprint: "test", Now: at, PayoutID: payout, ExternalID: s.account.OwnerExternalID, FundingSource: s.source,
		Currency: "USD", Amount: decimal.RequireFromString(amount), FraudDeny: 0.9, FraudStepUp: 0.75,
		HoldReference: ledger.NewReference("hold_")})
	if err != nil || !d.Approved() {
		t.Fatalf("place: %+v %v", d, err)
	}
	return hold{ref: d.Reference, payoutID: payout, amount: amount}
}

// payout seeds the hold's payout at the fake with a status, for the hold's
// amount (1.00 for a payout without a hold here).
func (b *bundle) payout(t *testing.T, s sender, h hold, status string, created time.Time) {
	t.Helper()
	amount := h.amount
	if amount == "" {
		amount = "1.00"
	}
	if _, err := b.fake.SeedPayout(b.fake.ProviderID(), providertest.Payout{PayoutID: h.payoutID,
		SenderExternalID: s.account.OwnerExternalID, Amount: providertest.USD(amount), Status: status, CreatedOn: created}); err != nil {
		t.Fatalf("seed payout: %v", err)
	}
}

func (b *bundle) capture(t *testing.T, h hold) {
	t.Helper()
	if d := storetest.Settle(t, b.db, h.payoutID, h.ref, true); !d.Approved() {
		t.Fatalf("capture: %+v", d)
	}
}

func (b *bundle) release(t *testing.T, h hold) {
	t.Helper()
	if d := storetest.Settle(t, b.db, h.payoutID, h.ref, false); !d.Approved() {
		t.Fatalf("release: %+v", d)
	}
}

// endedHold places a hold of 10.00, ends it as end says ("released",
// "captured", or "" to leave it held), and seeds its payout at the fake
// with status ("": the service does not know it).
func (b *bundle) endedHold(t *testing.T, s sender, end, status string) hold {
	t.Helper()
	h := b.hold(t, s, "10.00", time.Time{})
	switch end {
	case "released":
		b.release(t, h)
	case "captured":
		b.capture(t, h)
	}
	if status != "" {
		b.payout(t, s, h, status, time.Time{})
	}
	return h
}

func (b *bundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (b *bundle) settlement(t *testing.T) decimal.Decimal {
	t.Helper()
	var d decimal.Decimal
	if err := b.pool.QueryRow(context.Background(),
		`SELECT balance FROM account_balances WHERE account_id = 'settlement:USD'`).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (b *bundle) paymentsRequests() int {
	n := 0
	for _, r := range b.fake.Requests() {
		if r.Route == paymentsRoute {
			n++
		}
	}
	return n
}

// kinds maps each finding's subject to "kind severity fixed".
func kinds(rep reconciliation.Report) map[string]string {
	m := map[string]string{}
	for _, f := range rep.Findings {
		m[f.Subject] = fmt.Sprintf("%s %s %v", f.Kind, f.Severity, f.Fixed)
	}
	return m
}

func findings(rep reconciliation.Report, kind string) []ledger.Finding {
	var out []ledger.Finding
	for _, f := range rep.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func wantMap(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("finding for %s = %q, want %q", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected finding for %s: %q", k, g)
		}
	}
}

// assertStored checks that the run and its findings are stored as reported.
func (b *bundle) assertStored(t *testing.T, rep reconciliation.Report, fix bool) {
	t.Helper()
	var started, finished time.Time
	var status string
	var gotFix bool
	if err := b.pool.QueryRow(context.Background(),
		`SELECT started_on, finished_on, status, fix FROM reconciliation_runs WHERE run_id = $1`, rep.RunID).
		Scan(&started, &finished, &status, &gotFix); err != nil {
		t.Fatalf("stored run %s: %v", rep.RunID, err)
	}
	if !started.Equal(rep.StartedOn) || !finished.Equal(rep.FinishedOn) || status != rep.Status || gotFix != fix {
		t.Errorf("stored run %v %v %s %v, report %v %v %s fix %v", started, finished, status, gotFix,
			rep.StartedOn, rep.FinishedOn, rep.Status, fix)
	}
	rows, err := b.pool.Query(context.Background(),
		`SELECT kind, severity, subject, detail, fixed, coalesce(finding_id, ''), is_new, acknowledged
FROM reconciliation_findings WHERE run_id = $1 ORDER BY seq`, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []ledger.Finding
	for rows.Next() {
		var f ledger.Finding
		if err := rows.Scan(&f.Kind, &f.Severity, &f.Subject, &f.Detail, &f.Fixed, &f.FindingID, &f.New, &f.Acknowledged); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, f)
	}
	if !slices.Equal(stored, rep.Findings) && !(len(stored) == 0 && len(rep.Findings) == 0) {
		t.Errorf("stored findings %+v\nreport findings %+v", stored, rep.Findings)
	}
}

var runIDPattern = regexp.MustCompile(`^rec_[a-z2-7]{26}$`)

func TestReconcilerCleanLedgerHasNoFindings(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "clean-", "100.00")
	held, captured, released, unlisted := b.hold(t, s, "10.00", time.Time{}), b.hold(t, s, "20.00", time.Time{}),
		b.hold(t, s, "5.00", time.Time{}), b.hold(t, s, "1.00", time.Time{})
	b.capture(t, captured)
	b.release(t, released)
	b.payout(t, s, held, providertest.PayoutAuthorized, time.Time{})
	b.payout(t, s, captured, providertest.PayoutCompleted, time.Time{})
	b.payout(t, s, released, providertest.PayoutCancelled, time.Time{})
	_ = unlisted

	rep := b.run(t, false)
	if len(rep.Findings) != 0 || rep.Status != reconciliation.StatusClean {
		t.Fatalf("report %+v, want clean with no findings", rep)
	}
	if !runIDPattern.MatchString(rep.RunID) || rep.StartedOn.IsZero() || rep.FinishedOn.Before(rep.StartedOn) {
		t.Fatalf("report header %+v", rep)
	}
	raw, _ := json.Marshal(rep)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if fs, ok := m["findings"].([]any); !ok || len(fs) != 0 || m["status"] != "clean" || m["runID"] != rep.RunID ||
		m["startedOn"] == nil || m["finishedOn"] == nil || m["mode"] != reconciliation.ModeFull ||
		m["checkpoint"] != rep.Checkpoint || rep.Checkpoint == "" || len(m) != 7 {
		t.Fatalf("report JSON %s", raw)
	}
	var stages []string
	for _, s := range rep.Stages {
		stages = append(stages, s.Name)
	}
	if want := []string{reconciliation.StageInvariants, reconciliation.StageChecks, reconciliation.StageCompare,
		reconciliation.StageStore}; !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
	b.assertStored(t, rep, false)
	if n := b.paymentsRequests(); n != 1 {
		t.Errorf("payments list read %d times, want 1", n)
	}
}

func TestReconcilerInvariantBreachesAreCritical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, kind string
		corrupt    func(t *testing.T, b *bundle, acct string) (subject string)
	}{
		{"BalanceDrift", "balance_drift", func(t *testing.T, b *bundle, acct string) string {
			b.exec(t, `UPDATE accounts SET balance = balance + 1 WHERE account_id = $1`, acct)
			return acct
		}},
		{"HeldDrift", "held_drift", func(t *testing.T, b *bundle, acct string) string {
			b.exec(t, `UPDATE accounts SET held = held + 1 WHERE account_id = $1`, acct)
			return acct
		}},
		{"NegativeAvailable", "negative_available", func(t *testing.T, b *bundle, acct string) string {
			b.exec(t, `ALTER TABLE accounts DROP CONSTRAINT accounts_available_nonnegative`)
			b.exec(t, `UPDATE accounts SET held = balance + 5 WHERE account_id = $1`, acct)
			return acct
		}},
		{"UnbalancedTransaction", "unbalanced_transaction", func(t *testing.T, b *bundle, acct string) string {
			b.exec(t, `ALTER TABLE journal DROP CONSTRAINT journal_contra_check`)
			id := "00000000-0000-4000-8000-000000000001"
			b.exec(t, `INSERT INTO journal (transaction_id, kind, reference, account_id, contra_account_id, currency, amount, created_at)
VALUES ($1, 'adjustment', 'bad', $2, $2, 'USD', 1, now())`, id, acct)
			return id
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, setupOpts{noProvider: true})
			s := b.sender(t, "inv-", "100.00")
			if rep := b.run(t, false); len(rep.Findings) != 0 {
				t.Fatalf("before: %+v", rep.Findings)
			}
			subject := c.corrupt(t, b, s.account.AccountID)
			rep := b.run(t, false)
			var hit bool
			for _, f := range rep.Findings {
				if f.Severity != reconciliation.SeverityCritical || f.Fixed {
					t.Errorf("finding %+v is not an unfixed critical", f)
				}
				hit = hit || (f.Kind == c.kind && f.Subject == subject && strings.HasPrefix(f.Detail, "I"))
			}
			if !hit || rep.Status != reconciliation.StatusCritical {
				t.Fatalf("report %+v, want a %s finding on %s", rep, c.kind, subject)
			}
			b.assertStored(t, rep, false)
		})
	}
}

func TestReconcilerStaleHoldsOrphansAndDuplicateCredits(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	s := b.sender(t, "warn-", "100.00")
	now := b.clock()
	stale := b.hold(t, s, "10.00", now.Add(-reconciliation.DefaultHoldMaxAge-time.Minute))
	fresh := b.hold(t, s, "10.00", now.Add(-reconciliation.DefaultHoldMaxAge+time.Hour))
	ended := b.hold(t, s, "10.00", now.Add(-30*reconciliation.DefaultHoldMaxAge))
	b.release(t, ended)
	_ = fresh
	ctx := context.Background()
	if d := storetest.Settle(t, b.db, "pay-oc", "hold_nevercaptured", true); !d.Approved() {
		t.Fatalf("orphan capture: %+v", d)
	}
	if d := storetest.Settle(t, b.db, "pay-or", "hold_neverreleased", false); !d.Approved() {
		t.Fatalf("orphan release: %+v", d)
	}
	// One requestID under two keys (credited once), another under one.
	dst := storetest.Unique("dst-")
	r := storetest.Account(t, b.db, storetest.AccountOpts{Dest: dst})
	for _, row := range [][2]string{{"req-twice", "k1"}, {"req-twice", "k2"}, {"req-once", "k3"}} {
		if d, err := b.db.Credit(ctx, ledger.CreditParams{Key: row[1], Fingerprint: make([]byte, 32), KeyFingerprint: "kf", Now: now,
			RequestID: row[0], Destination: dst, Requester: r.OwnerExternalID, Currency: "USD", Amount: decimal.RequireFromString("5.00"),
			CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()}); err != nil || !d.Approved() {
			t.Fatalf("credit: %+v %v", d, err)
		}
	}

	rep := b.run(t, false)
	for _, f := range rep.Findings {
		t.Logf("%s %s %s: %s", f.Kind, f.Severity, f.Subject, f.Detail)
	}
	wantMap(t, kinds(rep), map[string]string{
		stale.ref:            "stale_hold warning false",
		"hold_nevercaptured": "orphan_capture critical false",
		"hold_neverreleased": "orphan_release warning false",
		"req-twice":          "duplicate_credit_attempt warning false",
	})
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s, want warning", rep.Status)
	}
	if f := findings(rep, "duplicate_credit_attempt"); len(f) == 1 && !strings.Contains(f[0].Detail, "2 idempotency keys; credited once as cred_") {
		t.Errorf("detail %q", f[0].Detail)
	}
	if f := findings(rep, "stale_hold"); len(f) == 1 && !strings.Contains(f[0].Detail, stale.payoutID) {
		t.Errorf("detail %q", f[0].Detail)
	}
	b.assertStored(t, rep, false)

	// HoldMaxAge is the configured one.
	rep, err := b.reconciler(t, func(c *reconciliation.Config) { c.HoldMaxAge = time.Minute }).Run(ctx, false)
	if err != nil || len(findings(rep, "stale_hold")) != 2 {
		t.Fatalf("HoldMaxAge 1m: %+v %v", findings(rep, "stale_hold"), err)
	}
}

func TestReconcilerComparesHoldsWithPayoutStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "cmp-", "1000.00")
	other := b.sender(t, "cmp-", "100.00")
	want := map[string]string{}
	for _, c := range []struct {
		status, end, want string
	}{
		{providertest.PayoutCancelled, "", "missed_release warning false"},
		{providertest.PayoutExpired, "", "missed_release warning false"},
		{providertest.PayoutDenied, "", "missed_release warning false"},
		{providertest.PayoutFailed, "", "missed_release warning false"},
		{providertest.PayoutPayoutFailed, "", ""}, // a failed claim keeps the hold
		{providertest.PayoutCompleted, "", "missed_capture critical false"},
		{providertest.PayoutInitiated, "", ""},
		{providertest.PayoutAuthorized, "", ""},
		{providertest.PayoutAccepted, "", ""},
		{providertest.PayoutClaiming, "", ""},
		{"", "", ""}, // not in the list
		{providertest.PayoutCompleted, "released", "capture_release_conflict critical false"},
		{providertest.PayoutCancelled, "released", ""},
		{providertest.PayoutCompleted, "captured", ""},
		{providertest.PayoutCancelled, "captured", "capture_cancel_conflict critical false"},
		{providertest.PayoutExpired, "captured", "capture_cancel_conflict critical false"},
		{providertest.PayoutPayoutFailed, "captured", ""}, // a failed claim: the service retries the claim
	} {
		h := b.endedHold(t, s, c.end, c.status)
		if c.want != "" {
			want[h.ref] = c.want
		}
	}
	oh := b.hold(t, other, "10.00", time.Time{})
	b.payout(t, other, oh, providertest.PayoutCompleted, time.Time{})
	want[oh.ref] = "missed_capture critical false"

	rep := b.run(t, false)
	wantMap(t, kinds(rep), want)
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s, want critical", rep.Status)
	}
	for _, f := range rep.Findings {
		// The hold as read back for the detail: amount, currency, account.
		acct := s.account.AccountID
		if f.Subject == oh.ref {
			acct = other.account.AccountID
		}
		if !strings.Contains(f.Detail, "hold of 10.00 USD on account "+acct) {
			t.Errorf("%s detail %q does not say which hold", f.Kind, f.Detail)
		}
	}
	if n := b.paymentsRequests(); n != 2 {
		t.Errorf("payments lists read %d times, want once per sender (2)", n)
	}
	b.assertStored(t, rep, false)
	storetest.AssertBalances(t, b.db, s.account.AccountID, "960.00", "110.00", "850.00") // nothing applied without fix
}

func TestReconcilerReadsEveryPageOnceBackToTheLookback(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "pages-", "100.00")
	old := b.clock().Add(-time.Hour)
	deep, shallow := b.hold(t, s, "10.00", time.Time{}), b.hold(t, s, "10.00", time.Time{})
	b.payout(t, s, deep, providertest.PayoutCompleted, old) // the oldest: on page 2
	for i := range 150 {
		// Cancelled with no hold here: nothing to say.
		b.payout(t, s, hold{payoutID: fmt.Sprintf("pay-noise-%03d", i)}, providertest.PayoutCancelled, old.Add(time.Duration(i+1)*time.Second))
	}
	b.payout(t, s, shallow, providertest.PayoutCancelled, b.clock()) // the newest: on page 1
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{deep.ref: "missed_capture critical false", shallow.ref: "missed_release warning false"})
	if n := b.paymentsRequests(); n != 2 {
		t.Errorf("payments pages read %d, want 2", n)
	}
}

func TestReconcilerStopsReadingPastTheLookback(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "hist-", "100.00")
	recent := b.hold(t, s, "10.00", b.clock())
	b.payout(t, s, recent, providertest.PayoutCancelled, b.clock())
	// Completed payouts with no hold here, but past the lookback: not read.
	history := b.clock().Add(-reconciliation.DefaultPayoutLookback - time.Hour)
	for i := range 250 {
		b.payout(t, s, hold{payoutID: fmt.Sprintf("pay-history-%03d", i)}, providertest.PayoutCompleted,
			history.Add(-time.Duration(i)*time.Minute))
	}
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{recent.ref: "missed_release warning false"})
	if n := b.paymentsRequests(); n != 1 {
		t.Errorf("payments pages read %d, want 1 (3 is the whole history)", n)
	}
}

func TestReconcilerReadsBackToTheOldestHeldHold(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "hist-", "100.00")
	placed := b.clock().Add(-reconciliation.DefaultPayoutLookback - 48*time.Hour)
	old := b.hold(t, s, "10.00", placed)
	b.payout(t, s, old, providertest.PayoutExpired, placed)
	rep := b.run(t, false)
	if got := kinds(rep)[old.ref]; got != "missed_release warning false" {
		t.Errorf("hold held past the lookback: finding %q, want missed_release", got)
	}
}

func TestReconcilerReadsListsSideBySideUpToTheBound(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	want := map[string]string{}
	byOwner := map[string]string{}
	for range 3 {
		s := b.sender(t, "side-", "100.00")
		h := b.hold(t, s, "10.00", time.Time{})
		b.payout(t, s, h, providertest.PayoutCompleted, time.Time{})
		want[h.ref] = "missed_capture critical false"
		byOwner[s.account.OwnerExternalID] = h.ref
	}
	g := newGate(t)
	b.gate.Store(g)
	rec := b.reconciler(t, func(c *reconciliation.Config) { c.ProviderConcurrency = 2 })
	type result struct {
		rep reconciliation.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := rec.Run(context.Background(), false)
		done <- result{rep, err}
	}()
	for i := range 2 {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d payments list(s) in flight, want 2 side by side", i)
		}
	}
	select {
	case p := <-g.entered:
		t.Fatalf("a third list (%s) read while two are in flight: the bound is 2", p)
	default:
	}
	g.Open()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	wantMap(t, kinds(res.rep), want)
	owners := slices.Sorted(maps.Keys(byOwner))
	for i, f := range res.rep.Findings {
		if i < len(owners) && f.Subject != byOwner[owners[i]] {
			t.Errorf("finding %d is about %s, want %s (participant %s): findings in the participants' order", i, f.Subject,
				byOwner[owners[i]], owners[i])
		}
	}
	var compare bool
	for _, s := range res.rep.Stages {
		compare = compare || (s.Name == reconciliation.StageCompare && s.Took > 0)
	}
	if !compare {
		t.Errorf("stages %+v: no comparison timed", res.rep.Stages)
	}
}

func TestReconcilerProviderErrorsAreWarningsAndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	failing := b.sender(t, "a-fail-", "100.00")
	fine := b.sender(t, "b-fine-", "100.00")
	b.hold(t, failing, "10.00", time.Time{})
	fh := b.hold(t, fine, "10.00", time.Time{})
	b.payout(t, fine, fh, providertest.PayoutCompleted, time.Time{})
	// unknown's owner is not a participant of the fake: 404.
	src := storetest.Unique("card-")
	ua := storetest.Account(t, b.db, storetest.AccountOpts{Owner: storetest.Unique("c-unregistered-"), Funds: "100.00", Source: src})
	b.hold(t, sender{account: ua, source: src}, "10.00", time.Time{})
	b.failing.Store(&failing.account.OwnerExternalID) // lists are read side by side: fail this one

	rep := b.run(t, false)
	for _, f := range rep.Findings {
		t.Logf("%s %s %s: %s", f.Kind, f.Severity, f.Subject, f.Detail)
	}
	wantMap(t, kinds(rep), map[string]string{
		failing.account.OwnerExternalID: "provider_unreachable warning false",
		fh.ref:                          "missed_capture critical false",
		ua.OwnerExternalID:              "provider_unreachable warning false",
	})
	for _, f := range findings(rep, "provider_unreachable") {
		if !strings.Contains(f.Detail, "(holds not compared: 1)") {
			t.Errorf("detail %q", f.Detail)
		}
	}
	b.assertStored(t, rep, false)
}

func TestReconcilerFixAppliesMissedCaptureAndReleaseOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "fix-", "100.00")
	acct := s.account.AccountID
	completed, cancelled, conflict := b.hold(t, s, "30.00", time.Time{}), b.hold(t, s, "20.00", time.Time{}), b.hold(t, s, "10.00", time.Time{})
	b.release(t, conflict)
	b.payout(t, s, completed, providertest.PayoutCompleted, time.Time{})
	b.payout(t, s, cancelled, providertest.PayoutCancelled, time.Time{})
	b.payout(t, s, conflict, providertest.PayoutCompleted, time.Time{})
	storetest.AssertBalances(t, b.db, acct, "100.00", "50.00", "50.00")

	rep := b.run(t, true)
	for _, f := range rep.Findings {
		t.Logf("%s %s %s: %s", f.Kind, f.Severity, f.Subject, f.Detail)
	}
	wantMap(t, kinds(rep), map[string]string{
		completed.ref: "missed_capture critical true",
		cancelled.ref: "missed_release warning true",
		conflict.ref:  "capture_release_conflict critical false", // never fixed
	})
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s", rep.Status)
	}
	b.assertStored(t, rep, true)
	storetest.AssertBalances(t, b.db, acct, "70.00", "0.00", "70.00")
	if got := b.settlement(t); !got.Equal(decimal.RequireFromString("30.00")) {
		t.Errorf("settlement %s, want 30.00", got)
	}
	storetest.AssertInvariants(t, b.db)

	c, err := b.db.GetHold(context.Background(), completed.ref)
	if err != nil || c.Status != holds.StatusCaptured {
		t.Fatalf("captured hold %+v %v", c, err)
	}
	r, err := b.db.GetHold(context.Background(), cancelled.ref)
	if err != nil || r.Status != holds.StatusReleased || r.ReleaseReason != reconciliation.ReleaseReason {
		t.Fatalf("released hold %+v %v", r, err)
	}
	// The fixes are journaled: the capture's journal transaction and
	// the release are each marked by a row naming the run.
	if n := b.count(t, `SELECT count(*) FROM reconciliation_fixes f
JOIN hold_states h USING (hold_reference)
JOIN journal_transactions j ON j.transaction_id = f.transaction_id AND j.kind = 'reconciliation'
WHERE f.run_id = $1 AND f.action = 'capture' AND f.hold_reference = $2 AND f.reference = h.capture_reference
  AND f.transaction_id = h.transaction_id AND f.payout_status = 'completed'`, rep.RunID, completed.ref); n != 1 {
		t.Errorf("capture fix rows %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_fixes f JOIN hold_states h USING (hold_reference)
WHERE f.run_id = $1 AND f.action = 'release' AND f.hold_reference = $2 AND f.reference = h.release_reference
  AND f.transaction_id IS NULL AND f.payout_status = 'cancelled'`, rep.RunID, cancelled.ref); n != 1 {
		t.Errorf("release fix rows %d, want 1", n)
	}
	for _, f := range rep.Findings {
		if f.Fixed && !strings.Contains(f.Detail, "fixed: ") {
			t.Errorf("fixed finding without what was done: %q", f.Detail)
		}
	}

	// A second fix run finds nothing more to fix and moves nothing.
	again := b.run(t, true)
	wantMap(t, kinds(again), map[string]string{conflict.ref: "capture_release_conflict critical false"})
	storetest.AssertBalances(t, b.db, acct, "70.00", "0.00", "70.00")
	if got := b.settlement(t); !got.Equal(decimal.RequireFromString("30.00")) {
		t.Errorf("settlement %s after the second run, want 30.00", got)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_fixes`); n != 2 {
		t.Errorf("fix rows %d, want 2", n)
	}
	if n := b.count(t, `SELECT count(*) FROM journal_transactions`); n != 2 { // the funding adjustment and the capture
		t.Errorf("journal transactions %d, want 2", n)
	}
}

func TestReconcilerFixedFindingsDoNotCountTowardsTheStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "fixed-", "100.00")
	h := b.hold(t, s, "40.00", time.Time{})
	b.payout(t, s, h, providertest.PayoutExpired, time.Time{})
	if rep := b.run(t, false); rep.Status != reconciliation.StatusWarning {
		t.Fatalf("report-only run %+v, want warning", rep)
	}
	storetest.AssertBalances(t, b.db, s.account.AccountID, "100.00", "40.00", "60.00")
	rep := b.run(t, true)
	if rep.Status != reconciliation.StatusClean || len(rep.Findings) != 1 || !rep.Findings[0].Fixed {
		t.Fatalf("fix run %+v, want clean with one fixed finding", rep)
	}
	storetest.AssertBalances(t, b.db, s.account.AccountID, "100.00", "0.00", "100.00")
	if rep := b.run(t, false); rep.Status != reconciliation.StatusClean || len(rep.Findings) != 0 {
		t.Fatalf("after the fix %+v, want clean", rep)
	}
}

func TestReconcilerFixLeavesAHoldEndedSinceTheSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "late-", "100.00")
	h := b.hold(t, s, "30.00", time.Time{})
	b.payout(t, s, h, providertest.PayoutCompleted, time.Time{})
	g := newGate(t)
	b.gate.Store(g)
	rec := b.reconciler(t)
	done := make(chan reconciliation.Report)
	go func() {
		rep, err := rec.Run(context.Background(), true)
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- rep
	}()
	<-g.entered     // the snapshot saw the hold held
	b.capture(t, h) // the late capture callback lands
	g.Open()
	rep := <-done
	wantMap(t, kinds(rep), map[string]string{h.ref: "missed_capture critical false"})
	if f := rep.Findings[0]; !strings.Contains(f.Detail, "not fixed: the hold is captured by now") {
		t.Errorf("detail %q", f.Detail)
	}
	storetest.AssertBalances(t, b.db, s.account.AccountID, "70.00", "0.00", "70.00")
	if n := b.count(t, `SELECT count(*) FROM reconciliation_fixes`); n != 0 {
		t.Errorf("fix rows %d, want 0", n)
	}
	storetest.AssertInvariants(t, b.db)
}

func TestReconcilerOneRunAtATimeAcrossReplicas(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "conc-", "100.00")
	c, r := b.hold(t, s, "30.00", time.Time{}), b.hold(t, s, "20.00", time.Time{})
	b.payout(t, s, c, providertest.PayoutCompleted, time.Time{})
	b.payout(t, s, r, providertest.PayoutDenied, time.Time{})
	g := newGate(t)
	b.gate.Store(g)
	first := b.reconciler(t)
	done := make(chan reconciliation.Report, 1)
	go func() {
		rep, err := first.Run(context.Background(), true)
		if err != nil {
			t.Errorf("first run: %v", err)
		}
		done <- rep
	}()
	<-g.entered // the first run holds the lease, mid-comparison
	var running string
	for range 3 {
		// Each its own Reconciler on its own pool: another replica.
		pool := storetest.PoolURL(t, b.url)
		rec := b.reconciler(t, func(c *reconciliation.Config) { c.DB = store.Wrap(pool, nil) })
		_, err := rec.Run(context.Background(), true)
		var re *reconciliation.RunningError
		if !errors.As(err, &re) || !strings.HasPrefix(re.RunID, "rec_") {
			t.Fatalf("a second run while the first runs: %v, want a RunningError", err)
		}
		running = re.RunID
	}
	g.Open()
	rep := <-done
	if rep.RunID != running {
		t.Errorf("the refusals named run %s; the running one was %s", running, rep.RunID)
	}
	fixed := 0
	for _, f := range rep.Findings {
		if f.Fixed {
			fixed++
		}
	}
	if fixed != 2 {
		t.Errorf("the run fixed %d findings, want 2: %+v", fixed, rep.Findings)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_runs`); n != 1 {
		t.Errorf("runs stored %d, want only the first's", n)
	}
	// The lease is free again.
	b.gate.Store(nil)
	if _, err := b.reconciler(t).Run(context.Background(), false); err != nil {
		t.Fatalf("a run after the first: %v", err)
	}
	storetest.AssertBalances(t, b.db, s.account.AccountID, "70.00", "0.00", "70.00")
	if got := b.settlement(t); !got.Equal(decimal.RequireFromString("30.00")) {
		t.Errorf("settlement %s, want 30.00", got)
	}
	storetest.AssertInvariants(t, b.db)
}

func TestScheduleOnlyOneReplicaRunsATick(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	s := b.sender(t, "lock-", "100.00")
	h := b.hold(t, s, "10.00", time.Time{})
	b.payout(t, s, h, providertest.PayoutAuthorized, time.Time{})
	first := b.reconciler(t)
	otherPool := storetest.PoolURL(t, b.url) // another replica: its own connections
	second := b.reconciler(t, func(c *reconciliation.Config) { c.DB = store.Wrap(otherPool, nil) })

	g := newGate(t)
	b.gate.Store(g)
	type result struct {
		rep reconciliation.Report
		ran bool
		err error
	}
	done := make(chan result)
	go func() {
		rep, ran, err := first.TryRun(context.Background(), false)
		done <- result{rep, ran, err}
	}()
	<-g.entered // first holds the lock and is mid-run

	// Bounded: a second replica that ran would wait at the gate.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rep, ran, err := second.TryRun(ctx, false); err != nil || ran || rep.RunID != "" {
		t.Fatalf("second replica: ran %v %+v %v, want skipped", ran, rep, err)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_runs`); n != 1 {
		t.Fatalf("runs stored %d, want only the first's", n)
	}
	g.Open()
	res := <-done
	if res.err != nil || !res.ran || res.rep.Status != reconciliation.StatusClean {
		t.Fatalf("first replica: %+v", res)
	}
	// The lock is free again.
	b.gate.Store(nil)
	if _, ran, err := second.TryRun(context.Background(), false); err != nil || !ran {
		t.Fatalf("second replica after the first: ran %v %v", ran, err)
	}
	if n := b.count(t, `SELECT count(*) FROM reconciliation_runs WHERE status = 'clean'`); n != 2 {
		t.Fatalf("finished runs %d, want 2", n)
	}
}

func TestScheduleStartRunsEveryTickUntilStop(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	rec := b.reconciler(t, func(c *reconciliation.Config) { c.Every = 10 * time.Millisecond })
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(context.Background()); err == nil {
		t.Error("a second Start succeeded")
	}
	deadline := time.Now().Add(20 * time.Second)
	for b.count(t, `SELECT count(*) FROM reconciliation_runs WHERE finished_on IS NOT NULL`) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no two scheduled runs within 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec.Stop()
	rec.Stop() // idempotent
	n := b.count(t, `SELECT count(*) FROM reconciliation_runs`)
	// Stop waited for the loop: nothing runs after it.
	if _, ran, err := rec.TryRun(context.Background(), false); err != nil || !ran {
		t.Fatalf("TryRun after Stop: %v %v (the lock was left held)", ran, err)
	}
	if m := b.count(t, `SELECT count(*) FROM reconciliation_runs`); m != n+1 {
		t.Errorf("runs %d after Stop and one TryRun, want %d", m, n+1)
	}
}

func TestScheduleEveryZeroIsOff(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	rec := b.reconciler(t)
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Stop()
	if n := b.count(t, `SELECT count(*) FROM reconciliation_runs`); n != 0 {
		t.Fatalf("runs %d with Every 0", n)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  reconciliation.Config
	}{
		{"NoPool", reconciliation.Config{}},
		{"NegativeEvery", reconciliation.Config{DB: store.Wrap(new(pgxpool.Pool), nil), Every: -time.Second}},
		{"NegativeHoldMaxAge", reconciliation.Config{DB: store.Wrap(new(pgxpool.Pool), nil), HoldMaxAge: -time.Second}},
		{"NegativeProviderConcurrency", reconciliation.Config{DB: store.Wrap(new(pgxpool.Pool), nil), ProviderConcurrency: -1}},
	} {
		if _, err := reconciliation.New(c.cfg); err == nil {
			t.Errorf("%s: New accepted %+v", c.name, c.cfg)
		}
	}
	if _, err := reconciliation.New(reconciliation.Config{DB: store.Wrap(new(pgxpool.Pool), nil)}); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(reconciliation.Report{})
	if err != nil || !strings.Contains(string(raw), `"findings":[]`) {
		t.Fatalf("zero report JSON %s %v", raw, err)
	}
	for _, c := range []struct {
		findings []ledger.Finding
		want     string
	}{
		{nil, "clean"},
		{[]ledger.Finding{{Kind: "missed_release", Severity: "warning", Fixed: true}}, "clean"},
		{[]ledger.Finding{{Kind: "stale_hold", Severity: "warning"}}, "warning"},
		{[]ledger.Finding{{Kind: "stale_hold", Severity: "warning"}, {Kind: "balance_drift", Severity: "critical"}}, "critical"},
		{[]ledger.Finding{{Kind: "stale_hold", Severity: "warning"}, {Kind: "balance_drift", Severity: "critical", Acknowledged: true}}, "warning"},
		{[]ledger.Finding{{Kind: "balance_drift", Severity: "critical", Acknowledged: true}}, "clean"},
	} {
		if got := reconciliation.StatusOf(c.findings); got != c.want {
			t.Errorf("StatusOf(%+v) = %s, want %s", c.findings, got, c.want)
		}
	}
	for kind, want := range map[string]string{
		"balance_drift": "critical", "held_drift": "critical", "negative_available": "critical",
		"unbalanced_transaction": "critical", "hold_journal_mismatch": "critical", "duplicate_effect": "critical",
		"duplicate_credit": "critical", "currency_imbalance": "critical", "capture_release_conflict": "critical",
		"orphan_capture": "critical", "capture_cancel_conflict": "critical", "missing_credit": "critical",
		"stale_hold": "warning", "orphan_release": "warning",
		"duplicate_credit_attempt": "warning", "missed_release": "warning", "missed_capture": "critical",
		"provider_unreachable": "warning", "a_kind_added_later": "critical",
	} {
		if got := reconciliation.SeverityOf(kind); got != want {
			t.Errorf("SeverityOf(%s) = %s, want %s", kind, got, want)
		}
	}
}

// TestLostCredits: a request for payment the service completed for this
// ledger's customer, and which the ledger never credited, is a critical
// missing_credit; credited, or not completed, it is nothing.
func TestLostCredits(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	r := b.sender(t, "req-", "1.00")
	dst := storetest.Unique("dst-")
	if _, _, err := b.db.AddInstrument(context.Background(), ledger.Instrument{Token: dst, Kind: ledger.InstrumentDestination, AccountID: r.account.AccountID}); err != nil {
		t.Fatal(err)
	}
	now := b.clock()
	seed := func(id, status string, created time.Time) {
		t.Helper()
		if err := b.fake.SeedPayment(b.fake.ProviderID(), r.account.OwnerExternalID, providertest.Payment{ID: id, Type: "request",
			Direction: "received", Status: status, Amount: providertest.USD("7.00"), CreatedOn: created}); err != nil {
			t.Fatal(err)
		}
	}
	seed("req-lost", "completed", now.Add(-time.Hour))
	seed("req-credited", "completed", now.Add(-time.Hour))
	seed("req-pending", "pending", now.Add(-time.Hour))
	seed("req-ancient", "completed", now.Add(-60*24*time.Hour)) // before the lookback
	if a, err := b.db.Credit(context.Background(), ledger.CreditParams{Key: "k-cr", Fingerprint: make([]byte, 32), KeyFingerprint: "kf",
		Now: now, RequestID: "req-credited", Destination: dst, Requester: r.account.OwnerExternalID, Currency: "USD",
		Amount: decimal.RequireFromString("7.00"), CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()}); err != nil || !a.Approved() {
		t.Fatalf("credit: %+v %v", a, err)
	}
	rep := b.run(t, false)
	wantMap(t, kinds(rep), map[string]string{"req-lost": "missing_credit critical false"})
	if rep.Status != reconciliation.StatusCritical {
		t.Errorf("status %s, want critical", rep.Status)
	}
	b.assertStored(t, rep, false)
}

// TestFindingLifecycle: a finding keeps its ID from run to run; new only
// the first time; acknowledged, it no longer counts towards the status;
// resolved and seen again, it is new and unacknowledged again.
func TestFindingLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, setupOpts{noProvider: true})
	s := b.sender(t, "life-", "100.00")
	drift := func(d string) {
		t.Helper()
		b.exec(t, `UPDATE accounts SET held = held + $2::numeric WHERE account_id = $1`, s.account.AccountID, d)
	}
	drift("1")
	first := b.run(t, false)
	if len(first.Findings) != 1 || !first.Findings[0].New || first.Findings[0].Acknowledged || first.Status != reconciliation.StatusCritical {
		t.Fatalf("first run %+v", first)
	}
	id := first.Findings[0].FindingID
	second := b.run(t, false)
	if len(second.Findings) != 1 || second.Findings[0].FindingID != id || second.Findings[0].New {
		t.Fatalf("second run %+v, want the same finding %s, not new", second.Findings, id)
	}
	rec := b.reconciler(t)
	is, err := rec.Acknowledge(ctx, id, "known: a test corruption")
	if err != nil || is.AcknowledgedOn == nil || is.AckNote != "known: a test corruption" || is.FirstRunID != first.RunID {
		t.Fatalf("acknowledge: %+v %v", is, err)
	}
	third := b.run(t, false)
	if len(third.Findings) != 1 || !third.Findings[0].Acknowledged || third.Status != reconciliation.StatusClean {
		t.Fatalf("third run %+v: want the finding acknowledged and the run clean", third)
	}
	b.assertStored(t, third, false)
	// Resolved: the drift is undone; then it comes back: new again.
	drift("-1")
	if rep := b.run(t, false); len(rep.Findings) != 0 {
		t.Fatalf("after the fix: %+v", rep.Findings)
	}
	drift("1")
	again := b.run(t, false)
	if len(again.Findings) != 1 || again.Findings[0].FindingID != id || !again.Findings[0].New || again.Findings[0].Acknowledged ||
		again.Status != reconciliation.StatusCritical {
		t.Fatalf("seen again after resolution: %+v", again)
	}
	if _, err := rec.Acknowledge(ctx, "fnd_nosuchfindingxxxxxxxxxxxxx", "x"); !errors.Is(err, ledger.ErrFindingNotFound) {
		t.Fatalf("acknowledging an unknown finding: %v", err)
	}
}

// TestSnapshotIsBoundedInTime: a snapshot statement that outlasts the
// bound fails the run (nothing stored as finished), and frees the lease.
func TestSnapshotIsBoundedInTime(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{noProvider: true})
	b.sender(t, "slow-", "1.00")
	// Lock the accounts so the invariant check waits behind the lock,
	// longer than the bound.
	tx, err := b.pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(context.Background(), `LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	rec := b.reconciler(t, func(c *reconciliation.Config) { c.SnapshotTimeout = 200 * time.Millisecond })
	if _, err := rec.Run(context.Background(), false); ledger.CodeOf(err) != ledger.CodeTimeout {
		t.Fatalf("a snapshot past its bound: %v, want a timeout", err)
	}
	_ = tx.Rollback(context.Background())
	if _, err := rec.Run(context.Background(), false); err != nil {
		t.Fatalf("the next run (the lease must be free): %v", err)
	}
}
