-- audit_append appends one record to the audit trail and returns its seq
-- and hash. It locks the chain's head (audit_head, FOR UPDATE) until the
-- caller's transaction ends: appends are serialised, across replicas, in
-- the order they take the lock, so that each record carries the hash of
-- the one committed before it. The admin API calls it last in the
-- transaction of the write it records, so the lock is held from the
-- append to the commit; the callbacks never take it.
--
-- The signature is declared in schema/migrations/; this file defines the
-- body (schema/README.md says how each changes).

CREATE OR REPLACE FUNCTION audit_append(
    p_recorded_at timestamptz, p_actor_id text, p_actor_name text, p_scope text, p_method text,
    p_route text, p_target text, p_status integer, p_body_digest text, p_source text,
    OUT record_seq bigint, OUT record_hash bytea)
LANGUAGE plpgsql AS $$
DECLARE
    head audit_head%ROWTYPE;
BEGIN
    SELECT * INTO head FROM audit_head WHERE singleton FOR UPDATE;
    record_seq := head.seq + 1;
    record_hash := audit_hash(p_prev => head.hash, p_seq => record_seq, p_recorded_at => p_recorded_at,
        p_actor_id => p_actor_id, p_actor_name => p_actor_name, p_scope => p_scope, p_method => p_method,
        p_route => p_route, p_target => p_target, p_status => p_status, p_body_digest => p_body_digest,
        p_source => p_source);
    INSERT INTO audit_log (seq, recorded_at, actor_id, actor_name, scope, method, route, target, status,
                           body_digest, source, prev_hash, hash)
    VALUES (record_seq, p_recorded_at, p_actor_id, p_actor_name, p_scope, p_method, p_route, p_target, p_status,
            p_body_digest, p_source, head.hash, record_hash);
    UPDATE audit_head SET seq = record_seq, hash = record_hash WHERE singleton;
END $$;
