package callbacks_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// rotationReplicas are two adapters on pool, each with a keyring vault
// and a loader reloading its keyring from the database every 50 ms (2 s in
// ledgerd), stopped when t ends.
func rotationReplicas(t *testing.T, pool *pgxpool.Pool) ([]*bundle, []*keyring.Vault) {
	t.Helper()
	kek := newKey(t, "kek").Secret
	var replicas []*bundle
	var stores []*keyring.Vault
	for range 2 {
		ks, err := keyring.NewVault(store.Wrap(pool, nil), kek, keyring.VaultOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stores, replicas = append(stores, ks), append(replicas, setup(t, opts{pool: pool, maxInflight: 1000}))
	}
	for i, b := range replicas {
		loader, err := keyring.NewLoader(keyring.Config{Vault: stores[i], Keyring: b.keyring, Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := loader.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(loader.Stop)
	}
	return replicas, stores
}

// waitReplicaKeys waits until every replica's keyring holds exactly the
// secrets with these IDs, within the 5 s the design allows.
func waitReplicaKeys(t *testing.T, replicas []*bundle, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for i, b := range replicas {
		for !sameIDs(b.keyring.Keys(), ids) {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d has keys %v after 5s, want %v", i, b.keyring.Keys(), ids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// sendRetrying sends an authorize as the service does: with the key it
// holds at each attempt, again on 408, 429 and 5xx, up to 20 times.
func sendRetrying(ctx context.Context, baseURL string, key func() *envelope.Key, service any) (*caller.Reply, error) {
	var r *caller.Reply
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		c := &caller.Client{BaseURL: baseURL, Key: *key()}
		if r, err = c.Send(ctx, claims.Authorize, service); err == nil && !r.Retryable() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r, err
}

// oldKeyRetired checks that every replica counted opens by the new key
// (fingerprint newFP) and that the old key opens nothing any more.
func oldKeyRetired(t *testing.T, replicas []*bundle, oldKey envelope.Key, newFP string) {
	t.Helper()
	for i, b := range replicas {
		if testutil.ToFloat64(b.server.Metrics().Opens(newFP)) == 0 {
			t.Errorf("replica %d: no opens counted for the new key", i)
		}
		c := &caller.Client{BaseURL: b.client.BaseURL, Key: oldKey}
		r, err := c.Send(context.Background(), claims.Authorize, authorizeClaims("rot-after", "k", "alice", "src-rot", "0.01", 0))
		if err != nil || r.Status != 400 || problemType(r) != "undecryptable" {
			t.Fatalf("replica %d: old key after retirement: %+v %v", i, r, err)
		}
	}
}

// TestRotationUnderTraffic rotates the signing secret on two replicas that
// share one database, while callbacks flow: add the new secret through one
// replica's admin store, move the sender to it once every replica has it,
// retire the old one. No callback is lost, and after the retirement the old
// secret opens nothing.
func TestRotationUnderTraffic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := storetest.Pool(t)
	replicas, stores := rotationReplicas(t, pool)
	oldInfo, oldSecret, err := stores[0].Generate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitKeys := func(ids ...string) { t.Helper(); waitReplicaKeys(t, replicas, ids...) }
	waitKeys(oldInfo.SecretID)
	replicas[0].account(t, storetest.AccountOpts{AccountID: "rot", Owner: "alice", Funds: "100000", Source: "src-rot"})

	oldKey := envelope.Key{ID: oldInfo.SecretID, Secret: oldSecret}
	var current atomic.Pointer[envelope.Key]
	current.Store(&oldKey)
	stop := make(chan struct{})
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := replicas[(w+i)%2]
				service := authorizeClaims(fmt.Sprintf("rot-%d-%d", w, i), "k", "alice", "src-rot", "0.01", 0)
				// Like the service: the same request again on 408, 429, 5xx;
				// a lost callback is a terminal answer (such as 400
				// undecryptable) or none at all.
				r, err := sendRetrying(ctx, b.client.BaseURL, current.Load, service)
				sent.Add(1)
				if err != nil || r.Status != 200 {
					failed.Add(1)
					t.Errorf("callback lost during rotation: %+v %v", r, err)
				}
			}
		})
	}
	// flows waits until the senders delivered ten more callbacks: traffic
	// ran through the phase just set.
	flows := func() {
		t.Helper()
		from := sent.Load()
		wait.Until(t, "ten more callbacks sent", func() bool { return sent.Load() >= from+10 })
	}
	flows()
	// 1. Add the new secret (through replica 0's store); every replica loads it.
	newInfo, newSecret, err := stores[0].Generate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitKeys(oldInfo.SecretID, newInfo.SecretID)
	// 2. The service moves to the new secret.
	newKey := envelope.Key{ID: newInfo.SecretID, Secret: newSecret}
	current.Store(&newKey)
	flows()
	// 3. Retire the old secret (through replica 1's store).
	if err := stores[1].Retire(ctx, oldInfo.SecretID); err != nil {
		t.Fatal(err)
	}
	waitKeys(newInfo.SecretID)
	flows()
	close(stop)
	wg.Wait()
	if sent.Load() < 20 || failed.Load() != 0 {
		t.Fatalf("sent %d, failed %d", sent.Load(), failed.Load())
	}
	oldFP := oldKey.Fingerprint()
	newFP := newKey.Fingerprint()
	oldKeyRetired(t, replicas, oldKey, newFP)
	t.Logf("%d callbacks across the rotation; opens by old key: %v, %v", sent.Load(),
		testutil.ToFloat64(replicas[0].server.Metrics().Opens(oldFP)), testutil.ToFloat64(replicas[1].server.Metrics().Opens(oldFP)))
	storetest.AssertInvariants(t, store.Wrap(pool, nil))
}

func sameIDs(keys []envelope.Key, ids []string) bool {
	if len(keys) != len(ids) {
		return false
	}
	for _, id := range ids {
		found := false
		for _, k := range keys {
			found = found || k.ID == id
		}
		if !found {
			return false
		}
	}
	return true
}
