package store

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/ledger"
)

// The audit trail (tables audit_log, audit_head; functions audit_append,
// audit_hash).
const (
	appendAuditSQL = `SELECT record_seq, record_hash FROM audit_append(p_recorded_at => $1, p_actor_id => $2,
p_actor_name => $3, p_scope => $4, p_method => $5, p_route => $6, p_target => $7, p_status => $8,
p_body_digest => $9, p_source => $10)`

	auditColumns = `seq, recorded_at, actor_id, actor_name, scope, method, route, target, status,
coalesce(body_digest, ''), source, prev_hash, hash`

	// $1 after seq, $2 actor ('' any), $3 from, $4 to (NULL open), $5 limit.
	listAuditSQL = `SELECT ` + auditColumns + ` FROM audit_log
WHERE seq > $1 AND ($2 = '' OR actor_id = $2 OR actor_name = $2)
  AND ($3::timestamptz IS NULL OR recorded_at >= $3) AND ($4::timestamptz IS NULL OR recorded_at < $4)
ORDER BY seq LIMIT $5`

	// The chain checked from the outside: every record's hash recomputed
	// from its fields, every seq one more than the one before, every
	// prev_hash the one before's hash, and the head the last record. One
	// scan of audit_log in seq order (its primary key).
	auditChainSQL = `SELECT 'audit:' || r.seq, CASE
    WHEN r.seq <> coalesce(r.before_seq, 0) + 1 THEN
        format('record %s follows record %s: the records between are missing (deleted)', r.seq, coalesce(r.before_seq, 0))
    WHEN r.prev_hash <> coalesce(r.before_hash, decode(repeat('00', 32), 'hex')) THEN
        format('record %s names a previous hash that is not record %s''s: the chain was rewritten', r.seq, r.seq - 1)
    ELSE format('record %s does not match its hash: it was changed after it was written', r.seq) END
FROM (SELECT seq, prev_hash, hash,
             hash = audit_hash(p_prev => prev_hash, p_seq => seq, p_recorded_at => recorded_at, p_actor_id => actor_id,
                 p_actor_name => actor_name, p_scope => scope, p_method => method, p_route => route, p_target => target,
                 p_status => status, p_body_digest => body_digest, p_source => source) AS intact,
             lag(seq) OVER w AS before_seq, lag(hash) OVER w AS before_hash
      FROM audit_log WINDOW w AS (ORDER BY seq)) r
WHERE NOT r.intact OR r.seq <> coalesce(r.before_seq, 0) + 1
   OR r.prev_hash <> coalesce(r.before_hash, decode(repeat('00', 32), 'hex'))
UNION ALL
SELECT 'audit:head', format('the head of the chain is record %s, the last record is %s: records were deleted or the head moved',
       h.seq, coalesce(l.seq, 0))
FROM audit_head h LEFT JOIN LATERAL (SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1) l ON true
WHERE h.seq <> coalesce(l.seq, 0) OR h.hash <> coalesce(l.hash, decode(repeat('00', 32), 'hex'))`
)

// txKey is the context key of Audited's transaction.
type txKey struct{}

// Audited runs one admin write as one transaction and appends its audit
// record last in it: fn does the write through the store's methods, each
// of which runs in that transaction (DB.tx joins it), and returns the
// record, with the status its caller answers. When fn fails, nothing is
// committed, the record included: the caller records the refusal with
// AppendAudit. The whole is retried after a serialization failure or a
// deadlock, so fn must be safe to run again. It returns the record as
// stored.
func (db *DB) Audited(ctx context.Context, fn func(context.Context) (ledger.AuditRecord, error)) (ledger.AuditRecord, error) {
	var rec ledger.AuditRecord
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if rec, err = fn(context.WithValue(ctx, txKey{}, tx)); err != nil {
			return err
		}
		rec, err = appendAudit(ctx, tx, rec)
		return err
	})
	return rec, err
}

