package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

func auditRecord(i int) ledger.AuditRecord {
	return ledger.AuditRecord{RecordedAt: time.Date(2026, 3, 1, 9, 0, i, 123456789, time.UTC), ActorID: "tok_" + fmt.Sprint(i),
		ActorName: "ops-ünïcødé", Scope: ledger.ScopeOperate, Method: "POST", Route: "/v1/accounts", Target: "accountID=acc;1:2",
		Status: 201, BodyDigest: []string{"", ledger.DigestRedacted, "0f" + string(bytes.Repeat([]byte("ab"), 31))}[i%3],
		Source: "127.0.0.1"}
}

// readAll reads the whole audit trail through ListAudit, page by page.
func readAll(t *testing.T, db *store.DB, o ledger.AuditListOptions) []ledger.AuditRecord {
	t.Helper()
	var out []ledger.AuditRecord
	for {
		p, err := db.ListAudit(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Records...)
		if !p.HasMore {
			return out
		}
		o.Cursor = p.NextCursor
	}
}

// TestAuditHashMatchesGo: the chain the database writes (audit_hash) is
// the chain ledger.AuditHash computes, field by field, so that an export
// verifies offline; the first record starts from 32 zero bytes.
func TestAuditHashMatchesGo(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	for i := range 7 {
		rec, err := db.AppendAudit(context.Background(), auditRecord(i))
		if err != nil || rec.Seq != int64(i+1) {
			t.Fatalf("append %d: seq %d %v", i, rec.Seq, err)
		}
	}
	recs := readAll(t, db, ledger.AuditListOptions{Limit: 3})
	if len(recs) != 7 || !bytes.Equal(recs[0].PrevHash, ledger.AuditGenesis()) {
		t.Fatalf("%d records; first %+v", len(recs), recs[0])
	}
	for i, r := range recs {
		want := auditRecord(i)
		if r.ActorName != want.ActorName || r.BodyDigest != want.BodyDigest || !r.RecordedAt.Equal(want.RecordedAt.Truncate(time.Microsecond)) {
			t.Fatalf("record %d read back as %+v", i, r)
		}
		if !bytes.Equal(ledger.AuditHash(r.PrevHash, r), r.Hash) {
			t.Fatalf("record %d: Go's hash differs from the database's", r.Seq)
		}
	}
	if err := ledger.VerifyAuditChain(recs); err != nil {
		t.Fatal(err)
	}
	if breaks, err := db.VerifyAuditChain(context.Background()); err != nil || len(breaks) != 0 {
		t.Fatalf("breaks %v %v", breaks, err)
	}
	if got := readAll(t, db, ledger.AuditListOptions{Actor: "tok_3"}); len(got) != 1 || got[0].Seq != 4 {
		t.Fatalf("actor filter: %+v", got)
	}
	from := time.Date(2026, 3, 1, 9, 0, 2, 0, time.UTC)
	if got := readAll(t, db, ledger.AuditListOptions{From: from, To: from.Add(2 * time.Second)}); len(got) != 2 || got[0].Seq != 3 {
		t.Fatalf("time filter: %+v", got)
	}
	if _, err := db.ListAudit(context.Background(), ledger.AuditListOptions{Cursor: "dTF8MA"}); !errors.Is(err, ledger.ErrInvalidText) && ledger.CodeOf(err) != ledger.CodeInvalid {
		t.Fatalf("cursor of seq 0: %v", err)
	}
}

// TestAuditIsAppendOnly: no statement updates, deletes or truncates a
// record, or moves the head other than by one record.
func TestAuditIsAppendOnly(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	if _, err := db.AppendAudit(context.Background(), auditRecord(0)); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		`UPDATE audit_log SET status = 200`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
		`UPDATE audit_head SET seq = 0`,
		`DELETE FROM audit_head`,
		`TRUNCATE audit_head`,
	} {
		_, err := pool.Exec(context.Background(), sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "LA006" {
			t.Errorf("%s: %v, want LA006", sql, err)
		}
	}
	if breaks, err := db.VerifyAuditChain(context.Background()); err != nil || len(breaks) != 0 {
		t.Fatalf("breaks %v %v", breaks, err)
	}
}

