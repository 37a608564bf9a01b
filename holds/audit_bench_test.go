package holds_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkAuthorizeCaptureWhileAuditing is BenchmarkAuthorizeCapture's
// cycles on 8 clients, with (admin=on) and without (admin=off) admin
// writes appending to the audit trail as fast as one writer can on the
// same database: the callbacks never take the chain's head lock, so their
// rate should not move. It reports the admin writes' rate too.
//
//	go test ./holds -run '^$' -bench AuthorizeCaptureWhileAuditing -benchtime 2000x
func BenchmarkAuthorizeCaptureWhileAuditing(b *testing.B) {
	for _, admin := range []bool{false, true} {
		b.Run(fmt.Sprintf("admin=%v", map[bool]string{false: "off", true: "on"}[admin]), func(b *testing.B) {
			db := storetest.BenchDB(b)
			ctx := context.Background()
			const clients = 8
			for c := range clients {
				storetest.Account(b, db, storetest.AccountOpts{AccountID: fmt.Sprintf("wa-%d", c),
					Owner: fmt.Sprintf("wo-%d", c), Funds: "1000000", Source: fmt.Sprintf("ws-%d", c)})
			}
			storetest.Account(b, db, storetest.AccountOpts{AccountID: "wa-admin", Funds: "1"})
			stop := make(chan struct{})
			var writes atomic.Int64
			var wg sync.WaitGroup
			if admin {
				wg.Go(func() { auditedWrites(b, db, stop, &writes) })
			}
			start := time.Now()
			storetest.RunClients(b, clients, func(c, i int) error {
				payout := fmt.Sprintf("wp-%d", i)
				a, err := db.Authorize(ctx, auth{key: "a" + payout, payout: payout, owner: fmt.Sprintf("wo-%d", c),
					source: fmt.Sprintf("ws-%d", c), amount: "1.00"}.params())
				if err != nil || !a.Approved() {
					return fmt.Errorf("authorize: %+v %v", a, err)
				}
				a, err = db.Capture(ctx, captureParams("c"+payout, payout, a.Reference))
				if err != nil || !a.Approved() {
					return fmt.Errorf("capture: %+v %v", a, err)
				}
				return nil
			})
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(writes.Load())/time.Since(start).Seconds(), "admin-writes/s")
			storetest.AssertInvariants(b, db)
		})
	}
}

// auditedWrites makes adjustments with their audit records, one after
// another, until stop.
func auditedWrites(b *testing.B, db interface {
	Audited(context.Context, func(context.Context) (ledger.AuditRecord, error)) (ledger.AuditRecord, error)
	Adjust(context.Context, string, decimal.Decimal, string, string) (ledger.Adjustment, error)
}, stop chan struct{}, n *atomic.Int64) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		_, err := db.Audited(context.Background(), func(ctx context.Context) (ledger.AuditRecord, error) {
			_, err := db.Adjust(ctx, "wa-admin", decimal.NewFromInt(1), fmt.Sprintf("w-%d", i), "")
			return ledger.AuditRecord{RecordedAt: time.Now(), ActorID: "tok_bench", ActorName: "bench", Scope: ledger.ScopeAdjust,
				Method: "POST", Route: "/v1/accounts/{accountID}/adjustments", Target: "accountID=wa-admin", Status: 201, Source: "127.0.0.1"}, err
		})
		if err != nil {
			b.Error(err)
			return
		}
		n.Add(1)
	}
}
