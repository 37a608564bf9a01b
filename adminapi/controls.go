package adminapi

import (
	"context"
	"encoding/hex"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/provider-ledger/adapter/ledger"
)

// The bank's controls: named tokens with scopes, the audit trail, and
// dual control of large adjustments.

// The scopes a token may hold (docs/admin-api.md says which routes each
// opens).
const (
	ScopeRead    = ledger.ScopeRead
	ScopeOperate = ledger.ScopeOperate
	ScopeAdjust  = ledger.ScopeAdjust
	ScopeApprove = ledger.ScopeApprove
	ScopeSecrets = ledger.ScopeSecrets
	ScopeAdmin   = ledger.ScopeAdmin
	ScopeAudit   = ledger.ScopeAudit
	ScopeMetrics = ledger.ScopeMetrics
)

// TokenCreateRequest is the body of POST /v1/tokens.
type TokenCreateRequest struct {
	// Name names the actor in the audit trail: 1 to 64 letters, digits,
	// '.', '_', '@' or '-'; one live token per name.
	Name string `json:"name"`
	// Scopes are one or more of the Scope… constants.
	Scopes []string `json:"scopes"`
	// ExpiresOn, when set, is when the token stops working.
	ExpiresOn *time.Time `json:"expiresOn,omitempty"`
}

// Token describes an admin token, never its value.
type Token struct {
	TokenID   string     `json:"tokenID"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	CreatedOn time.Time  `json:"createdOn"`
	CreatedBy string     `json:"createdBy"` // the token ID of its creator (or break-glass, anonymous)
	ExpiresOn *time.Time `json:"expiresOn"` // null: no expiry
	RevokedOn *time.Time `json:"revokedOn"` // null while live
}

// TokenCreated is the answer of POST /v1/tokens: the only place the token
// appears. Store it as a secret.
type TokenCreated struct {
	TokenID   string     `json:"tokenID"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	Token     string     `json:"token"`
	CreatedOn time.Time  `json:"createdOn"`
	ExpiresOn *time.Time `json:"expiresOn"`
}

// TokenList is the answer of GET /v1/tokens, newest first.
type TokenList struct {
	Tokens []Token `json:"tokens"`
}

// AuditRecord is one record of the audit trail. PrevHash and Hash are
// hex; VerifyAuditChain checks a sequence of them offline.
type AuditRecord struct {
	Seq        int64     `json:"seq"`
	RecordedAt Timestamp `json:"recordedAt"`
	ActorID    string    `json:"actorID"`
	ActorName  string    `json:"actorName"`
	Scope      string    `json:"scope"`
	Method     string    `json:"method"`
	Route      string    `json:"route"`
	Target     string    `json:"target"`
	Status     int       `json:"status"`
	// BodyDigest is the hex SHA-256 of the request body; null without a
	// body; "redacted" for a body that carries a secret.
	BodyDigest *string `json:"bodyDigest"`
	Source     string  `json:"source"`
	PrevHash   string  `json:"prevHash"`
	Hash       string  `json:"hash"`
}

// Ledger returns the record as package ledger hashes it.
func (r AuditRecord) Ledger() (ledger.AuditRecord, error) {
	prev, err := hex.DecodeString(r.PrevHash)
	if err != nil {
		return ledger.AuditRecord{}, fmt.Errorf("audit record %d: prevHash is not hex", r.Seq)
	}
	hash, err := hex.DecodeString(r.Hash)
	if err != nil {
		return ledger.AuditRecord{}, fmt.Errorf("audit record %d: hash is not hex", r.Seq)
	}
	out := ledger.AuditRecord{Seq: r.Seq, RecordedAt: r.RecordedAt.Time, ActorID: r.ActorID, ActorName: r.ActorName, Scope: r.Scope,
		Method: r.Method, Route: r.Route, Target: r.Target, Status: r.Status, Source: r.Source, PrevHash: prev, Hash: hash}
	if r.BodyDigest != nil {
		out.BodyDigest = *r.BodyDigest
	}
	return out, nil
}

