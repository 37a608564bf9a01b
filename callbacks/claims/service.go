package claims

import (
	"encoding/json"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// The service objects of requests, as the payments service sends them:
// each is its endpoint's typed request (what Decode decodes the claims
// into) converted, and marshals to the claims Decode reads back as that
// request. Pass one as the service of BuildRequest or caller.Client.Send:
//
//	client.Send(ctx, claims.Authorize, claims.AuthorizeService(holds.AuthorizeRequest{PayoutID: "po-1", …}))
//
// Optional claims (callerSubject and requestID of an authorize; payoutID,
// providerID and reason of a release) are left out when empty; required
// ones are always written, so an empty one is sent as "" and refused by
// the receiver. An amount marshals as ledger.Money does: a currency not in
// ISO 4217, or a value with more decimals than its currency has, is an
// error. A test that needs claims these cannot express (a wrong type, a
// value with trailing zeros) writes them by hand.
type (
	// AuthorizeService is the service object of an authorize request.
	AuthorizeService holds.AuthorizeRequest
	// CaptureService is the service object of a capture request.
	CaptureService holds.CaptureRequest
	// ReleaseService is the service object of a release request.
	ReleaseService holds.ReleaseRequest
	// CreditService is the service object of a credit-account request.
	CreditService ledger.CreditRequest
)

// The wire shapes: the fields of the typed requests, in their order, with
// the claim names of authorizeNames, captureNames, releaseNames and
// creditNames. The conversions below fail to compile when a request's
// fields change and these do not.
type (
	authorizeWire struct {
		PayoutID       string       `json:"payoutID"`
		ProviderID     string       `json:"providerID"`
		ExternalID     string       `json:"externalID"`
		FundingSource  string       `json:"fundingSource"`
		Amount         ledger.Money `json:"amount"`
		FraudScore     float64      `json:"fraudScore"`
		IdempotencyKey string       `json:"idempotencyKey"`
		CallerSubject  string       `json:"callerSubject,omitempty"`
		RequestID      string       `json:"requestID,omitempty"`
	}
	captureWire struct {
		PayoutID       string `json:"payoutID"`
		ProviderID     string `json:"providerID"`
		HoldReference  string `json:"holdReference"`
		IdempotencyKey string `json:"idempotencyKey"`
	}
	releaseWire struct {
		HoldReference  string `json:"holdReference"`
		IdempotencyKey string `json:"idempotencyKey"`
		PayoutID       string `json:"payoutID,omitempty"`
		ProviderID     string `json:"providerID,omitempty"`
		Reason         string `json:"reason,omitempty"`
	}
	creditWire struct {
		ProviderID          string       `json:"providerID"`
		IdempotencyKey      string       `json:"idempotencyKey"`
		RequesterExternalID string       `json:"requesterExternalID"`
		FundingDestination  string       `json:"fundingDestination"`
		Amount              ledger.Money `json:"amount"`
		RequestID           string       `json:"requestID"`
	}
)

// MarshalJSON writes the service object of the authorize request.
func (s AuthorizeService) MarshalJSON() ([]byte, error) { return json.Marshal(authorizeWire(s)) }

// MarshalJSON writes the service object of the capture request.
func (s CaptureService) MarshalJSON() ([]byte, error) { return json.Marshal(captureWire(s)) }

// MarshalJSON writes the service object of the release request.
func (s ReleaseService) MarshalJSON() ([]byte, error) { return json.Marshal(releaseWire(s)) }

// MarshalJSON writes the service object of the credit-account request.
func (s CreditService) MarshalJSON() ([]byte, error) { return json.Marshal(creditWire(s)) }
