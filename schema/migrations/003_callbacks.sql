-- Callback idempotency and provenance (design 2.8), and one function per
-- callback endpoint that claims the key, decides, applies the effect and
-- stores the answer, so that a callback is one statement: one round trip.

-- One table per endpoint: callback_requests is partitioned by endpoint, so
-- each endpoint's keys live in a table of their own (the same key string on
-- authorize, capture and release of one payout is three keys), while one
-- code path serves all four.
CREATE TABLE callback_requests (
    endpoint         text        NOT NULL,
    -- authorize, capture: payoutID; release: payoutID or holdReference;
    -- credit-account: '' (the key alone is the scope).
    scope            text        NOT NULL,
    idempotency_key  text        NOT NULL,
    -- SHA-256 of the canonical business claims: tells a replay from a misuse.
    fingerprint      bytea       NOT NULL,
    -- The payoutID (authorize, capture, release) or requestID (credit).
    subject          text        NOT NULL,
    outcome          text,
    reason           text,
    -- The stored answer: the response's service claims, sent again to every
    -- later request with this key.
    response         jsonb,
    -- Provenance: the signing key that opened the first request, the
    -- audit-only claims, when it came, and how often the key was received.
    key_fingerprint  text        NOT NULL,
    caller_subject   text,
    audit_request_id text,
    received_at      timestamptz NOT NULL,
    last_received_at timestamptz NOT NULL,
    attempts         integer     NOT NULL DEFAULT 1,
    CONSTRAINT callback_requests_pkey PRIMARY KEY (endpoint, scope, idempotency_key),
    CONSTRAINT callback_requests_endpoint_check CHECK (endpoint IN ('authorize', 'capture', 'release', 'credit-account')),
    CONSTRAINT callback_requests_fingerprint_check CHECK (octet_length(fingerprint) = 32)
) PARTITION BY LIST (endpoint);
CREATE TABLE callback_authorize PARTITION OF callback_requests FOR VALUES IN ('authorize');
CREATE TABLE callback_capture PARTITION OF callback_requests FOR VALUES IN ('capture');
CREATE TABLE callback_release PARTITION OF callback_requests FOR VALUES IN ('release');
CREATE TABLE callback_credit PARTITION OF callback_requests FOR VALUES IN ('credit-account');
CREATE INDEX callback_requests_received_idx ON callback_requests (received_at);