// VerifyAuditChain checks records (in order, as GET /v1/audit or an
// export gives them) offline: see ledger.VerifyAuditChain. The first
// record's prevHash is the hash of the record before it, to compare with
// the last hash of the previous export.
func VerifyAuditChain(records []AuditRecord) error {
	out := make([]ledger.AuditRecord, len(records))
	for i, r := range records {
		var err error
		if out[i], err = r.Ledger(); err != nil {
			return err
		}
	}
	return ledger.VerifyAuditChain(out)
}

// AuditList is one page of GET /v1/audit, oldest first.
type AuditList struct {
	Records    []AuditRecord `json:"records"`
	NextCursor string        `json:"nextCursor,omitempty"`
	HasMore    bool          `json:"hasMore"`
}

// AuditListOptions are the query of GET /v1/audit.
type AuditListOptions struct {
	Actor    string    // a token ID or name
	From, To time.Time // recordedAt in [From, To); zero: open
	Cursor   string
	Limit    int // 1 to 100; 0: the server's default
}

// Statuses of an adjustment under dual control.
const (
	AdjustmentPending  = ledger.AdjustmentPending
	AdjustmentPosted   = ledger.AdjustmentPosted
	AdjustmentRejected = ledger.AdjustmentRejected
	AdjustmentExpired  = ledger.AdjustmentExpired
)

// ActorRef names an actor: a token's ID and name.
type ActorRef struct {
	TokenID string `json:"tokenID"`
	Name    string `json:"name"`
}

