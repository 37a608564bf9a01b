package ledger

// Outcomes of the decision tables (contract §2.3 to 2.6).
const (
	OutcomeApproved               = "approved"
	OutcomeDenied                 = "denied"                  // authorize
	OutcomeFailed                 = "failed"                  // capture, release
	OutcomeRefused                = "refused"                 // credit-account
	OutcomeDestinationUnavailable = "destination_unavailable" // credit-account
)

// Reasons of credit-account refusals (contract §2.6); ReasonCurrencyMismatch
// is also authorize's (contract §2.3). The other authorize, capture and
// release reasons are in package holds.
const (
	ReasonUnknownDestination  = "unknown_destination"
	ReasonAccountClosed       = "account_closed"
	ReasonDestinationMismatch = "destination_mismatch"
	ReasonAccountFrozen       = "account_frozen"
	ReasonCurrencyMismatch    = "currency_mismatch"
	ReasonAmountOverLimit     = "amount_over_limit"
)

// Decision is the answer of a decision table: the outcome, the reason of a
// refusal, and the reference answered (holdReference, captureReference,
// releaseReference or creditReference).
type Decision struct {
	Outcome   string
	Reason    string
	Reference string
}

// Approved reports whether the outcome is approved.
func (d Decision) Approved() bool { return d.Outcome == OutcomeApproved }
