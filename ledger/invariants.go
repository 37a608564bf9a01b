package ledger

import "fmt"

// Violation is one breach of an invariant of the ledger (see doc.go),
// found by the checks that read the committed tables from the outside
// (store.CheckInvariants).
type Violation struct {
	Invariant string `json:"invariant"` // I1 .. I6
	Kind      string `json:"kind"`      // a reconciliation finding kind
	Subject   string `json:"subject"`   // account, transaction, hold, request or currency
	Detail    string `json:"detail"`
}

// String implements fmt.Stringer: the Violation in one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s %s %s: %s", v.Invariant, v.Kind, v.Subject, v.Detail)
}
