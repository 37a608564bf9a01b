-- The callback keyring (design 1 and 4): the signing secrets that open
-- ledger callbacks, shared by every replica and kept encrypted at rest.
--
-- A secret is stored as AES-256-GCM ciphertext under the key-encryption key
-- (LEDGER_KEK), which never enters the database: a fresh random 12-byte
-- nonce per row and the row's secret_id as additional authenticated data, so
-- a ciphertext moved to another row no longer decrypts. Reading this table,
-- or writing it, without the KEK yields no secret and cannot make the adapter
-- accept a key of the writer's choosing (package keyring decrypts, checks the
-- fingerprint against the plaintext, and skips any row that fails).
--
-- Invariants, each paired with Go code in package keyring:
--   K1 one row per secret: the fingerprint is unique over active and retired
--      rows, so adding a secret twice finds the first row
--      (signing_secrets_fingerprint_key; Store.Add reads the winner).
--   K2 a retired secret is never active again: retiring erases its nonce and
--      ciphertext (signing_secrets_material_check), so no UPDATE can bring it
--      back without the KEK, and K1 refuses it as a new row
--      (Store.Add answers secret-retired).

CREATE TABLE signing_secrets (
    secret_id       text        NOT NULL,
    fingerprint     text        NOT NULL,
    kek_fingerprint text        NOT NULL,
    nonce           bytea,
    ciphertext      bytea,
    source          text        NOT NULL,
    added_on        timestamptz NOT NULL,
    retired_on      timestamptz,
    CONSTRAINT signing_secrets_pkey PRIMARY KEY (secret_id),
    CONSTRAINT signing_secrets_fingerprint_key UNIQUE (fingerprint),
    CONSTRAINT signing_secrets_secret_id_check CHECK (secret_id ~ '^sec_[a-z2-7]{26}$'),
    CONSTRAINT signing_secrets_fingerprint_check CHECK (fingerprint ~ '^[0-9a-f]{16}$'),
    CONSTRAINT signing_secrets_kek_fingerprint_check CHECK (kek_fingerprint ~ '^[0-9a-f]{16}$'),
    CONSTRAINT signing_secrets_source_check CHECK (source IN ('env', 'api', 'generated', 'dev')),
    -- 12-byte GCM nonce; 32-byte secret plus the 16-byte GCM tag.
    CONSTRAINT signing_secrets_nonce_check CHECK (octet_length(nonce) = 12),
    CONSTRAINT signing_secrets_ciphertext_check CHECK (octet_length(ciphertext) = 48),
    -- K2: active rows carry the encrypted secret, retired rows carry none.
    CONSTRAINT signing_secrets_material_check CHECK (
        (retired_on IS NULL AND nonce IS NOT NULL AND ciphertext IS NOT NULL)
        OR (retired_on IS NOT NULL AND nonce IS NULL AND ciphertext IS NULL)),
    CONSTRAINT signing_secrets_retired_check CHECK (retired_on IS NULL OR retired_on >= added_on)
);

COMMENT ON TABLE signing_secrets IS
    'Callback signing secrets (the keyring), AES-256-GCM encrypted under the KEK; every replica reloads the active rows within seconds.';
COMMENT ON COLUMN signing_secrets.secret_id IS
    'sec_ + 128 random bits (base32); the AAD of the row''s ciphertext.';
COMMENT ON COLUMN signing_secrets.fingerprint IS
    'First 8 bytes of SHA-256 of the secret, hex: safe to log; identifies the secret across replicas and the service.';
COMMENT ON COLUMN signing_secrets.kek_fingerprint IS
    'Identifies the KEK that encrypted the row (domain-separated SHA-256, 8 bytes hex), so a wrong KEK is told from a damaged row.';
COMMENT ON COLUMN signing_secrets.nonce IS
    'Random 12-byte AES-GCM nonce, fresh per row; NULL once retired.';
COMMENT ON COLUMN signing_secrets.ciphertext IS
    'AES-256-GCM(KEK, nonce, secret, AAD = secret_id): 32 bytes and the tag; NULL once retired (erased, not recoverable).';
COMMENT ON COLUMN signing_secrets.source IS
    'How the secret arrived: env (LEDGER_SIGNING_SECRETS), api (admin API add), generated (admin API generate), dev (embedded-mode bootstrap).';
COMMENT ON COLUMN signing_secrets.added_on IS 'When the secret was stored.';
COMMENT ON COLUMN signing_secrets.retired_on IS
    'When the secret was retired; NULL while it is active and opens callbacks.';
