package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// AccountsService is /v1/accounts.
type AccountsService service

// Create creates an account: POST /v1/accounts (201; ErrAccountIDConfusable
// when the ID prints like an existing account's; ErrAccountExists when
// the accountID is taken).
func (s *AccountsService) Create(ctx context.Context, req *AccountCreateRequest) (*Account, *Response, error) {
	a := new(Account)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/accounts", req, a)
	if err != nil {
		return nil, resp, err
	}
	return a, resp, nil
}

// Get reads an account: GET /v1/accounts/{accountID}.
func (s *AccountsService) Get(ctx context.Context, accountID string) (*Account, *Response, error) {
	a := new(Account)
	resp, err := s.client.call(ctx, http.MethodGet, "v1/accounts/"+url.PathEscape(accountID), nil, a)
	if err != nil {
		return nil, resp, err
	}
	return a, resp, nil
}

// Update changes an account's status: PATCH /v1/accounts/{accountID}.
// Closing is final (ErrAccountClosed afterwards).
func (s *AccountsService) Update(ctx context.Context, accountID string, req *AccountUpdateRequest) (*Account, *Response, error) {
	a := new(Account)
	resp, err := s.client.call(ctx, http.MethodPatch, "v1/accounts/"+url.PathEscape(accountID), req, a)
	if err != nil {
		return nil, resp, err
	}
	return a, resp, nil
}

// Adjust moves the account's balance by a signed amount: POST
// /v1/accounts/{accountID}/adjustments (201, also on a replay of the key).
// An amount over the server's approval threshold waits for another
// actor's approval (202): then the Adjustment holds only Pending, and no
// money moved yet.
func (s *AccountsService) Adjust(ctx context.Context, accountID string, req *AdjustmentRequest) (*Adjustment, *Response, error) {
	var raw json.RawMessage
	resp, err := s.client.call(ctx, http.MethodPost, "v1/accounts/"+url.PathEscape(accountID)+"/adjustments", req, &raw)
	if err != nil {
		return nil, resp, err
	}
	adj := new(Adjustment)
	if resp.StatusCode == http.StatusAccepted {
		adj.Pending = new(PendingAdjustment)
		err = json.Unmarshal(raw, adj.Pending)
	} else {
		err = json.Unmarshal(raw, adj)
	}
	if err != nil {
		return nil, resp, fmt.Errorf("adminapi: decoding the answer of POST %s: %w", resp.Request.URL.Path, err)
	}
	return adj, resp, nil
}

// InstrumentsService is /v1/instruments.
type InstrumentsService service

