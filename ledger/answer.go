package ledger

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// AnswerState says how a callback's decision statement answered.
type AnswerState string

// The states of a callback's decision statement.
const (
	StateNew      AnswerState = "new"      // decided and applied now, the answer stored
	StateReplay   AnswerState = "replay"   // the stored answer of an earlier request with this key
	StateMismatch AnswerState = "mismatch" // the key was used with other business claims (422)
	StateInvalid  AnswerState = "invalid"  // a new key whose request is invalid (authorize row 2); nothing stored
	// StateAmountMismatch: credit row 2a, the requestID was credited for
	// another amount or currency (422); nothing credited, the attempt
	// recorded for reconciliation.
	StateAmountMismatch AnswerState = "amount_mismatch"
)

// Answer is what a callback's decision statement answered: how (State),
// the decision, and how many times it ran.
type Answer struct {
	State AnswerState
	Decision
	// Runs is how many times the statement ran: more than one after a
	// serialization failure or a deadlock.
	Runs int
}

// CreditParams are the arguments of the credit-account decision
// (cb_credit, contract §2.6): the request's business claims with the
// idempotency key's fingerprint, and the references a credit made now
// takes. Max nil: no limit.
type CreditParams struct {
	Key             string
	Fingerprint     []byte // SHA-256 of the business claims (CreditRequest.Fingerprint)
	KeyFingerprint  string // of the signing secret that opened the request
	Now             time.Time
	RequestID       string
	Destination     string
	Requester       string
	Currency        string
	Amount          decimal.Decimal
	Max             *decimal.Decimal
	CreditReference string    // used when the request is credited now
	TransactionID   uuid.UUID // of the credit's journal transaction
}
