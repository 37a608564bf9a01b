package server_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store/storetest"
)

const rotationProvider = "bank-kek"

// kekRotation is two ledgerd replicas on one database behind a test "load
// balancer": slots holds the replicas in service; a replica is taken out
// of its slot (waiting for the callbacks it is serving) before it is
// stopped, and put back once it listens, as an orchestrator's rolling
// restart does.
type kekRotation struct {
	t       *testing.T
	dbURL   string
	token   string
	secret  []byte // the signing secret the service uses, from LEDGER_SIGNING_SECRETS
	mu      sync.RWMutex
	slots   [2]*daemon
	payouts atomic.Int64 // authorize + capture pairs approved
	failMu  sync.Mutex
	failed  []string // the first failures of the stream
}

// fail records a failure of the stream (the first few, never blocking).
func (r *kekRotation) fail(f string) {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	if len(r.failed) < 10 {
		r.failed = append(r.failed, f)
	}
}

// failures returns the failures of the stream so far.
func (r *kekRotation) failures() []string {
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return slices.Clone(r.failed)
}

func (r *kekRotation) start(kek, previous []byte) *daemon {
	r.t.Helper()
	b64 := func(k []byte) string {
		if k == nil {
			return ""
		}
		return base64.StdEncoding.EncodeToString(k)
	}
	return start(r.t, config(r.t, "DATABASE_URL", r.dbURL, "LEDGER_PROVIDER_ID", rotationProvider, "LEDGER_ADMIN_TOKEN", r.token,
		"LEDGER_SIGNING_SECRETS", b64(r.secret), "LEDGER_KEK", b64(kek), "LEDGER_KEK_PREVIOUS", b64(previous)))
}

// roll restarts the replica of slot i with the given KEKs.
func (r *kekRotation) roll(i int, kek, previous []byte) {
	r.t.Helper()
	r.mu.Lock()
	old := r.slots[i]
	r.slots[i] = nil
	r.mu.Unlock()
	if err := old.stop(); err != nil {
		r.t.Fatalf("stopping replica %d: %v", i, err)
	}
	d := r.start(kek, previous)
	r.mu.Lock()
	r.slots[i] = d
	r.mu.Unlock()
}

// stream sends payouts (authorize on one replica in service, capture on
// the other) until stop is closed; every answer must be 200 approved.
func (r *kekRotation) stream(stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
		r.mu.RLock()
		var live []*daemon
		for _, d := range r.slots {
			if d != nil {
				live = append(live, d)
			}
		}
		auth, capt := r.client(live[n%len(live)], r.secret), r.client(live[(n+1)%len(live)], r.secret)
		id := fmt.Sprintf("kr-%d", n)
		ctx := context.Background()
		a, err := auth.Send(ctx, claims.Authorize, map[string]any{"payoutID": id, "providerID": rotationProvider, "externalID": "alice",
			"fundingSource": "src-acc-k", "fraudScore": 0.1, "idempotencyKey": "a-" + id, "amount": usd("1.00")})
		if err == nil && a.Status == 200 && a.Outcome() == "approved" {
			a, err = capt.Send(ctx, claims.Capture, map[string]any{"payoutID": id, "providerID": rotationProvider,
				"holdReference": a.Str("holdReference"), "idempotencyKey": "c-" + id})
		}
		r.mu.RUnlock()
		if err != nil || a.Status != 200 || a.Outcome() != "approved" {
			r.fail(fmt.Sprintf("payout %s: %+v %v", id, a, err))
			continue
		}
		r.payouts.Add(1)
	}
}

func (r *kekRotation) client(d *daemon, secret []byte) *caller.Client {
	return &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
}

// progress waits until the stream has approved n more payouts: it runs
// through the step just taken. A failure of the stream ends the test.
func (r *kekRotation) progress(n int64) {
	r.t.Helper()
	want := r.payouts.Load() + n
	wait.Until(r.t, fmt.Sprintf("%d more payouts", n), func() bool {
		if f := r.failures(); len(f) > 0 {
			r.t.Fatalf("a callback of the stream failed: %s", strings.Join(f, "\n"))
		}
		return r.payouts.Load() >= want
	})
}

// probe sends a harmless callback (a credit to no destination) sealed with
// secret to replica d and returns the answer.
func (r *kekRotation) probe(d *daemon, secret []byte, id string) *caller.Reply {
	r.t.Helper()
	rep, err := r.client(d, secret).Send(context.Background(), claims.CreditAccount, map[string]any{"providerID": rotationProvider,
		"idempotencyKey": id, "requesterExternalID": "alice", "fundingDestination": "none", "requestID": id, "amount": usd("1.00")})
	if err != nil {
		r.t.Fatalf("probe %s: %v", id, err)
	}
	return rep
}