// PendingAdjustment is an adjustment under dual control (the 202 answer
// of an adjustment over the approval threshold, and GET
// /v1/adjustments/{adjustmentID}), in any of its states.
type PendingAdjustment struct {
	AdjustmentID   string    `json:"adjustmentID"`
	Status         string    `json:"status"` // AdjustmentPending, …Posted, …Rejected, …Expired
	AccountID      string    `json:"accountID"`
	Amount         Amount    `json:"amount"`
	Currency       string    `json:"currency"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Memo           string    `json:"memo"`
	RequestedBy    ActorRef  `json:"requestedBy"`
	RequestedAt    Timestamp `json:"requestedAt"`
	ExpiresAt      Timestamp `json:"expiresAt"`
	// DecidedBy and DecidedAt: who posted or rejected it, and when.
	DecidedBy *ActorRef  `json:"decidedBy,omitempty"`
	DecidedAt *Timestamp `json:"decidedAt,omitempty"`
	Note      string     `json:"note,omitempty"`
	// TransactionID is the journal transaction of a posted adjustment.
	TransactionID string `json:"transactionID,omitempty"`
}

// PendingAdjustmentList is one page of GET /v1/adjustments, newest first.
type PendingAdjustmentList struct {
	Adjustments []PendingAdjustment `json:"adjustments"`
	NextCursor  string              `json:"nextCursor,omitempty"`
	HasMore     bool                `json:"hasMore"`
}

// PendingAdjustmentListOptions are the query of GET /v1/adjustments.
type PendingAdjustmentListOptions struct {
	AccountID string
	Status    string // one of the Adjustment… states; "" any
	Cursor    string
	Limit     int
}

// AdjustmentDecisionRequest is the body of an approval or a rejection.
type AdjustmentDecisionRequest struct {
	// Note, optional, says why (at most 1024 characters).
	Note string `json:"note,omitempty"`
}

// TokensService is /v1/tokens: named admin tokens (scope admin).
type TokensService service

// Create creates a token: POST /v1/tokens (201). The answer is the only
// place the token appears.
func (s *TokensService) Create(ctx context.Context, req *TokenCreateRequest) (*TokenCreated, *Response, error) {
	out := new(TokenCreated)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/tokens", req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// List lists every token, live and revoked, newest first: GET /v1/tokens.
func (s *TokensService) List(ctx context.Context) (*TokenList, *Response, error) {
	out := new(TokenList)
	resp, err := s.client.call(ctx, http.MethodGet, "v1/tokens", nil, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Revoke revokes a token: DELETE /v1/tokens/{tokenID} (204; a revoked
// token too). Every replica refuses it from its next request on.
func (s *TokensService) Revoke(ctx context.Context, tokenID string) (*Response, error) {
	return s.client.call(ctx, http.MethodDelete, "v1/tokens/"+url.PathEscape(tokenID), nil, nil)
}

// AuditService is /v1/audit: the audit trail (scope audit).
type AuditService service

// List reads one page of the audit trail, oldest first: GET /v1/audit.
func (s *AuditService) List(ctx context.Context, opts *AuditListOptions) (*AuditList, *Response, error) {
	q := url.Values{}
	if opts != nil {
		setAll(q, "actor", opts.Actor, "cursor", opts.Cursor)
		setTime(q, "from", opts.From)
		setTime(q, "to", opts.To)
		setLimit(q, opts.Limit)
	}
	page := new(AuditList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/audit", q), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// ListIter yields every record from opts.Cursor on, following the pages.
// On an error it yields (nil, err) and stops.
func (s *AuditService) ListIter(ctx context.Context, opts *AuditListOptions) iter.Seq2[*AuditRecord, error] {
	o := AuditListOptions{}
	if opts != nil {
		o = *opts
	}
	return pages(func(cursor string) ([]AuditRecord, string, bool, error) {
		o.Cursor = cursor
		p, _, err := s.List(ctx, &o)
		if err != nil {
			return nil, "", false, err
		}
		return p.Records, p.NextCursor, p.HasMore, nil
	}, o.Cursor, "GET /v1/audit")
}

// AdjustmentsService is /v1/adjustments: adjustments under dual control.
type AdjustmentsService service

// Get reads one: GET /v1/adjustments/{adjustmentID}.
func (s *AdjustmentsService) Get(ctx context.Context, adjustmentID string) (*PendingAdjustment, *Response, error) {
	out := new(PendingAdjustment)
	resp, err := s.client.call(ctx, http.MethodGet, "v1/adjustments/"+url.PathEscape(adjustmentID), nil, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// List reads one page, newest first: GET /v1/adjustments.
func (s *AdjustmentsService) List(ctx context.Context, opts *PendingAdjustmentListOptions) (*PendingAdjustmentList, *Response, error) {
	q := url.Values{}
	if opts != nil {
		setAll(q, "accountID", opts.AccountID, "status", opts.Status, "cursor", opts.Cursor)
		setLimit(q, opts.Limit)
	}
	page := new(PendingAdjustmentList)
	resp, err := s.client.call(ctx, http.MethodGet, withQuery("v1/adjustments", q), nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// ListIter yields every adjustment from opts.Cursor on, following the
// pages. On an error it yields (nil, err) and stops.
func (s *AdjustmentsService) ListIter(ctx context.Context, opts *PendingAdjustmentListOptions) iter.Seq2[*PendingAdjustment, error] {
	o := PendingAdjustmentListOptions{}
	if opts != nil {
		o = *opts
	}
	return pages(func(cursor string) ([]PendingAdjustment, string, bool, error) {
		o.Cursor = cursor
		p, _, err := s.List(ctx, &o)
		if err != nil {
			return nil, "", false, err
		}
		return p.Adjustments, p.NextCursor, p.HasMore, nil
	}, o.Cursor, "GET /v1/adjustments")
}

// Approve approves and posts one (scope approve): POST
// /v1/adjustments/{adjustmentID}/approval (201 posted now, 200 posted
// before). ErrMakerCannotApprove when the caller is its maker.
func (s *AdjustmentsService) Approve(ctx context.Context, adjustmentID string, req *AdjustmentDecisionRequest) (*PendingAdjustment, *Response, error) {
	return s.decide(ctx, adjustmentID, "approval", req)
}

// Reject rejects one (scope approve; its maker may withdraw it): POST
// /v1/adjustments/{adjustmentID}/rejection (200).
func (s *AdjustmentsService) Reject(ctx context.Context, adjustmentID string, req *AdjustmentDecisionRequest) (*PendingAdjustment, *Response, error) {
	return s.decide(ctx, adjustmentID, "rejection", req)
}

func (s *AdjustmentsService) decide(ctx context.Context, adjustmentID, what string, req *AdjustmentDecisionRequest) (*PendingAdjustment, *Response, error) {
	if req == nil {
		req = &AdjustmentDecisionRequest{}
	}
	out := new(PendingAdjustment)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/adjustments/"+url.PathEscape(adjustmentID)+"/"+what, req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
