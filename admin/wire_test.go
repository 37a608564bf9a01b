package admin_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/admin"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/reconciliation"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// fixedReconciler answers one report with fixed times and findings.
type fixedReconciler struct{ rep reconciliation.Report }

func (f fixedReconciler) RunWith(context.Context, reconciliation.RunOptions) (reconciliation.Report, error) {
	return f.rep, nil
}

func (f fixedReconciler) Acknowledge(context.Context, string, string) (ledger.Issue, error) {
	return ledger.Issue{}, ledger.ErrFindingNotFound
}

// wireBundle is an admin API on a database of its own.
type wireBundle struct {
	api *admin.Handler
	db  *store.DB
}

// wireSetup returns an admin API with a vault of secrets and rec.
func wireSetup(t *testing.T, rec admin.Reconciler) wireBundle {
	t.Helper()
	db, _ := storetest.DB(t)
	kek := make([]byte, keyring.KEKSize)
	if _, err := rand.Read(kek); err != nil {
		t.Fatal(err)
	}
	secrets, err := keyring.NewVault(db, kek, keyring.VaultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := wireBundle{db: db}
	b.api = admin.New(admin.Config{DB: db, Secrets: secrets, Reconciler: rec})
	return b
}

// wireMatch asserts the raw answer matches the pattern (anchored; the
// encoder's trailing newline included).
func wireMatch(t *testing.T, a answer, status int, pattern string) {
	t.Helper()
	if a.status != status || !regexp.MustCompile(`^`+pattern+`\n$`).MatchString(a.raw) {
		t.Fatalf("answer %d %s\nwant    %d %s", a.status, a.raw, status, pattern)
	}
}

// Patterns of a UUID and of a timestamp on the wire.
const (
	wireUUID = `[0-9a-f-]{36}`
	wireTS   = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z`
)

// TestWireBytes pins the exact bytes of every JSON answer of the admin API:
// member names, their order, which members are left out when empty, and
// how amounts and times are written. Clients (and scripts that grep the
// output of curl) depend on them; a change here is a change of the API.
func TestWireBytes(t *testing.T) {
	t.Parallel()

	t.Run("AccountAdjustmentInstrument", func(t *testing.T) {
		t.Parallel()
		b := wireSetup(t, nil)
		wireMatch(t, call(t, b.api, "POST", "/v1/accounts", `{"accountID":"w-1","ownerExternalID":"wendy","currency":"USD"}`), 201,
			`\{"accountID":"w-1","ownerExternalID":"wendy","currency":"USD","balance":"0\.00","held":"0\.00","available":"0\.00","status":"open"\}`)
		wireMatch(t, call(t, b.api, "POST", "/v1/accounts/w-1/adjustments", `{"amount":"12.5","idempotencyKey":"k1"}`), 201,
			`\{"available":"12\.50","balance":"12\.50","held":"0\.00","transactionID":"`+wireUUID+`"\}`)
		wireMatch(t, call(t, b.api, "PATCH", "/v1/accounts/w-1", `{"status":"frozen"}`), 200,
			`\{"accountID":"w-1","ownerExternalID":"wendy","currency":"USD","balance":"12\.50","held":"0\.00","available":"12\.50","status":"frozen"\}`)
		wireMatch(t, call(t, b.api, "POST", "/v1/instruments", `{"token":"card-w","kind":"source","accountID":"w-1"}`), 201,
			`\{"accountID":"w-1","kind":"source","token":"card-w"\}`)
		wireMatch(t, call(t, b.api, "POST", "/v1/accounts", `{"accountID":"w-2","ownerExternalID":"yen","currency":"JPY"}`), 201,
			`\{"accountID":"w-2","ownerExternalID":"yen","currency":"JPY","balance":"0","held":"0","available":"0","status":"open"\}`)
	})

	t.Run("Holds", func(t *testing.T) { wireHolds(t) })

	t.Run("SigningSecrets", func(t *testing.T) { wireSigningSecrets(t) })

	t.Run("ReconciliationRun", func(t *testing.T) {
		t.Parallel()
		at := time.Date(2026, 3, 1, 12, 0, 0, 500, time.UTC)
		b := wireSetup(t, fixedReconciler{reconciliation.Report{RunID: "rec_1", StartedOn: at, FinishedOn: at.Add(time.Second), Status: "warning",
			Findings: []ledger.Finding{{Kind: "stale_hold", Severity: "warning", Subject: "hold_1", Detail: "held 12 days",
				FindingID: "fnd_aaaaaaaaaaaaaaaaaaaaaaaaaa", New: true}}, Mode: "incremental",
			FromCheckpoint: "chk_aaaaaaaaaaaaaaaaaaaaaaaaaa", Checkpoint: "chk_bbbbbbbbbbbbbbbbbbbbbbbbbb"}})
		wireMatch(t, call(t, b.api, "POST", "/v1/reconciliation/runs", `{}`), 201,
			`\{"runID":"rec_1","startedOn":"2026-03-01T12:00:00\.0000005Z","finishedOn":"2026-03-01T12:00:01\.0000005Z","status":"warning",`+
				`"findings":\[\{"kind":"stale_hold","severity":"warning","subject":"hold_1","detail":"held 12 days","fixed":false,`+
				`"findingID":"fnd_aaaaaaaaaaaaaaaaaaaaaaaaaa","new":true,"acknowledged":false\}\],"mode":"incremental",`+
				`"fromCheckpoint":"chk_aaaaaaaaaaaaaaaaaaaaaaaaaa","checkpoint":"chk_bbbbbbbbbbbbbbbbbbbbbbbbbb"\}`)
		empty := wireSetup(t, fixedReconciler{reconciliation.Report{RunID: "rec_2", StartedOn: at, FinishedOn: at, Status: "clean", Mode: "full"}})
		wireMatch(t, call(t, empty.api, "POST", "/v1/reconciliation/runs", `{"fix":true}`), 201,
			`\{"runID":"rec_2","startedOn":"2026-03-01T12:00:00\.0000005Z","finishedOn":"2026-03-01T12:00:00\.0000005Z","status":"clean","findings":\[\],"mode":"full"\}`)
	})

	t.Run("Problem", func(t *testing.T) {
		t.Parallel()
		b := wireSetup(t, nil)
		wireMatch(t, call(t, b.api, "GET", "/v1/accounts/nope", ""), 404,
			`\{"type":"urn:provider-ledger:problem:account-not-found","title":"Not Found","status":404,"detail":"[^"]+"\}`)
		wireMatch(t, call(t, b.api, "POST", "/v1/accounts", `{"accountID":"x","ownerExternalID":"o","currency":"usd"}`), 400,
			`\{"type":"urn:provider-ledger:problem:invalid-request","title":"Bad Request","status":400,"detail":"[^"]+","errors":\[\{"pointer":"/currency","detail":"[^"]+"\}\]\}`)
	})
}