// opens waits until replica d opens requests sealed with secret.
func (r *kekRotation) opens(d *daemon, secret []byte, what string) {
	r.t.Helper()
	n := 0
	wait.Until(r.t, what, func() bool {
		n++
		return r.probe(d, secret, fmt.Sprintf("probe-%s-%d", strings.ReplaceAll(what, " ", "-"), n)).Status == 200
	})
}

func (r *kekRotation) admin(d *daemon) *adminapi.Client {
	r.t.Helper()
	c, err := adminapi.NewClient("http://"+d.admin, adminapi.WithToken(r.token))
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// TestKEKRotationWithTwoReplicas rotates the KEK of two replicas on one
// database by the README's runbook while a steady stream of payouts runs
// through both: (1) roll each replica to LEDGER_KEK=new,
// LEDGER_KEK_PREVIOUS=old, with a secret added on a new replica meanwhile;
// (2) ledgerctl secrets rekey, on both replicas at once; (3) roll each to
// LEDGER_KEK=new alone. Every callback of the stream is answered 200
// approved, none is lost, and at the end the old KEK opens nothing and a
// replica given only the old KEK refuses retryably.
func TestKEKRotationWithTwoReplicas(t *testing.T) {
	t.Parallel()
	oldKEK, newKEK := randomKey(t), randomKey(t)
	r := &kekRotation{t: t, dbURL: storetest.URL(t), token: "tok-kek", secret: randomKey(t)}
	r.slots[0] = r.start(oldKEK, nil)
	r.slots[1] = r.start(oldKEK, nil)
	newBank(t, r.slots[0], rotationProvider, r.secret, r.token).customer("acc-k", "alice", "1000.00")

	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); r.stream(stop) }()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	}()
	r.progress(5)

	// Step 1, first replica; a secret added on it meanwhile.
	r.roll(0, newKEK, oldKEK)
	r.progress(5)
	second := r.addSecretDuringStepOne()
	r.progress(5)
	// Step 1, second replica.
	r.roll(1, newKEK, oldKEK)
	r.opens(r.slots[1], second, "the second new replica to open the added secret")
	if v := metric(t, r.slots[1].admin, `ledgerd_keyring_kek_info{fingerprint="`+keyring.KEKFingerprint(oldKEK)+`",role="previous"}`); v != "1" {
		t.Fatalf("the rolled replica does not report the previous KEK: %q", v)
	}
	r.progress(5)
	// Step 2.
	r.rekeyOnBoth(newKEK)
	r.progress(5)
	// Step 3: the previous KEK is dropped, one replica at a time.
	r.roll(0, newKEK, nil)
	r.progress(5)
	r.roll(1, newKEK, nil)
	r.progress(5)
	close(stop)
	<-done

	r.assertNothingLost()
	r.assertBothOpen(r.secret, second)
	r.assertOldKEKOpensNothing(oldKEK)
	r.assertOldKEKAloneRefusesRetryably(oldKEK)
}

// addSecretDuringStepOne adds a secret on the rolled replica of slot 0:
// encrypted under the new KEK, which the old replica of slot 1 was not
// given. The old replica does not go down: it counts the secret, stays
// ready, and answers a request under it retryably. It returns the secret.
func (r *kekRotation) addSecretDuringStepOne() []byte {
	t := r.t
	t.Helper()
	added, _, err := r.admin(r.slots[0]).SigningSecrets.Create(context.Background(), &adminapi.SigningSecretRequest{Generate: true})
	if err != nil {
		t.Fatal(err)
	}
	second, err := envelope.ParseSecret(added.Secret)
	if err != nil {
		t.Fatal(err)
	}
	r.opens(r.slots[0], second, "the new replica to open the added secret")
	old := r.slots[1]
	wait.Until(t, "the old replica to count the added secret as undecryptable", func() bool {
		return metric(t, old.admin, `ledgerd_keyring_undecryptable_secrets{reason="other_kek"}`) == "1"
	})
	if code := get(t, "http://"+old.admin+"/readyz", nil); code != 200 {
		t.Fatalf("the old replica is not ready (%d) over a secret under another KEK", code)
	}
	if rep := r.probe(old, second, "probe-old-second"); rep.Status != 503 || rep.ProblemType() != "urn:provider-ledger:problem:keyring-incomplete" || rep.RetryAfter == "" {
		t.Fatalf("the old replica answers a request under the added secret %+v; want 503 keyring-incomplete with Retry-After", rep)
	}
	return second
}

