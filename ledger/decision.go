package ledger

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// Decision is the answer of a hold or credit operation: the outcome of the
// decision table, the reason of a refusal, and the reference answered.
type Decision struct {
	Outcome   string
	Reason    string
	Reference string
	// Orphan is true when the hold reference was never issued here and the
	// answer is the orphan's (design 2.4 and 2.5, row 2).
	Orphan bool
}

// Approved reports whether the outcome is approved.
func (d Decision) Approved() bool { return d.Outcome == "approved" }

// ScanDecision runs a query that returns one ledger_decision row.
func ScanDecision(ctx context.Context, q DBTX, sql string, args ...any) (Decision, error) {
	var d Decision
	var reason, ref *string
	err := q.QueryRow(ctx, sql, args...).Scan(&d.Outcome, &reason, &ref, &d.Orphan)
	if reason != nil {
		d.Reason = *reason
	}
	if ref != nil {
		d.Reference = *ref
	}
	return d, translate(err)
}

// CreditRequest is a credit-account decision's input (design 2.6).
type CreditRequest struct {
	RequestID           string
	Destination         string // the fundingDestination token
	RequesterExternalID string
	Amount              Money
	Max                 *decimal.Decimal // LEDGER_CREDIT_MAX; nil: no limit
	Now                 time.Time
}

const credit = `SELECT outcome, reason, reference, orphan FROM ledger_credit($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// Credit decides a credit-account request (design 2.6 rows 2 to 9) inside
// the caller's transaction and, when approved, posts it: the journal debits
// settlement:<CUR> and credits the account. A requestID is credited at most
// once (I5): a second credit of it, under any key, answers the first
// creditReference.
func Credit(ctx context.Context, q DBTX, r CreditRequest) (Decision, error) {
	return ScanDecision(ctx, q, credit, r.RequestID, r.Destination, r.RequesterExternalID,
		r.Amount.Currency, r.Amount.Value, r.Max, NewReference("cred_"), uuid.New(), r.Now)
}
