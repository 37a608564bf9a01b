package envelope_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
)

// keyIDs is the key set's key IDs in the order Open tries them.
func keyIDs(r *envelope.KeySet) string {
	var s []string
	for _, k := range r.Keys() {
		s = append(s, k.ID)
	}
	return strings.Join(s, ",")
}

// newKeySet is a key set of testKeys(n), in that order.
func newKeySet(t *testing.T, n int) (*envelope.KeySet, []envelope.Key) {
	t.Helper()
	r := envelope.NewKeySet()
	keys := testKeys(n)
	if err := r.Set(keys); err != nil {
		t.Fatal(err)
	}
	return r, keys
}

// TestKeyring: a key set opens with the key that opened last first, keeps
// that learned order across a Set, and forgets revoked keys.
func TestKeyring(t *testing.T) {
	t.Parallel()
	t.Run("EmptyUndecryptable", func(t *testing.T) {
		t.Parallel()
		var r envelope.KeySet // zero value is usable
		token := seal(t, testKey(0), envelope.FormClaims, requestClaims(t, "e"))
		if _, err := r.Open(token); !errors.Is(err, envelope.ErrUndecryptable) {
			t.Fatalf("Open = %v", err)
		}
		if r.Len() != 0 || len(r.Keys()) != 0 {
			t.Fatal("zero keyring not empty")
		}
	})

	t.Run("MovesSuccessfulKeyToFront", func(t *testing.T) {
		t.Parallel()
		r, keys := newKeySet(t, 3)
		if got := keyIDs(r); got != "k0,k1,k2" {
			t.Fatalf("initial order %s", got)
		}
		steps := []struct {
			key  int
			want string
		}{{2, "k2,k0,k1"}, {2, "k2,k0,k1"}, {1, "k1,k2,k0"}, {0, "k0,k1,k2"}, {0, "k0,k1,k2"}}
		for _, s := range steps {
			claims := requestClaims(t, fmt.Sprint("front", s.key))
			o, err := r.Open(seal(t, keys[s.key], envelope.FormJWS, claims))
			if err != nil || o.Key.ID != keys[s.key].ID || !bytes.Equal(o.Claims, claims) {
				t.Fatalf("Open with k%d = %v, %v", s.key, o.Key, err)
			}
			if got := keyIDs(r); got != s.want {
				t.Fatalf("after k%d: order %s, want %s", s.key, got, s.want)
			}
		}
		// A failure moves nothing.
		if _, err := r.Open(seal(t, testKey(5), envelope.FormClaims, requestClaims(t, "x"))); !errors.Is(err, envelope.ErrUndecryptable) {
			t.Fatal(err)
		}
		if got := keyIDs(r); got != "k0,k1,k2" {
			t.Fatalf("order after failure %s", got)
		}
	})

	t.Run("SetKeepsLearnedOrder", func(t *testing.T) {
		t.Parallel()
		r, keys := newKeySet(t, 3)
		if _, err := r.Open(seal(t, keys[2], envelope.FormClaims, requestClaims(t, "s"))); err != nil {
			t.Fatal(err)
		}
		// k2 learned first; k0 revoked; k3 new; k1 renamed; duplicate k3.
		k1 := keys[1]
		k1.ID = "k1-renamed"
		if err := r.Set([]envelope.Key{testKey(3), k1, keys[2], testKey(3)}); err != nil {
			t.Fatal(err)
		}
		if got := keyIDs(r); got != "k2,k1-renamed,k3" || r.Len() != 3 {
			t.Fatalf("order %s (len %d), want k2,k1-renamed,k3", got, r.Len())
		}
		if _, err := r.Open(seal(t, keys[0], envelope.FormClaims, requestClaims(t, "s"))); !errors.Is(err, envelope.ErrUndecryptable) {
			t.Fatalf("revoked key still opens: %v", err)
		}
	})
}

