-- Credits of one request for payment for two amounts (docs/contract.md
-- §2.6 row 2a): a requestID credited here for one amount and asked again,
-- under another idempotency key, for another amount or currency is answered
-- 422 credit-amount-mismatch and credits nothing; each such attempt is kept
-- here, so that reconciliation reports it (credit_amount_mismatch, critical,
-- with both amounts). Written by cb_credit in the callback's transaction;
-- a retry of the same attempt counts in attempts.
CREATE TABLE credit_conflicts (
    request_id       text        COLLATE "C" NOT NULL,
    idempotency_key  text        COLLATE "C" NOT NULL,
    currency         text        NOT NULL,
    amount           numeric     NOT NULL,
    received_at      timestamptz NOT NULL,
    last_received_at timestamptz NOT NULL,
    attempts         integer     NOT NULL DEFAULT 1,
    CONSTRAINT credit_conflicts_pkey PRIMARY KEY (request_id, idempotency_key)
);
