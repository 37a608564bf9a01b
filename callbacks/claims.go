package callbacks

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/internal/strictjson"
	"github.com/provider-ledger/adapter/ledger"
)

// request is one callback's business claims, parsed: what the log line
// names, what the answer echoes, and the statement that decides it.
type request interface {
	subject() string  // payoutID or requestID, for the log line
	provider() string // providerID, "" when not given
	key() string      // idempotencyKey
	execute(ctx context.Context, s *Handler, keyFP string, now time.Time) (ledger.Answer, error)
}

// parse reads the endpoint's business claims; errors are collected in f.
func parse(endpoint string, f *fields) request {
	switch endpoint {
	case Authorize:
		return parseAuthorize(f)
	case Capture:
		return parseCapture(f)
	case Release:
		return parseRelease(f)
	}
	return parseCredit(f)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// maxClaimLen bounds every string claim; longer is malformed.
const maxClaimLen = 1024

// fields reads the claims of the service object, collecting one error per
// malformed or missing field with a JSON Pointer into the claims.
type fields struct {
	members []member
	errs    []problem.FieldError
}

// member is one member of the service object: its name, unquoted, and its
// raw value.
type member struct {
	name string
	raw  json.RawMessage
}

// newFields reads the top-level members of the service object, which
// envelope.ParseClaims has checked: valid JSON, its strings exact and no
// member named twice, so the members are what the sender wrote.
func newFields(service json.RawMessage) (*fields, error) {
	f := &fields{members: make([]member, 0, 12)}
	err := envelope.EachMember(service, func(name, value []byte) error {
		n, ok := envelope.Unquote(name)
		if !ok {
			return errors.New("inexact member name")
		}
		f.members = append(f.members, member{name: string(n), raw: value})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the service claim is not a JSON object")
	}
	return f, nil
}

// get returns the raw value of the member name.
func (f *fields) get(name string) (json.RawMessage, bool) {
	for _, m := range f.members {
		if m.name == name {
			return m.raw, true
		}
	}
	return nil, false
}

func (f *fields) fail(name, detail string) {
	f.errs = append(f.errs, problem.FieldError{Pointer: "/service/" + name, Detail: detail})
}

// str returns a string claim. Missing or null is "" (an error when
// required); another JSON type, an empty or an over-long string is an error.
func (f *fields) str(name string, required bool) string {
	raw, ok := f.get(name)
	if !ok || string(raw) == "null" {
		if required {
			f.fail(name, name+" is required")
		}
		return ""
	}
	// Decoded exactly, never with encoding/json's silent U+FFFD for a lone
	// surrogate escape or a byte that is not UTF-8: "p-\ud800" and
	// "p-\udc00" are two payouts, or none. (ParseClaims refused such
	// strings already; this keeps the field decoder exact on its own.)
	s, err := strictjson.Unquote(raw)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && se.Reason != strictjson.Syntax {
			f.fail(name, name+" must be exact text: "+se.Reason.Detail())
		} else {
			f.fail(name, name+" must be a string")
		}
		return ""
	}
	if s == "" && required {
		f.fail(name, name+" must not be empty")
	}
	if len(s) > maxClaimLen {
		f.fail(name, fmt.Sprintf("%s is longer than %d bytes", name, maxClaimLen))
		return ""
	}
	if strings.IndexByte(s, 0) >= 0 {
		// Postgres text cannot hold NUL: the request could never succeed.
		f.fail(name, name+" must not contain NUL characters")
		return ""
	}
	return s
}

// money returns a Money claim validated as design 2.2 says.
func (f *fields) money(name string) ledger.Money {
	raw, ok := f.get(name)
	if !ok || string(raw) == "null" {
		f.fail(name, name+" is required")
		return ledger.Money{}
	}
	var m ledger.Money
	// Called directly, not through json.Unmarshal: the claims were checked
	// already, and UnmarshalJSON checks its input on its own.
	if err := m.UnmarshalJSON(raw); err != nil {
		if me, ok := err.(*ledger.MoneyError); ok {
			f.errs = append(f.errs, problem.FieldError{Pointer: "/service/" + name + me.Pointer, Detail: me.Detail})
		} else {
			f.fail(name, name+" must be a Money object")
		}
	}
	return m
}

// number returns a JSON number claim as a float64.
func (f *fields) number(name string) float64 {
	raw, ok := f.get(name)
	if !ok || string(raw) == "null" {
		f.fail(name, name+" is required")
		return 0
	}
	if len(raw) == 0 || raw[0] == '"' {
		f.fail(name, name+" must be a number")
		return 0
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		f.fail(name, name+" must be a number")
		return 0
	}
	return v
}

// fingerprint hashes an endpoint's canonical business claims: each part
// length-prefixed, so that no two different claim sets hash alike.
func fingerprint(endpoint string, parts ...string) []byte {
	h := sha256.New()
	var n [4]byte
	for _, p := range append([]string{endpoint}, parts...) {
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

func moneyParts(m ledger.Money) (string, string) {
	return m.Currency, ledger.FormatAmount(m.Currency, m.Value)
}

// authorizeClaims are the business claims of an authorize request.
type authorizeClaims struct {
	PayoutID, ProviderID, ExternalID, FundingSource, IdempotencyKey string
	Amount                                                          ledger.Money
	FraudScore                                                      float64
	CallerSubject, RequestID                                        string // audit only
}

func parseAuthorize(f *fields) authorizeClaims {
	c := authorizeClaims{
		PayoutID:       f.str("payoutID", true),
		ProviderID:     f.str("providerID", true),
		ExternalID:     f.str("externalID", true),
		FundingSource:  f.str("fundingSource", true),
		Amount:         f.money("amount"),
		FraudScore:     f.number("fraudScore"),
		IdempotencyKey: f.str("idempotencyKey", true),
		CallerSubject:  f.str("callerSubject", false),
		RequestID:      f.str("requestID", false),
	}
	return c
}

func (c authorizeClaims) subject() string  { return c.PayoutID }
func (c authorizeClaims) provider() string { return c.ProviderID }
func (c authorizeClaims) key() string      { return c.IdempotencyKey }

func (c authorizeClaims) execute(ctx context.Context, s *Handler, keyFP string, now time.Time) (ledger.Answer, error) {
	return s.db.Authorize(ctx, holds.AuthorizeParams{Key: c.IdempotencyKey, Fingerprint: c.fingerprint(), KeyFingerprint: keyFP,
		CallerSubject: optional(c.CallerSubject), AuditRequestID: optional(c.RequestID), Now: now,
		PayoutID: c.PayoutID, ExternalID: c.ExternalID, FundingSource: c.FundingSource,
		Currency: c.Amount.Currency, Amount: c.Amount.Value, FraudScore: c.FraudScore,
		FraudDeny: *s.cfg.FraudDeny, FraudStepUp: *s.cfg.FraudStepUp, HoldReference: ledger.NewReference("hold_")})
}

func (c authorizeClaims) fingerprint() []byte {
	cur, val := moneyParts(c.Amount)
	score := c.FraudScore
	if score == 0 {
		score = 0 // -0 is the same score as 0
	}
	return fingerprint("authorize", c.PayoutID, c.ProviderID, c.ExternalID, c.FundingSource, cur, val,
		strconv.FormatFloat(score, 'g', -1, 64), c.IdempotencyKey)
}

// captureClaims are the business claims of a capture request.
type captureClaims struct {
	PayoutID, ProviderID, HoldReference, IdempotencyKey string
}

func parseCapture(f *fields) captureClaims {
	return captureClaims{
		PayoutID:       f.str("payoutID", true),
		ProviderID:     f.str("providerID", true),
		HoldReference:  f.str("holdReference", true),
		IdempotencyKey: f.str("idempotencyKey", true),
	}
}

func (c captureClaims) subject() string  { return c.PayoutID }
func (c captureClaims) provider() string { return c.ProviderID }
func (c captureClaims) key() string      { return c.IdempotencyKey }

func (c captureClaims) execute(ctx context.Context, s *Handler, keyFP string, now time.Time) (ledger.Answer, error) {
	return s.db.Capture(ctx, holds.CaptureParams{Key: c.IdempotencyKey, Fingerprint: c.fingerprint(), KeyFingerprint: keyFP,
		Now: now, PayoutID: c.PayoutID, HoldReference: c.HoldReference, CaptureReference: ledger.NewReference("cap_"),
		TransactionID: ledger.NewTransactionID()})
}

func (c captureClaims) fingerprint() []byte {
	return fingerprint("capture", c.PayoutID, c.ProviderID, c.HoldReference, c.IdempotencyKey)
}

// releaseClaims are the claims of a release request (design 2.5: ours,
// parsed tolerantly: payoutID, providerID and reason are optional).
type releaseClaims struct {
	HoldReference, IdempotencyKey, PayoutID, ProviderID, Reason string
}

func parseRelease(f *fields) releaseClaims {
	return releaseClaims{
		HoldReference:  f.str("holdReference", true),
		IdempotencyKey: f.str("idempotencyKey", true),
		PayoutID:       f.str("payoutID", false),
		ProviderID:     f.str("providerID", false),
		Reason:         f.str("reason", false),
	}
}

func (c releaseClaims) subject() string  { return c.PayoutID }
func (c releaseClaims) provider() string { return c.ProviderID }
func (c releaseClaims) key() string      { return c.IdempotencyKey }

func (c releaseClaims) execute(ctx context.Context, s *Handler, keyFP string, now time.Time) (ledger.Answer, error) {
	return s.db.Release(ctx, holds.ReleaseParams{Key: c.IdempotencyKey, Fingerprint: c.fingerprint(), KeyFingerprint: keyFP,
		Now: now, PayoutID: optional(c.PayoutID), HoldReference: c.HoldReference, Reason: optional(c.Reason),
		ReleaseReference: ledger.NewReference("rel_")})
}

// fingerprint leaves providerID out: it is optional on release, and when
// present it can only be this provider's (another is refused with 403), so
// sending it or not is the same request.
func (c releaseClaims) fingerprint() []byte {
	return fingerprint("release", c.HoldReference, c.IdempotencyKey, c.PayoutID, c.Reason)
}

// creditClaims are the business claims of a credit-account request.
type creditClaims struct {
	ProviderID, IdempotencyKey, RequesterExternalID, FundingDestination, RequestID string
	Amount                                                                         ledger.Money
}

func parseCredit(f *fields) creditClaims {
	return creditClaims{
		ProviderID:          f.str("providerID", true),
		IdempotencyKey:      f.str("idempotencyKey", true),
		RequesterExternalID: f.str("requesterExternalID", true),
		FundingDestination:  f.str("fundingDestination", true),
		Amount:              f.money("amount"),
		RequestID:           f.str("requestID", true),
	}
}

func (c creditClaims) subject() string  { return c.RequestID }
func (c creditClaims) provider() string { return c.ProviderID }
func (c creditClaims) key() string      { return c.IdempotencyKey }

func (c creditClaims) execute(ctx context.Context, s *Handler, keyFP string, now time.Time) (ledger.Answer, error) {
	return s.db.Credit(ctx, ledger.CreditParams{Key: c.IdempotencyKey, Fingerprint: c.fingerprint(), KeyFingerprint: keyFP,
		Now: now, RequestID: c.RequestID, Destination: c.FundingDestination, Requester: c.RequesterExternalID,
		Currency: c.Amount.Currency, Amount: c.Amount.Value, Max: s.cfg.CreditMax,
		CreditReference: ledger.NewReference("cred_"), TransactionID: ledger.NewTransactionID()})
}

func (c creditClaims) fingerprint() []byte {
	cur, val := moneyParts(c.Amount)
	return fingerprint("credit-account", c.ProviderID, c.IdempotencyKey, c.RequesterExternalID,
		c.FundingDestination, cur, val, c.RequestID)
}