// AppendAudit appends rec to the audit trail on its own: a refused
// request, or a write of many transactions (a reconciliation run, a KEK
// rekey) once it has ended. It returns the record as stored.
func (db *DB) AppendAudit(ctx context.Context, rec ledger.AuditRecord) (ledger.AuditRecord, error) {
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		rec, err = appendAudit(ctx, tx, rec)
		return err
	})
	return rec, err
}

func appendAudit(ctx context.Context, tx pgx.Tx, rec ledger.AuditRecord) (ledger.AuditRecord, error) {
	rec.RecordedAt = rec.RecordedAt.UTC().Truncate(time.Microsecond)
	var digest *string
	if rec.BodyDigest != "" {
		digest = &rec.BodyDigest
	}
	err := tx.QueryRow(ctx, appendAuditSQL, rec.RecordedAt, rec.ActorID, rec.ActorName, rec.Scope, rec.Method, rec.Route,
		rec.Target, rec.Status, digest, rec.Source).Scan(&rec.Seq, &rec.Hash)
	return rec, err
}

// cursorAudit is the kind of the audit trail's cursors (see encodeCursor).
const cursorAudit = "u1"

// ListAudit reads one page of the audit trail, oldest first.
func (db *DB) ListAudit(ctx context.Context, o ledger.AuditListOptions) (ledger.AuditPage, error) {
	if err := validLimit(&o.Limit); err != nil {
		return ledger.AuditPage{}, err
	}
	if !ledger.ValidText(o.Actor) {
		return ledger.AuditPage{}, ledger.Invalid("/actor", "actor must be valid UTF-8 without NUL")
	}
	var after int64
	if o.Cursor != "" {
		payload, ok := decodeCursor(o.Cursor, cursorAudit)
		n, err := strconv.ParseInt(payload, 10, 64)
		if !ok || err != nil || n < 1 || strconv.FormatInt(n, 10) != payload || encodeCursor(cursorAudit, payload) != o.Cursor {
			return ledger.AuditPage{}, errBadCursor
		}
		after = n
	}
	rows, err := db.pool.Query(ctx, listAuditSQL, after, o.Actor, optionalTime(o.From), optionalTime(o.To), o.Limit+1)
	if err != nil {
		return ledger.AuditPage{}, interpret(err)
	}
	recs, err := pgx.CollectRows(rows, scanAudit)
	if err != nil {
		return ledger.AuditPage{}, interpret(err)
	}
	p := ledger.AuditPage{Records: recs}
	if len(recs) > o.Limit {
		p.Records, p.HasMore = recs[:o.Limit], true
		p.NextCursor = encodeCursor(cursorAudit, strconv.FormatInt(p.Records[o.Limit-1].Seq, 10))
	}
	return p, nil
}

func scanAudit(r pgx.CollectableRow) (ledger.AuditRecord, error) {
	var a ledger.AuditRecord
	var status int32
	err := r.Scan(&a.Seq, &a.RecordedAt, &a.ActorID, &a.ActorName, &a.Scope, &a.Method, &a.Route, &a.Target, &status,
		&a.BodyDigest, &a.Source, &a.PrevHash, &a.Hash)
	a.Status, a.RecordedAt = int(status), a.RecordedAt.UTC()
	return a, err
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// VerifyAuditChain checks the audit trail's chain in the database (the
// check reconciliation runs as audit_chain_broken): one subject per break,
// none when the chain is whole.
func (db *DB) VerifyAuditChain(ctx context.Context) ([]ledger.Subject, error) {
	rows, err := db.pool.Query(ctx, auditChainSQL)
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Subject, error) {
		var s ledger.Subject
		return s, r.Scan(&s.Subject, &s.Detail)
	})
	return out, interpret(err)
}

// querier returns the transaction of Audited when ctx carries one, else
// the pool: a read inside an audited write sees the write's own rows and
// takes no second connection.
func (db *DB) querier(ctx context.Context) querier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return db.pool
}