// rekeyOnBoth runs step 2 on both replicas at once: the one secret under
// the old KEK is re-encrypted once between them; a third run finds nothing
// to do.
func (r *kekRotation) rekeyOnBoth(newKEK []byte) {
	t := r.t
	t.Helper()
	results := make([]*adminapi.KeyringRekey, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	r.mu.RLock()
	for i, d := range r.slots {
		wg.Go(func() {
			results[i], _, errs[i] = r.admin(d).SigningSecrets.Rekey(context.Background(),
				&adminapi.KeyringRekeyRequest{KEKFingerprint: keyring.KEKFingerprint(newKEK)})
		})
	}
	wg.Wait()
	r.mu.RUnlock()
	if errs[0] != nil || errs[1] != nil || results[0].Rekeyed+results[1].Rekeyed != 1 {
		t.Fatalf("concurrent rekeys: %+v %+v, %v %v; want 1 re-encrypted between them", results[0], results[1], errs[0], errs[1])
	}
	again, _, err := r.admin(r.slots[1]).SigningSecrets.Rekey(context.Background(), nil)
	if err != nil || again.Rekeyed != 0 || again.Remaining != 0 || again.Current != 2 {
		t.Fatalf("rekey again = %+v, %v; want 2 current, none remaining", again, err)
	}
}

// assertNothingLost: no callback of the stream failed, and the account
// moved by exactly the payouts approved.
func (r *kekRotation) assertNothingLost() {
	t := r.t
	t.Helper()
	for _, f := range r.failures() {
		t.Errorf("a callback of the stream failed: %s", f)
	}
	n := r.payouts.Load()
	t.Logf("%d payouts (authorize and capture, on different replicas) ran through the rotation", n)
	acct := newBank(t, r.slots[0], rotationProvider, r.secret, r.token).must(200, "GET", "/v1/accounts/acc-k", nil)
	if want := fmt.Sprintf("%d.00", 1000-n); acct["balance"] != want || acct["held"] != "0.00" {
		t.Fatalf("after %d payouts the account is %v; want balance %s, nothing held: a payout was lost or doubled", n, acct, want)
	}
}

// assertBothOpen: both replicas open requests under each secret and skip
// none.
func (r *kekRotation) assertBothOpen(secrets ...[]byte) {
	t := r.t
	t.Helper()
	for i, d := range r.slots {
		for j, s := range secrets {
			if rep := r.probe(d, s, fmt.Sprintf("probe-final-%d-%d", i, j)); rep.Status != 200 {
				t.Fatalf("after the rotation replica %d answers secret %d with %+v", i, j, rep)
			}
		}
		if v := metric(t, d.admin, `ledgerd_keyring_undecryptable_secrets{reason="other_kek"}`); v != "0" {
			t.Fatalf("after the rotation replica %d skips %s secrets", i, v)
		}
	}
}

// assertOldKEKAloneRefusesRetryably: an operator who gives a replica the
// old KEK alone by mistake gets a replica that is not ready and answers
// retryably, never a terminal 400.
func (r *kekRotation) assertOldKEKAloneRefusesRetryably(oldKEK []byte) {
	t := r.t
	t.Helper()
	wrong := r.start(oldKEK, nil)
	var body map[string]any
	if code := get(t, "http://"+wrong.admin+"/readyz", &body); code != 503 || !strings.Contains(fmt.Sprint(body["detail"]), "skipped") {
		t.Fatalf("a replica given only the old KEK: readyz %d %v; want 503 naming the skipped secrets", code, body)
	}
	if rep := r.probe(wrong, r.secret, "probe-wrong"); rep.Status != 503 || rep.ProblemType() != "urn:provider-ledger:problem:keyring-incomplete" {
		t.Fatalf("a replica given only the old KEK answers %+v; want 503 keyring-incomplete", rep)
	}
}

// assertOldKEKOpensNothing: no stored ciphertext decrypts under kek alone
// (raw AES-256-GCM, whatever the rows' KEK fingerprints say).
func (r *kekRotation) assertOldKEKOpensNothing(kek []byte) {
	r.t.Helper()
	block, _ := aes.NewCipher(kek)
	aead, _ := cipher.NewGCM(block)
	pool := storetest.PoolURL(r.t, r.dbURL)
	rows, err := pool.Query(context.Background(), `SELECT secret_id, nonce, ciphertext FROM signing_secrets WHERE ciphertext IS NOT NULL`)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var nonce, ct []byte
		if err := rows.Scan(&id, &nonce, &ct); err != nil {
			r.t.Fatal(err)
		}
		n++
		if _, err := aead.Open(nil, nonce, ct, []byte(id)); err == nil {
			r.t.Fatalf("the old KEK still opens secret %s", id)
		}
	}
	if n != 2 {
		r.t.Fatalf("%d active secrets stored, want 2", n)
	}
}