// TestAuditChainShowsTampering: with the triggers disabled (someone with
// the database's owner role), an edited record and a deleted one each
// break the chain where they were, and a record deleted from the end
// leaves the head pointing past the last record.
func TestAuditChainShowsTampering(t *testing.T) {
	t.Parallel()
	db, pool := storetest.DB(t)
	for i := range 6 {
		if _, err := db.AppendAudit(context.Background(), auditRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, sql := range []string{
		`ALTER TABLE audit_log DISABLE TRIGGER USER`,
		`UPDATE audit_log SET status = 200 WHERE seq = 2`,
		`DELETE FROM audit_log WHERE seq = 4`,
		`DELETE FROM audit_log WHERE seq = 6`,
		`ALTER TABLE audit_log ENABLE TRIGGER USER`,
	} {
		if _, err := pool.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	breaks, err := db.VerifyAuditChain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, b := range breaks {
		got[b.Subject] = true
	}
	for _, want := range []string{"audit:2", "audit:5", "audit:head"} {
		if !got[want] {
			t.Errorf("no break at %s: %+v", want, breaks)
		}
	}
	if len(breaks) != 3 {
		t.Errorf("breaks %+v, want 3", breaks)
	}
	if err := ledger.VerifyAuditChain(readAll(t, db, ledger.AuditListOptions{})); err == nil {
		t.Fatal("the Go verifier accepts the tampered chain")
	}
}

// TestAuditConcurrentAppends: admin writes (adjustments, each with its
// audit record in its transaction) and refusals (records alone) from many
// goroutines on two pools, as two replicas would: every record lands
// once, the chain verifies in the database and in Go, each adjustment has
// its record and each record its adjustment, and I1 to I6 hold.
func TestAuditConcurrentAppends(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	other, err := db.Sibling(context.Background(), 8, "replica-2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "aud-1", Funds: "1000"})
	const workers, each = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		replica := []*store.DB{db, other}[w%2]
		wg.Go(func() {
			for i := range each {
				errs <- auditedWrite(replica, w, i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	recs := readAll(t, db, ledger.AuditListOptions{Limit: 100})
	if len(recs) != workers*each {
		t.Fatalf("%d records, want %d", len(recs), workers*each)
	}
	if err := ledger.VerifyAuditChain(recs); err != nil {
		t.Fatal(err)
	}
	if breaks, err := db.VerifyAuditChain(context.Background()); err != nil || len(breaks) != 0 {
		t.Fatalf("breaks %v %v", breaks, err)
	}
	// Half the writes adjusted by 1.00 each.
	storetest.AssertBalances(t, db, "aud-1", fmt.Sprint(1000+workers*each/2), "0", fmt.Sprint(1000+workers*each/2))
	storetest.AssertInvariants(t, db)
}

// auditedWrite is write i of worker w: an adjustment with its audit
// record, or a refusal's record alone.
func auditedWrite(db *store.DB, w, i int) error {
	ctx := context.Background()
	rec := ledger.AuditRecord{RecordedAt: time.Now(), ActorID: fmt.Sprintf("tok_w%d", w), ActorName: "worker", Scope: ledger.ScopeAdjust,
		Method: "POST", Route: "/v1/accounts/{accountID}/adjustments", Target: "accountID=aud-1", Source: "127.0.0.1"}
	if i%2 == 1 {
		rec.Status = 403
		_, err := db.AppendAudit(ctx, rec)
		return err
	}
	_, err := db.Audited(ctx, func(ctx context.Context) (ledger.AuditRecord, error) {
		_, err := db.Adjust(ctx, "aud-1", decimal.RequireFromString("1.00"), fmt.Sprintf("w%d-%d", w, i), "")
		rec.Status = 201
		return rec, err
	})
	return err
}

// TestAuditedRollsBackTogether: a write that fails leaves neither its
// effect nor its record; a write that succeeds leaves both.
func TestAuditedRollsBackTogether(t *testing.T) {
	t.Parallel()
	db, _ := storetest.DB(t)
	storetest.Account(t, db, storetest.AccountOpts{AccountID: "aud-2", Funds: "10"})
	ctx := context.Background()
	rec := ledger.AuditRecord{RecordedAt: time.Now(), ActorID: "a", ActorName: "a", Method: "POST", Route: "/r", Source: "s"}
	_, err := db.Audited(ctx, func(ctx context.Context) (ledger.AuditRecord, error) {
		if _, err := db.Adjust(ctx, "aud-2", decimal.RequireFromString("5"), "k1", ""); err != nil {
			return rec, err
		}
		_, err := db.Adjust(ctx, "aud-2", decimal.RequireFromString("-50"), "k2", "")
		return rec, err
	})
	if !errors.Is(err, ledger.ErrInsufficientAvailable) {
		t.Fatalf("err = %v", err)
	}
	storetest.AssertBalances(t, db, "aud-2", "10", "0", "10")
	if recs := readAll(t, db, ledger.AuditListOptions{}); len(recs) != 0 {
		t.Fatalf("a record of a write that failed: %+v", recs)
	}
	stored, err := db.Audited(ctx, func(ctx context.Context) (ledger.AuditRecord, error) {
		_, err := db.Adjust(ctx, "aud-2", decimal.RequireFromString("5"), "k1", "")
		rec.Status = 201
		return rec, err
	})
	recs := readAll(t, db, ledger.AuditListOptions{})
	if err != nil || stored.Seq != 1 || len(recs) != 1 || recs[0].Status != 201 {
		t.Fatalf("%+v %v %+v", stored, err, recs)
	}
	storetest.AssertBalances(t, db, "aud-2", "15", "0", "15")
}
