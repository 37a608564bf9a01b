// Package keyring keeps the adapter's callback keyring, the signing secrets
// that open ledger callbacks (contract §2.1 step 3), in the database, encrypted
// at rest, and keeps every replica's in-memory envelope.KeySet in step with
// it.
//
// # Pieces
//
//   - [Vault]: the table signing_secrets (schema/schema.sql). It
//     implements admin.SecretStore (list, add, generate, retire, rekey)
//     and [Vault.Active], the decrypted active secrets.
//   - [Loader]: loads [Vault.Active] into an envelope.KeySet once
//     ([Loader.Reload]) and then every Interval, 2 s by default
//     ([Loader.Start], [Loader.Stop]); after a failed load it retries
//     within a second, and at once on [Loader.Kick] (a new database
//     connection).
//   - [Bootstrap]: at start-up, imports LEDGER_SIGNING_SECRETS and, in
//     embedded mode with an empty keyring, generates a development secret
//     into <LEDGER_DATA_DIR>/signing-secret.
//   - [LoadOrCreateKEK]: the key-encryption key of embedded mode, kept in
//     <LEDGER_DATA_DIR>/kek when LEDGER_KEK is unset.
//
// # Encryption at rest
//
// Each secret is encrypted with AES-256-GCM under the KEK (LEDGER_KEK, 32
// bytes, never stored in the database), with a fresh random 12-byte nonce
// per row and the row's secret_id as additional authenticated data. So:
//
//  1. A copy of the database (a dump, a backup, a read replica, a log of
//     statement parameters) holds no usable secret without the KEK.
//  2. A ciphertext copied or swapped into another row does not decrypt
//     there, and after decryption the secret's fingerprint must equal the
//     row's, so a row's ID, fingerprint and value cannot be recombined.
//  3. Write access to the database without the KEK cannot install a key of
//     the writer's choosing: the adapter only uses rows that authenticate.
//     (It can still retire or delete rows: a denial of service, which the
//     readiness probe and the Undecryptable count make visible.)
//  4. Retiring a secret erases its nonce and ciphertext in the same
//     statement, and a CHECK constraint ties "active" to "has ciphertext",
//     so no UPDATE brings a retired secret back without the KEK, and the
//     unique fingerprint refuses it as a new row (ErrSecretRetired). The
//     erasure is logical: old row versions remain in the table's free space
//     until vacuumed, in WAL and in backups, still encrypted under the KEK;
//     and someone who can write the database and holds a backup from before
//     the retirement can delete the row and restore the old one. Nothing
//     here defends against that rollback: guard database write access and
//     backups as the secrets themselves.
//
// Each row also records the fingerprint of the KEK that encrypted it
// ([KEKFingerprint]; the column kek_fingerprint, never NULL), so a Vault
// knows which of its KEKs opens a row, and a row encrypted under a KEK it
// was not given is reported as such rather than as damaged.
//
// # KEK rotation
//
// A Vault has a current KEK, which encrypts every new row, and during a
// rotation a previous KEK ([VaultOptions].PreviousKEK, LEDGER_KEK_PREVIOUS),
// which only decrypts. [Vault.Rekey] re-encrypts under the current KEK every
// active row it can decrypt that is under another KEK, one row per
// transaction, each a compare-and-swap on the nonce and KEK fingerprint it
// decrypted (store.DB.RekeySecret): it is idempotent, safe on several
// replicas at once, and replaces a row only with a ciphertext checked to
// open to the same secret. A row it cannot decrypt is left untouched and
// reported. The rollout (docs/operations.md#rotating-the-kek):
//
//  1. every replica gets the new KEK as LEDGER_KEK and the old one as
//     LEDGER_KEK_PREVIOUS, and reads rows under either;
//  2. Rekey (POST /v1/keyring/rekey, ledgerctl secrets rekey) moves every
//     row under the new KEK, until it reports none remaining;
//  3. every replica drops LEDGER_KEK_PREVIOUS: the old KEK opens nothing.
//
// A replica that meets a row under a KEK it was not given (an old replica
// after a secret was added or re-encrypted by a new one) skips it and goes
// on: see below. [Vault.MissingKEK] tells ledgerd to answer a callback no
// key opens with 503 (retry) rather than 400, since a replica that has the
// KEK may open it.
//
// # Rows that do not decrypt
//
// [Vault.Active] never fails because of a row: a row that does not
// decrypt (a KEK this replica was not given, damage, tampering) or holds a
// weak secret is skipped, logged at error level with its secret ID,
// fingerprint, KEK fingerprint and reason (once, until it decrypts again,
// changes reason or leaves the active set), and counted by
// [Vault.Undecryptable] and [Vault.UndecryptableBy] (the gauge
// ledgerd_keyring_undecryptable_secrets{reason}, [Vault.RegisterMetrics]).
// The other secrets keep working, and the keyring is not stale: a load
// that skips rows is a successful load.
//
// # Propagation between replicas
//
// Replicas share nothing but the database. Every Loader reloads the whole
// active set each Interval: the set is a handful of rows, so the cost is
// one small query and a few AES-GCM opens per replica every 2 s. A change
// made through any replica's Vault (add, generate, retire) is therefore in
// every replica's keyring one Interval plus one load after it commits, well
// within contract §1's 5 s. No version query is used: a "count and latest
// timestamp" check saves nothing measurable and can miss a retirement
// stamped by a replica whose clock is behind. When a load fails (database
// down) the keyring keeps the last keys loaded, and the failure is logged.
//
// # Secrets never leave
//
// Secret values are never logged, printed, put in errors or returned,
// except once by [Vault.Generate] to the caller that asked for a new
// secret, and by Bootstrap into the 0600 development file. Logs and errors
// name secrets by secret ID and fingerprint (the first 8 bytes of the
// SHA-256 of the secret, in hex: see envelope.Key.Fingerprint). Decrypted
// copies held by this package are cleared after use.
//
// # Fingerprints
//
// The fingerprint (64 bits) identifies a secret: adding a secret whose
// fingerprint is stored finds that row. For an active row the stored secret
// is decrypted and compared in constant time, so a different secret with a
// colliding fingerprint is refused (409 secret-fingerprint-collision), never taken
// for the stored one. A retired row has no value left to compare, so a
// collision with it is reported as ErrSecretRetired; by chance that has
// probability 2^-64 per pair.
package keyring
