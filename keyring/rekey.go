package keyring

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"regexp"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

// ErrKEKMismatch: Rekey was asked to rotate to a KEK that is not this
// Vault's current KEK; nothing was changed.
var ErrKEKMismatch = &ledger.Error{Code: ledger.CodeConflict, Slug: "kek-mismatch",
	Message: "this replica's current KEK is not the one asked for: it was given the KEKs the wrong way round, or not the new KEK yet; nothing was changed"}

var kekFingerprintRE = regexp.MustCompile(`^[0-9a-f]{16}$`)

// RekeyResult is what Rekey did and what is left.
type RekeyResult struct {
	// KEKFingerprint is the current KEK of the Vault that ran it: the one
	// the secrets are now encrypted under.
	KEKFingerprint string
	// PreviousKEKFingerprint is its previous KEK ("" when it has none).
	PreviousKEKFingerprint string
	// Rekeyed is the number of secrets this call re-encrypted.
	Rekeyed int
	// Current is the number of active secrets under the current KEK once
	// the call was done (Rekeyed included).
	Current int
	// Remaining lists the active secrets still under another KEK once the
	// call was done. Empty: nothing needs the previous KEK any more.
	Remaining []RemainingSecret
}

// RemainingSecret is an active secret that Rekey left under another KEK.
type RemainingSecret struct {
	SecretID       string
	Fingerprint    string
	KEKFingerprint string
	// Reason is SkipOtherKEK (this replica has not that KEK), SkipDamaged
	// (it has, and the row does not decrypt), or RemainingPending (the row
	// decrypts here but changed during the call: run Rekey again).
	Reason SkipReason
}

// RemainingPending: a remaining secret this Vault can read, re-encrypted,
// added or changed by someone else while Rekey ran; running it again moves
// it.
const RemainingPending SkipReason = "pending"

// Rekey re-encrypts under the current KEK every active secret encrypted
// under another KEK that this Vault can decrypt (the previous KEK, during
// a rotation), and reports what is left. Each secret is its own
// transaction, a compare-and-swap on the material it decrypted: a secret
// retired or re-encrypted meanwhile is left as it is. So Rekey is
// idempotent, may run on several replicas at once, and never leaves a
// secret unreadable: a row is replaced only by a ciphertext that was
// checked to decrypt to the same secret under the current KEK, and a row
// it cannot decrypt is left untouched. Retired rows hold no secret and are
// not touched.
//
// kekFingerprint, when not "", is the KEK the caller means to rotate to
// (KEKFingerprint of it): when the current KEK is another, Rekey changes
// nothing and returns ErrKEKMismatch, so that a replica given the KEKs the
// wrong way round does not move every secret back under the old KEK. A
// kekFingerprint that is not 16 lowercase hex digits is an invalid-request
// error at /kekFingerprint.
//
// Rekey fails only when the database does (what it re-encrypted until then
// stays done).
func (v *Vault) Rekey(ctx context.Context, kekFingerprint string) (RekeyResult, error) {
	res := RekeyResult{KEKFingerprint: v.keks.current, PreviousKEKFingerprint: v.keks.previous, Remaining: []RemainingSecret{}}
	switch {
	case kekFingerprint == "":
	case !kekFingerprintRE.MatchString(kekFingerprint):
		return res, ledger.Invalid("/kekFingerprint", "kekFingerprint must be 16 lowercase hex digits, as ledgerctl secrets kek-fingerprint prints")
	case kekFingerprint != v.keks.current:
		v.log.Warn("keyring rekey refused: the current KEK is not the one asked for", "kek", v.keks.current, "asked", kekFingerprint)
		e := *ErrKEKMismatch
		e.Message = fmt.Sprintf("this replica's current KEK has fingerprint %s, not %s: it was given the KEKs the wrong way round, "+
			"or not the new KEK yet; nothing was changed", v.keks.current, kekFingerprint)
		return res, &e
	}
	rows, err := v.db.ActiveSecrets(ctx)
	if err != nil {
		return res, fmt.Errorf("keyring: rekey: %w", err)
	}
	for _, r := range rows {
		if r.KEKFingerprint == v.keks.current {
			continue
		}
		done, err := v.rekeyRow(ctx, r)
		if err != nil {
			return res, fmt.Errorf("keyring: rekey secret %s (fingerprint %s): %w", r.SecretID, r.Fingerprint, err)
		}
		if done {
			res.Rekeyed++
			v.log.Info("signing secret re-encrypted under the current KEK", "secretID", r.SecretID,
				"fingerprint", r.Fingerprint, "fromKEK", r.KEKFingerprint, "kek", v.keks.current)
		}
	}
	// What is left is read again: another replica may have added or
	// re-encrypted secrets meanwhile.
	if rows, err = v.db.ActiveSecrets(ctx); err != nil {
		return res, fmt.Errorf("keyring: rekey: %w", err)
	}
	for _, r := range rows {
		if r.KEKFingerprint == v.keks.current {
			res.Current++
			continue
		}
		reason := RemainingPending
		if secret, why, _ := v.open(r); secret == nil {
			reason = why
		} else {
			clear(secret)
		}
		res.Remaining = append(res.Remaining, RemainingSecret{SecretID: r.SecretID, Fingerprint: r.Fingerprint,
			KEKFingerprint: r.KEKFingerprint, Reason: reason})
	}
	v.log.Info("keyring rekey done", "kek", v.keks.current, "rekeyed", res.Rekeyed, "current", res.Current, "remaining", len(res.Remaining))
	return res, nil
}

// rekeyRow re-encrypts one row under the current KEK when this Vault can
// decrypt it. It reports whether the row was replaced.
func (v *Vault) rekeyRow(ctx context.Context, r envelope.StoredSecret) (bool, error) {
	secret, _, _ := v.open(r)
	if secret == nil {
		return false, nil // left as it is; reported as remaining
	}
	defer clear(secret)
	nonce, ct, err := v.keks.seal(r.SecretID, secret)
	if err != nil {
		return false, err
	}
	// The row is replaced only by material checked to open to the same
	// secret under the current KEK, with the row's own fingerprint.
	check, _, _ := v.keks.open(r.SecretID, r.Fingerprint, v.keks.current, nonce, ct)
	if check == nil || subtle.ConstantTimeCompare(check, secret) != 1 {
		clear(check)
		return false, errors.New("the re-encrypted secret does not decrypt to itself")
	}
	clear(check)
	return v.db.RekeySecret(ctx, envelope.SecretRekey{SecretID: r.SecretID, FromKEKFingerprint: r.KEKFingerprint,
		FromNonce: r.Nonce, KEKFingerprint: v.keks.current, Nonce: nonce, Ciphertext: ct})
}