// TestKeyringSet: Set refuses a list with an invalid key and keeps the
// keys it had; the set keeps copies of the secrets, not the caller's.
func TestKeyringSet(t *testing.T) {
	t.Parallel()
	t.Run("SetRefusesInvalidKeysAtomically", func(t *testing.T) {
		t.Parallel()
		r, _ := newKeySet(t, 2)
		err := r.Set([]envelope.Key{testKey(5), {ID: "short", Secret: make([]byte, 16)}})
		if !errors.Is(err, envelope.ErrInvalidSecret) {
			t.Fatalf("Set = %v", err)
		}
		if got := keyIDs(r); got != "k0,k1" {
			t.Fatalf("order after refused Set %s", got)
		}
	})

	t.Run("CopiesSecrets", func(t *testing.T) {
		t.Parallel()
		r := envelope.NewKeySet()
		k := testKey(0)
		mine := envelope.Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)}
		if err := r.Set([]envelope.Key{mine}); err != nil {
			t.Fatal(err)
		}
		clear(mine.Secret)
		got := r.Keys()
		clear(got[0].Secret)
		if _, err := r.Open(seal(t, k, envelope.FormClaims, requestClaims(t, "c"))); err != nil {
			t.Fatalf("keyring shares the caller's secret: %v", err)
		}
	})
}

// TestKeyringConcurrentOpen: concurrent Opens and replies, while a writer
// re-sets the keys in other orders, each open with the right key and form.
func TestKeyringConcurrentOpen(t *testing.T) {
	t.Parallel()
	r, keys := newKeySet(t, 3)
	type sealed struct {
		token, key string
		claims     []byte
		form       envelope.Form
	}
	var tokens []sealed
	for i := range 12 {
		k, f := keys[i%3], forms[i%len(forms)]
		c := requestClaims(t, fmt.Sprint("conc", i))
		tokens = append(tokens, sealed{seal(t, k, f, c), k.ID, c, f})
	}
	const workers, iters = 16, 60
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range iters {
				s := tokens[(w*7+i)%len(tokens)]
				o, err := r.Open(s.token)
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				if o.Key.ID != s.key || o.Form != s.form || !bytes.Equal(o.Claims, s.claims) {
					errs <- fmt.Errorf("worker %d: opened %v %v, want %s %v", w, o.Key, o.Form, s.key, s.form)
					return
				}
				// The reply must open on the service side with the
				// key the request was sealed with.
				reply, err := o.Reply(s.claims)
				if err != nil {
					errs <- err
					return
				}
				if _, err := envelope.Open(reply, []envelope.Key{keys[int(s.key[1]-'0')]}); err != nil {
					errs <- fmt.Errorf("worker %d: reply: %w", w, err)
					return
				}
			}
		})
	}
	// A writer re-setting the same keys (in another order) meanwhile.
	wg.Go(func() {
		for i := range 50 {
			ks := []envelope.Key{keys[i%3], keys[(i+1)%3], keys[(i+2)%3]}
			if err := r.Set(ks); err != nil {
				errs <- err
				return
			}
			_ = r.Keys()
			_ = r.Len()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if r.Len() != 3 {
		t.Fatalf("Len = %d", r.Len())
	}
}

// TestKeySetDerivedState: what a key set derives from a secret once (its
// fingerprint, its key-wrapping schedule) is the secret's: an opened key
// reports and seals as its secret does, and a copy given another secret
// uses that one, never the state of the first.
func TestKeySetDerivedState(t *testing.T) {
	t.Parallel()
	r, keys := newKeySet(t, 2)
	opened, err := r.Open(seal(t, keys[1], envelope.FormClaims, requestClaims(t, "d")))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := opened.Key.Fingerprint(), (envelope.Key{Secret: keys[1].Secret}).Fingerprint(); got != want {
		t.Fatalf("opened key's fingerprint %s, its secret's %s", got, want)
	}
	reply, err := opened.Reply(requestClaims(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envelope.Open(reply, []envelope.Key{{Secret: keys[1].Secret}}); err != nil {
		t.Fatalf("the reply does not open with the request's secret: %v", err)
	}
	moved := opened.Key
	moved.Secret = keys[0].Secret
	if got, want := moved.Fingerprint(), (envelope.Key{Secret: keys[0].Secret}).Fingerprint(); got != want {
		t.Fatalf("a key given another secret reports fingerprint %s, want %s", got, want)
	}
	token, err := envelope.Seal(moved, envelope.FormClaims, requestClaims(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envelope.Open(token, []envelope.Key{keys[1]}); !errors.Is(err, envelope.ErrUndecryptable) {
		t.Fatalf("sealed with the old secret's key schedule: Open = %v", err)
	}
	if _, err := envelope.Open(token, []envelope.Key{keys[0]}); err != nil {
		t.Fatalf("does not open with the new secret: %v", err)
	}
}