-- cb_begin claims the key of a callback, or finds it claimed. state is
-- 'new' (claimed: the caller decides, applies and stores the answer in the
-- same transaction), 'replay' (response is the stored answer), 'mismatch'
-- (the key was used with other business claims) or 'invalid' (p_claim is
-- false, the caller having found the request invalid, and the key is new:
-- nothing is claimed). The claim comes first (INSERT … ON CONFLICT DO
-- NOTHING): a concurrent request with the same key waits on the claim's
-- unique entry until the first commits, then reads its answer; if the first
-- rolled back, the second claims the key itself. One effect, one answer.
CREATE FUNCTION cb_begin(
    p_endpoint text, p_scope text, p_key text, p_fingerprint bytea, p_subject text,
    p_key_fingerprint text, p_caller_subject text, p_audit_request_id text,
    p_now timestamptz, p_claim boolean,
    OUT state text, OUT response jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    r callback_requests%ROWTYPE;
    claimed boolean;
BEGIN
    LOOP
        IF p_claim THEN
            INSERT INTO callback_requests (endpoint, scope, idempotency_key, fingerprint, subject,
                key_fingerprint, caller_subject, audit_request_id, received_at, last_received_at)
            VALUES (p_endpoint, p_scope, p_key, p_fingerprint, p_subject,
                p_key_fingerprint, p_caller_subject, p_audit_request_id, p_now, p_now)
            ON CONFLICT (endpoint, scope, idempotency_key) DO NOTHING
            RETURNING true INTO claimed;
            IF claimed THEN
                state := 'new';
                RETURN;
            END IF;
        END IF;
        SELECT * INTO r FROM callback_requests
        WHERE endpoint = p_endpoint AND scope = p_scope AND idempotency_key = p_key;
        IF FOUND THEN
            IF r.fingerprint <> p_fingerprint THEN
                state := 'mismatch';
                RETURN;
            END IF;
            UPDATE callback_requests SET attempts = attempts + 1, last_received_at = p_now
            WHERE endpoint = p_endpoint AND scope = p_scope AND idempotency_key = p_key;
            state := 'replay';
            response := r.response;
            RETURN;
        END IF;
        IF NOT p_claim THEN
            state := 'invalid';
            RETURN;
        END IF;
        -- The claim conflicted with a row that is gone by now (its
        -- transaction rolled back, or it was purged): claim again.
    END LOOP;
END $$;

-- Each cb_<endpoint> function stores its answer by updating its own
-- endpoint's table (a partition) directly: cheaper than routing an UPDATE
-- through the partitioned parent.

-- cb_authorize: design 2.3. p_valid is false when the caller found the
-- fraudScore out of range (row 2): a stored answer still wins (row 1).
CREATE FUNCTION cb_authorize(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_caller_subject text,
    p_audit_request_id text, p_now timestamptz, p_valid boolean,
    p_payout_id text, p_external_id text, p_funding_source text, p_currency text,
    p_amount numeric, p_risk_reason text, p_hold_reference text,
    OUT state text, OUT response jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    d ledger_decision;
BEGIN
    SELECT b.state, b.response INTO state, response
    FROM cb_begin('authorize', p_payout_id, p_key, p_fingerprint, p_payout_id, p_key_fingerprint,
                  p_caller_subject, p_audit_request_id, p_now, p_valid) b;
    IF state <> 'new' THEN
        RETURN;
    END IF;
    d := hold_place(p_payout_id, p_external_id, p_funding_source, p_currency, p_amount,
                    p_risk_reason, p_hold_reference, p_now);
    response := jsonb_strip_nulls(jsonb_build_object('outcome', d.outcome, 'holdReference', d.reference,
                                                     'reason', d.reason, 'idempotencyKey', p_key));
    UPDATE callback_authorize SET outcome = d.outcome, reason = d.reason, response = cb_authorize.response
    WHERE endpoint = 'authorize' AND scope = p_payout_id AND idempotency_key = p_key;
END $$;

-- cb_capture: design 2.4.
CREATE FUNCTION cb_capture(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_capture_reference text, p_transaction_id uuid,
    OUT state text, OUT response jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    d ledger_decision;
BEGIN
    SELECT b.state, b.response INTO state, response
    FROM cb_begin('capture', p_payout_id, p_key, p_fingerprint, p_payout_id, p_key_fingerprint,
                  NULL, NULL, p_now, true) b;
    IF state <> 'new' THEN
        RETURN;
    END IF;
    d := hold_capture(p_hold_reference, p_payout_id, p_capture_reference, p_transaction_id, p_now);
    response := jsonb_strip_nulls(jsonb_build_object('outcome', d.outcome, 'captureReference', d.reference,
                                                     'reason', d.reason, 'idempotencyKey', p_key));
    UPDATE callback_capture SET outcome = d.outcome, reason = d.reason, response = cb_capture.response
    WHERE endpoint = 'capture' AND scope = p_payout_id AND idempotency_key = p_key;
END $$;

-- cb_release: design 2.5. p_payout_id may be NULL; the scope is the
-- payoutID when given, else the holdReference.
CREATE FUNCTION cb_release(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_payout_id text, p_hold_reference text, p_reason text, p_release_reference text,
    OUT state text, OUT response jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    d ledger_decision;
    v_scope text := coalesce(p_payout_id, p_hold_reference);
BEGIN
    SELECT b.state, b.response INTO state, response
    FROM cb_begin('release', v_scope, p_key, p_fingerprint, v_scope, p_key_fingerprint,
                  NULL, NULL, p_now, true) b;
    IF state <> 'new' THEN
        RETURN;
    END IF;
    d := hold_release(p_hold_reference, p_payout_id, p_reason, p_release_reference, p_now);
    response := jsonb_strip_nulls(jsonb_build_object('outcome', d.outcome, 'releaseReference', d.reference,
                                                     'reason', d.reason, 'idempotencyKey', p_key));
    UPDATE callback_release SET outcome = d.outcome, reason = d.reason, response = cb_release.response
    WHERE endpoint = 'release' AND scope = v_scope AND idempotency_key = p_key;
END $$;

-- cb_credit: design 2.6.
CREATE FUNCTION cb_credit(
    p_key text, p_fingerprint bytea, p_key_fingerprint text, p_now timestamptz,
    p_request_id text, p_destination text, p_requester text, p_currency text,
    p_amount numeric, p_max numeric, p_credit_reference text, p_transaction_id uuid,
    OUT state text, OUT response jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    d ledger_decision;
BEGIN
    SELECT b.state, b.response INTO state, response
    FROM cb_begin('credit-account', '', p_key, p_fingerprint, p_request_id, p_key_fingerprint,
                  NULL, NULL, p_now, true) b;
    IF state <> 'new' THEN
        RETURN;
    END IF;
    d := ledger_credit(p_request_id, p_destination, p_requester, p_currency, p_amount, p_max,
                       p_credit_reference, p_transaction_id, p_now);
    response := jsonb_strip_nulls(jsonb_build_object('outcome', d.outcome, 'creditReference', d.reference,
                                                     'reason', d.reason, 'idempotencyKey', p_key));
    UPDATE callback_credit SET outcome = d.outcome, reason = d.reason, response = cb_credit.response
    WHERE endpoint = 'credit-account' AND scope = '' AND idempotency_key = p_key;
END $$;
