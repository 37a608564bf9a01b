-- Reading the ledger back (admin API: GET /v1/accounts, /v1/journal/…,
-- /v1/accounts/{accountID}/statement). Indexes only; no table, function or
-- constraint changes. Self-contained: it may run after any later migration
-- that leaves these tables' columns in place.

-- GET /v1/accounts?ownerExternalID=… pages by account_id within one owner.
-- Neither column is ever updated (accounts_immutable guards account_id; no
-- function writes owner_external_id), so balance and held updates stay HOT.
CREATE INDEX accounts_owner_idx ON accounts (owner_external_id, account_id);

-- The journal in time order, the order of GET /v1/journal/… without an
-- account: each page starts at its cursor (created_at, transaction_id)
-- instead of sorting the rest of the journal. It costs one index insert per
-- capture, credit and adjustment (callbacks that move no money write no
-- journal row), at the right edge of the index since created_at grows. The
-- primary key (a UUIDv7) only approximates created_at, which tests pin and
-- callers filter on.
CREATE INDEX journal_time_idx ON journal (created_at, transaction_id);
