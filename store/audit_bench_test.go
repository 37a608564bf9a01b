package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/store/storetest"
)

// BenchmarkTokenByHash is what each admin request that presents a named
// token costs: one lookup of admin_tokens by the token's hash.
//
//	go test ./store -run '^$' -bench TokenByHash
func BenchmarkTokenByHash(b *testing.B) {
	db, _ := storetest.DB(b)
	ctx := context.Background()
	tok := ledger.NewToken()
	now := time.Now()
	if _, err := db.CreateToken(ctx, ledger.NewAdminToken{TokenID: ledger.NewReference("tok_"), Name: "bench",
		Scopes: []string{ledger.ScopeRead}, Hash: ledger.TokenHash(tok), CreatedBy: ledger.BreakGlassID, CreatedOn: now}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, ok, err := db.TokenByHash(ctx, ledger.TokenHash(tok), now); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkAdjustAudit is an adjustment alone (audit=off) and with its
// audit record appended in its transaction (audit=on): the audit's cost
// per admin write, one writer at a time.
//
//	go test ./store -run '^$' -bench AdjustAudit
func BenchmarkAdjustAudit(b *testing.B) {
	for _, audit := range []bool{false, true} {
		b.Run(fmt.Sprintf("audit=%v", audit), func(b *testing.B) {
			db, _ := storetest.DB(b)
			storetest.Account(b, db, storetest.AccountOpts{AccountID: "ba-1", Funds: "1"})
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				adjust := func(ctx context.Context) (ledger.AuditRecord, error) {
					_, err := db.Adjust(ctx, "ba-1", decimal.NewFromInt(1), fmt.Sprint("k", i), "")
					return ledger.AuditRecord{RecordedAt: time.Now(), ActorID: "tok_b", ActorName: "b", Scope: ledger.ScopeAdjust,
						Method: "POST", Route: "/r", Target: "accountID=ba-1", Status: 201, Source: "127.0.0.1"}, err
				}
				var err error
				if audit {
					_, err = db.Audited(ctx, adjust)
				} else {
					_, err = adjust(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
