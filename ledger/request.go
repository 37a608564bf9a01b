package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/shopspring/decimal"
)

// CreditRequest is the business claims of a credit-account callback
// (contract §2.6), decoded and checked: what the credit decision takes.
type CreditRequest struct {
	ProviderID          string
	IdempotencyKey      string
	RequesterExternalID string
	FundingDestination  string
	Amount              Money
	RequestID           string
}

// Fingerprint is the SHA-256 of the request's canonical business claims:
// a replay with the same key and the same fingerprint is the same request.
func (r CreditRequest) Fingerprint() []byte {
	return ClaimsFingerprint("credit-account", r.ProviderID, r.IdempotencyKey, r.RequesterExternalID,
		r.FundingDestination, r.Amount.Currency, FormatAmount(r.Amount.Currency, r.Amount.Value), r.RequestID)
}

// Params are the arguments of the credit decision for this request,
// opened with the signing secret of keyFingerprint at now; max nil: no
// limit. A credit made now takes a fresh reference and transaction ID.
func (r CreditRequest) Params(keyFingerprint string, now time.Time, max *decimal.Decimal) CreditParams {
	return CreditParams{Key: r.IdempotencyKey, Fingerprint: r.Fingerprint(), KeyFingerprint: keyFingerprint,
		Now: now, RequestID: r.RequestID, Destination: r.FundingDestination, Requester: r.RequesterExternalID,
		Currency: r.Amount.Currency, Amount: r.Amount.Value, Max: max,
		CreditReference: NewReference("cred_"), TransactionID: NewTransactionID()}
}

// ClaimsFingerprint hashes an endpoint's canonical business claims with
// SHA-256, each part length-prefixed, so that no two different claim sets
// hash alike.
func ClaimsFingerprint(endpoint string, parts ...string) []byte {
	h := sha256.New()
	var n [4]byte
	write := func(p string) {
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	write(endpoint)
	for _, p := range parts {
		write(p)
	}
	return h.Sum(nil)
}
