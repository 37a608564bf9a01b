package holds

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/ledger"
)

// Hold statuses. A hold is held from its placement until its one
// settlement: captured or released, for good.
const (
	StatusHeld     = "held"
	StatusCaptured = "captured"
	StatusReleased = "released"
)

// validStatus reports whether s is a hold status: what a listing's status
// filter accepts.
func validStatus(s string) bool {
	return s == StatusHeld || s == StatusCaptured || s == StatusReleased
}

// Reasons of authorize denials (contract §2.3) and of capture and release
// failures (2.4, 2.5). A payout in another currency than its account's is
// denied with ledger.ReasonCurrencyMismatch, the reason credit-account
// refuses with too: declared once, in package ledger.
const (
	ReasonPayoutAlreadyAuthorized = "payout_already_authorized"
	ReasonUnknownFundingSource    = "unknown_funding_source"
	ReasonFundingSourceMismatch   = "funding_source_mismatch"
	ReasonAccountUnavailable      = "account_unavailable"
	ReasonFraudSuspected          = "fraud_suspected"
	ReasonStepUpRequired          = "step_up_required"
	ReasonInsufficientFunds       = "insufficient_funds"
	ReasonPayoutMismatch          = "payout_mismatch"
	ReasonHoldReleased            = "hold_released"
	ReasonHoldCaptured            = "hold_captured"
)

// Hold is a hold as a reader sees it (the admin API, a reconciliation):
// the funds it reserves (Amount in Currency, on AccountID through
// FundingSource, for PayoutID) and where it stands. Status is StatusHeld
// until its one settlement; then exactly one of the capture fields
// (CaptureReference, CapturedAt) or the release fields (ReleaseReference,
// ReleaseReason, ReleasedAt) is set, for good. A held hold counts in its
// account's held amount; a captured one has left the account's balance for
// settlement:<currency>; a released one has returned to available.
type Hold struct {
	HoldReference    string          `json:"holdReference"`
	PayoutID         string          `json:"payoutID"`
	AccountID        string          `json:"accountID"`
	FundingSource    string          `json:"fundingSource"`
	Currency         string          `json:"currency"`
	Amount           decimal.Decimal `json:"amount"`
	Status           string          `json:"status"`
	CaptureReference string          `json:"captureReference,omitempty"`
	ReleaseReference string          `json:"releaseReference,omitempty"`
	ReleaseReason    string          `json:"releaseReason,omitempty"`
	PlacedAt         time.Time       `json:"placedAt"`
	CapturedAt       *time.Time      `json:"capturedAt,omitempty"`
	ReleasedAt       *time.Time      `json:"releasedAt,omitempty"`
}

// ListOptions filters and pages a listing of holds. Limit is 1 to
// ledger.MaxLimit (0: ledger.DefaultLimit).
type ListOptions struct {
	PayoutID  string
	AccountID string
	Status    string
	Cursor    string
	Limit     int
}

// Position is where a page of holds, newest first, resumes: after the hold
// placed at PlacedAt with HoldReference (both zero: from the newest).
type Position struct {
	PlacedAt      time.Time
	HoldReference string
}

// Validate checks the options, fills defaults, and decodes the cursor.
func (o *ListOptions) Validate() (Position, error) {
	if o.Limit == 0 {
		o.Limit = ledger.DefaultLimit
	}
	if o.Limit < 1 || o.Limit > ledger.MaxLimit {
		return Position{}, ledger.Invalid("/limit", "limit must be 1 to %d", ledger.MaxLimit)
	}
	if o.Status != "" && !validStatus(o.Status) {
		return Position{}, ledger.Invalid("/status", "status must be held, captured or released")
	}
	// A slice, not a map: when both are bad, the first is reported, every time.
	for _, f := range []struct{ name, v string }{{"payoutID", o.PayoutID}, {"accountID", o.AccountID}} {
		if !ledger.ValidText(f.v) {
			return Position{}, ledger.Invalid("/"+f.name, "%s must be valid UTF-8 without NUL", f.name)
		}
	}
	if o.Cursor == "" {
		return Position{}, nil
	}
	p, err := decodeCursor(o.Cursor)
	if err != nil {
		return Position{}, ledger.Invalid("/cursor", "cursor is malformed")
	}
	return p, nil
}

// Page is one page of holds, newest first; NextCursor resumes after its
// last hold when HasMore.
type Page struct {
	Holds      []Hold `json:"holds"`
	NextCursor string `json:"nextCursor,omitempty"`
	HasMore    bool   `json:"hasMore"`
}

// EncodeCursor returns the opaque cursor of the position after h.
func EncodeCursor(h Hold) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(h.PlacedAt.UnixMicro(), 10) + "|" + h.HoldReference))
}

// decodeCursor decodes a cursor of EncodeCursor.
func decodeCursor(c string) (Position, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return Position{}, err
	}
	us, ref, ok := strings.Cut(string(b), "|")
	if !ok || ref == "" {
		return Position{}, errors.New("malformed cursor")
	}
	n, err := strconv.ParseInt(us, 10, 64)
	if err != nil {
		return Position{}, err
	}
	if err := checkCursor(c, n, ref); err != nil {
		return Position{}, err
	}
	return Position{PlacedAt: time.UnixMicro(n), HoldReference: ref}, nil
}