// wireSigningSecrets: the signing secrets' list, an added, a generated and
// a retired one.
func wireSigningSecrets(t *testing.T) {
	t.Parallel()
	b := wireSetup(t, nil)
	wireMatch(t, call(t, b.api, "GET", "/v1/signing-secrets", ""), 200, `\{"signingSecrets":\[\]\}`)
	s := make([]byte, 32)
	if _, err := rand.Read(s); err != nil {
		t.Fatal(err)
	}
	added := call(t, b.api, "POST", "/v1/signing-secrets", `{"secret":"`+base64.StdEncoding.EncodeToString(s)+`"}`)
	wireMatch(t, added, 201, `\{"secretID":"[^"]+","fingerprint":"[^"]+"\}`)
	wireMatch(t, call(t, b.api, "POST", "/v1/signing-secrets", `{"generate":true}`), 201, `\{"secretID":"[^"]+","fingerprint":"[^"]+","secret":"[A-Za-z0-9+/=]{44}"\}`)
	id := added.body["secretID"].(string)
	if a := call(t, b.api, "DELETE", "/v1/signing-secrets/"+id, ""); a.status != 204 || a.raw != "" {
		t.Fatalf("retire = %d %q", a.status, a.raw)
	}
	stamp := `"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`
	wireMatch(t, call(t, b.api, "GET", "/v1/signing-secrets", ""), 200,
		`\{"signingSecrets":\[\{"secretID":"[^"]+","fingerprint":"[^"]+","kekFingerprint":"[0-9a-f]{16}","addedOn":`+stamp+`,"retiredOn":null\},`+
			`\{"secretID":"`+id+`","fingerprint":"[^"]+","kekFingerprint":"[0-9a-f]{16}","addedOn":`+stamp+`,"retiredOn":`+stamp+`\}\]\}`)
}

// wireHolds: a hold's answer, alone and in a list, held and released.
func wireHolds(t *testing.T) {
	t.Parallel()
	b := wireSetup(t, nil)
	storetest.Account(t, b.db, storetest.AccountOpts{AccountID: "w-h", Owner: "hal", Funds: "50", Source: "src-w-h"})
	d := storetest.Hold(t, b.db, "po-w", "hal", "src-w-h", "1.5")
	if !d.Approved() {
		t.Fatal(d)
	}
	held := `\{"holdReference":"` + d.Reference + `","payoutID":"po-w","accountID":"w-h","fundingSource":"src-w-h","amount":"1\.50","currency":"USD","status":"held","placedAt":"` + wireTS + `"\}`
	wireMatch(t, call(t, b.api, "GET", "/v1/holds/"+d.Reference, ""), 200, held)
	wireMatch(t, call(t, b.api, "GET", "/v1/holds?payoutID=po-w", ""), 200, `\{"holds":\[`+held+`\],"hasMore":false\}`)
	wireMatch(t, call(t, b.api, "GET", "/v1/holds?payoutID=none", ""), 200, `\{"holds":\[\],"hasMore":false\}`)
	if r := storetest.Settle(t, b.db, "po-w", d.Reference, false); !r.Approved() {
		t.Fatal(r)
	}
	wireMatch(t, call(t, b.api, "GET", "/v1/holds/"+d.Reference, ""), 200,
		`\{"holdReference":"`+d.Reference+`","payoutID":"po-w","accountID":"w-h","fundingSource":"src-w-h","amount":"1\.50","currency":"USD","status":"released",`+
			`"releaseReference":"rel_[0-9a-zA-Z_-]+","releaseReason":"cancelled","placedAt":"`+wireTS+`","releasedAt":"`+wireTS+`"\}`)
}