// Add maps a token to an account: POST /v1/instruments (201 added, 200 the
// same mapping existed; ErrInstrumentConflict when the token maps
// otherwise).
func (s *InstrumentsService) Add(ctx context.Context, in *Instrument) (*Instrument, *Response, error) {
	out := new(Instrument)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/instruments", in, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// HoldsService is /v1/holds.
type HoldsService service

// Get reads a hold: GET /v1/holds/{holdReference}.
func (s *HoldsService) Get(ctx context.Context, holdReference string) (*Hold, *Response, error) {
	h := new(Hold)
	resp, err := s.client.call(ctx, http.MethodGet, "v1/holds/"+url.PathEscape(holdReference), nil, h)
	if err != nil {
		return nil, resp, err
	}
	return h, resp, nil
}

// List reads one page of holds, newest first: GET /v1/holds. The
// Response's NextCursor and HasMore say how to get the next page.
func (s *HoldsService) List(ctx context.Context, opts *HoldListOptions) (*HoldList, *Response, error) {
	q := url.Values{}
	if opts != nil {
		for k, v := range map[string]string{"payoutID": opts.PayoutID, "accountID": opts.AccountID, "status": opts.Status, "cursor": opts.Cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if opts.Limit != 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
	}
	path := "v1/holds"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	page := new(HoldList)
	resp, err := s.client.call(ctx, http.MethodGet, path, nil, page)
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	return page, resp, nil
}

// errNoCursor: a page said it has more but gave no cursor to get it.
var errNoCursor = errors.New("adminapi: GET /v1/holds answered hasMore without nextCursor")

// ListIter yields every hold from opts.Cursor on, following the pages. On
// an error it yields (nil, err) and stops.
func (s *HoldsService) ListIter(ctx context.Context, opts *HoldListOptions) iter.Seq2[*Hold, error] {
	return func(yield func(*Hold, error) bool) {
		o := HoldListOptions{}
		if opts != nil {
			o = *opts
		}
		for {
			page, _, err := s.List(ctx, &o)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Holds {
				if !yield(&page.Holds[i], nil) {
					return
				}
			}
			if !page.HasMore {
				return
			}
			if page.NextCursor == "" {
				yield(nil, errNoCursor)
				return
			}
			o.Cursor = page.NextCursor
		}
	}
}

// SigningSecretsService is /v1/signing-secrets: the keyring that opens the
// callbacks.
type SigningSecretsService service

// List lists every secret, active and retired, newest first.
func (s *SigningSecretsService) List(ctx context.Context) (*SigningSecretList, *Response, error) {
	l := new(SigningSecretList)
	resp, err := s.client.call(ctx, http.MethodGet, "v1/signing-secrets", nil, l)
	if err != nil {
		return nil, resp, err
	}
	return l, resp, nil
}

// Create adds a secret (req.Secret) or has the server generate one
// (req.Generate): POST /v1/signing-secrets. A generated secret is in the
// answer and nowhere else.
func (s *SigningSecretsService) Create(ctx context.Context, req *SigningSecretRequest) (*SigningSecretCreated, *Response, error) {
	out := new(SigningSecretCreated)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/signing-secrets", req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// Retire stops a secret opening callbacks: DELETE
// /v1/signing-secrets/{secretID} (204; retiring a retired secret too).
func (s *SigningSecretsService) Retire(ctx context.Context, secretID string) (*Response, error) {
	return s.client.call(ctx, http.MethodDelete, "v1/signing-secrets/"+url.PathEscape(secretID), nil, nil)
}

// Rekey re-encrypts every active secret under the answering replica's
// current KEK: POST /v1/keyring/rekey (200). Call it on a replica given
// both KEKs (LEDGER_KEK and LEDGER_KEK_PREVIOUS); it is idempotent and safe
// on several replicas at once. req may be nil. ErrKEKMismatch: the
// replica's current KEK is not req.KEKFingerprint.
func (s *SigningSecretsService) Rekey(ctx context.Context, req *KeyringRekeyRequest) (*KeyringRekey, *Response, error) {
	if req == nil {
		req = &KeyringRekeyRequest{}
	}
	out := new(KeyringRekey)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/keyring/rekey", req, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}

// ReconciliationService is /v1/reconciliation.
type ReconciliationService service

// Run runs one reconciliation and returns its report: POST
// /v1/reconciliation/runs (201). The run may take minutes; it goes on in
// ledgerd if ctx ends first. ErrNoRoute: this ledgerd does not reconcile.
func (s *ReconciliationService) Run(ctx context.Context, req *ReconciliationRunRequest) (*ReconciliationRun, *Response, error) {
	if req == nil {
		req = &ReconciliationRunRequest{}
	}
	run := new(ReconciliationRun)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/reconciliation/runs", req, run)
	if err != nil {
		return nil, resp, err
	}
	return run, resp, nil
}

// Acknowledge acknowledges a finding by its findingID with a note: POST
// /v1/reconciliation/findings/{findingID}/acknowledgement (200). Later runs
// report it acknowledged, and it no longer counts towards their status,
// until it is resolved.
func (s *ReconciliationService) Acknowledge(ctx context.Context, findingID, note string) (*AcknowledgedFinding, *Response, error) {
	out := new(AcknowledgedFinding)
	resp, err := s.client.call(ctx, http.MethodPost, "v1/reconciliation/findings/"+url.PathEscape(findingID)+"/acknowledgement",
		&AcknowledgementRequest{Note: note}, out)
	if err != nil {
		return nil, resp, err
	}
	return out, resp, nil
}
