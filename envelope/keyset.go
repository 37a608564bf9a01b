package envelope

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// KeySet is the set of active keys, safe for concurrent use, that opens
// envelopes trying the most recently successful key first. The zero value is
// an empty keyring.
//
// The order is an immutable slice published through an atomic pointer: Open
// reads it without locking. A success with a key that is not first publishes
// a copy with that key moved to the front; the copy is made under a TryLock
// so concurrent Opens never wait for each other, and a promotion skipped
// because another writer holds the lock is simply retried by a later success.
type KeySet struct {
	mu   sync.Mutex            // serialises writers of keys
	keys atomic.Pointer[[]Key] // immutable once stored
}

// NewKeySet returns an empty key set.
func NewKeySet() *KeySet { return &KeySet{} }

func (r *KeySet) load() []Key {
	if p := r.keys.Load(); p != nil {
		return *p
	}
	return nil
}

// Set replaces the active keys. Keys already present (same secret) keep the
// order learned so far and take the ID given here; new keys follow in the
// given order. A secret given twice is kept once. Set copies the secrets, and
// refuses the whole set (changing nothing) if any secret is not 32 bytes.
func (r *KeySet) Set(keys []Key) error {
	for i, k := range keys {
		if !k.valid() {
			return fmt.Errorf("%w: key %d is not 32 bytes", ErrInvalidSecret, i)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.load()
	next := make([]Key, 0, len(keys))
	indexOf := func(s []Key, k Key) int {
		for i := range s {
			if s[i].same(k) {
				return i
			}
		}
		return -1
	}
	for _, old := range cur {
		if i := indexOf(keys, old); i >= 0 {
			// Reuse the stored secret copy; take the new ID.
			next = append(next, Key{ID: keys[i].ID, Secret: old.Secret, prepared: old.prepared})
		}
	}
	for _, k := range keys {
		if indexOf(next, k) < 0 {
			next = append(next, Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)}.prepare())
		}
	}
	r.keys.Store(&next)
	return nil
}

// Keys returns the active keys in the current trial order, as copies.
func (r *KeySet) Keys() []Key {
	cur := r.load()
	out := make([]Key, len(cur))
	for i, k := range cur {
		out[i] = Key{ID: k.ID, Secret: append([]byte(nil), k.Secret...)}
	}
	return out
}

// Len returns the number of active keys.
func (r *KeySet) Len() int { return len(r.load()) }

// Open opens compact with the active keys, most recently successful first,
// with the checks and errors of the package function Open.
func (r *KeySet) Open(compact string) (Opened, error) {
	o, i, err := open(compact, r.load())
	if err == nil && i > 0 {
		r.promote(o.Key)
	}
	return o, err
}

// promote moves k to the front of the order, unless another writer holds the
// lock or k has meanwhile reached the front or left the set.
func (r *KeySet) promote(k Key) {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	cur := r.load()
	j := -1
	for i := range cur {
		if cur[i].same(k) {
			j = i
			break
		}
	}
	if j <= 0 {
		return
	}
	next := make([]Key, len(cur))
	next[0] = cur[j]
	copy(next[1:], cur[:j])
	copy(next[j+1:], cur[j+1:])
	r.keys.Store(&next)
}
