package envelope

// ErrWeakSecret: a key that is evidently not random; errors.Is matches
// every *WeakSecretError.
var ErrWeakSecret = &WeakSecretError{}

// WeakSecretError says why CheckStrength refused a key. Reason is safe to
// show and log: it never holds key material.
type WeakSecretError struct {
	Reason string
}

// Error implements error: the message of a WeakSecretError.
func (e *WeakSecretError) Error() string {
	if e.Reason == "" {
		return "envelope: weak key"
	}
	return "envelope: weak key: " + e.Reason
}

// Is makes errors.Is(err, ErrWeakSecret) true for every *WeakSecretError.
func (e *WeakSecretError) Is(target error) bool {
	_, ok := target.(*WeakSecretError)
	return ok
}

// minDistinctBytes is the fewest distinct byte values CheckStrength takes in
// a 32-byte key. 32 random bytes have fewer than 16 distinct values with
// probability below 2^-54; a key typed or derived from a short pattern
// almost always has fewer.
const minDistinctBytes = 16

// maxPatternPeriod is the longest pattern whose repetition CheckStrength
// refuses: a key whose second half repeats its first has at most 128 bits.
const maxPatternPeriod = 16

// CheckStrength refuses a key (a signing secret or the KEK) that is
// evidently not random: every byte equal (all zero, all 0xff), a repetition
// of a pattern of up to 16 bytes ("abcdabcd…"), an arithmetic progression
// (00 01 02 … or ff fe fd …), or fewer than 16 distinct byte values. Each
// is a key that someone typed or built rather than drew from a random
// source, and a random 32-byte key is refused with probability below 2^-54.
// The error is a *WeakSecretError; it never holds the key.
//
// It is the one strength check of the adapter: ledgerd's configuration
// (LEDGER_SIGNING_SECRETS, LEDGER_KEK), the admin API, keyring.Vault and
// keyring.NewVault all call it.
func CheckStrength(key []byte) error {
	n := len(key)
	if n == 0 {
		return &WeakSecretError{Reason: "the key is empty"}
	}
	step, progression := key[1%n]-key[0], true
	for i := 2; i < n && progression; i++ {
		progression = key[i]-key[i-1] == step
	}
	switch {
	case progression && step == 0:
		return &WeakSecretError{Reason: "every byte is the same"}
	case progression:
		return &WeakSecretError{Reason: "the bytes count up or down by a constant step"}
	}
	for p := 2; p <= maxPatternPeriod && p < n; p++ {
		repeats := true
		for i := p; i < n && repeats; i++ {
			repeats = key[i] == key[i-p]
		}
		if repeats {
			return &WeakSecretError{Reason: "the key repeats a short pattern"}
		}
	}
	var seen [256]bool
	distinct := 0
	for _, b := range key {
		if !seen[b] {
			seen[b] = true
			distinct++
		}
	}
	if distinct < min(minDistinctBytes, n/2) {
		return &WeakSecretError{Reason: "the key has too few distinct byte values"}
	}
	return nil
}
