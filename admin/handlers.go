package admin

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// accountView is an account on the wire, amounts in its currency's units.
type accountView struct {
	AccountID       string `json:"accountID"`
	OwnerExternalID string `json:"ownerExternalID"`
	Currency        string `json:"currency"`
	Balance         string `json:"balance"`
	Held            string `json:"held"`
	Available       string `json:"available"`
	Status          string `json:"status"`
}

func viewAccount(a ledger.Account) accountView {
	return accountView{
		AccountID: a.AccountID, OwnerExternalID: a.OwnerExternalID, Currency: a.Currency, Status: a.Status,
		Balance:   ledger.FormatAmount(a.Currency, a.Balance),
		Held:      ledger.FormatAmount(a.Currency, a.Held),
		Available: ledger.FormatAmount(a.Currency, a.Available),
	}
}

func (s *Server) createAccount(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body struct {
		AccountID       string `json:"accountID"`
		OwnerExternalID string `json:"ownerExternalID"`
		Currency        string `json:"currency"`
		Status          string `json:"status"`
	}
	if err := Decode(r, &body); err != nil {
		return 0, nil, err
	}
	a, err := s.cfg.Ledger.CreateAccount(r.Context(), ledger.NewAccount{
		AccountID: body.AccountID, OwnerExternalID: body.OwnerExternalID, Currency: body.Currency, Status: body.Status})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, viewAccount(a), nil
}

func (s *Server) getAccount(r *http.Request, ps httprouter.Params) (int, any, error) {
	a, err := s.cfg.Ledger.GetAccount(r.Context(), ps.ByName("accountID"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewAccount(a), nil
}

func (s *Server) patchAccount(r *http.Request, ps httprouter.Params) (int, any, error) {
	var body struct {
		Status *string `json:"status"`
	}
	if err := Decode(r, &body); err != nil {
		return 0, nil, err
	}
	if body.Status == nil {
		return 0, nil, ledger.Invalid("/status", "status is required")
	}
	a, err := s.cfg.Ledger.SetStatus(r.Context(), ps.ByName("accountID"), *body.Status)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewAccount(a), nil
}

func (s *Server) adjust(r *http.Request, ps httprouter.Params) (int, any, error) {
	var body struct {
		Amount         *string `json:"amount"`
		IdempotencyKey string  `json:"idempotencyKey"`
		Memo           string  `json:"memo"`
	}
	if err := Decode(r, &body); err != nil {
		return 0, nil, err
	}
	if body.Amount == nil {
		return 0, nil, ledger.Invalid("/amount", "amount is required")
	}
	a, err := s.cfg.Ledger.GetAccount(r.Context(), ps.ByName("accountID"))
	if err != nil {
		return 0, nil, err
	}
	amount, err := ledger.ParseAmount(a.Currency, *body.Amount, true)
	if err != nil {
		return 0, nil, ledger.Invalid("/amount", "amount: %v", err)
	}
	adj, err := s.cfg.Ledger.Adjust(r.Context(), a.AccountID, amount, body.IdempotencyKey, body.Memo)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]string{
		"transactionID": adj.TransactionID.String(),
		"balance":       ledger.FormatAmount(a.Currency, adj.Balance),
		"held":          ledger.FormatAmount(a.Currency, adj.Held),
		"available":     ledger.FormatAmount(a.Currency, adj.Available),
	}, nil
}

func (s *Server) addInstrument(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body struct {
		Token     string `json:"token"`
		Kind      string `json:"kind"`
		AccountID string `json:"accountID"`
	}
	if err := Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in, created, err := s.cfg.Ledger.AddInstrument(r.Context(), ledger.Instrument{Token: body.Token, Kind: body.Kind, AccountID: body.AccountID})
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, map[string]string{"token": in.Token, "kind": in.Kind, "accountID": in.AccountID}, nil
}

// holdView is a hold on the wire.
type holdView struct {
	HoldReference    string `json:"holdReference"`
	PayoutID         string `json:"payoutID"`
	AccountID        string `json:"accountID"`
	FundingSource    string `json:"fundingSource"`
	Amount           string `json:"amount"`
	Currency         string `json:"currency"`
	Status           string `json:"status"`
	CaptureReference string `json:"captureReference,omitempty"`
	ReleaseReference string `json:"releaseReference,omitempty"`
	ReleaseReason    string `json:"releaseReason,omitempty"`
	PlacedAt         string `json:"placedAt"`
	CapturedAt       string `json:"capturedAt,omitempty"`
	ReleasedAt       string `json:"releasedAt,omitempty"`
}

func viewHold(h holds.Hold) holdView {
	v := holdView{
		HoldReference: h.HoldReference, PayoutID: h.PayoutID, AccountID: h.AccountID, FundingSource: h.FundingSource,
		Amount: ledger.FormatAmount(h.Currency, h.Amount), Currency: h.Currency, Status: h.Status,
		CaptureReference: h.CaptureReference, ReleaseReference: h.ReleaseReference, ReleaseReason: h.ReleaseReason,
		PlacedAt: h.PlacedAt.UTC().Format(timeFormat),
	}
	if h.CapturedAt != nil {
		v.CapturedAt = h.CapturedAt.UTC().Format(timeFormat)
	}
	if h.ReleasedAt != nil {
		v.ReleasedAt = h.ReleasedAt.UTC().Format(timeFormat)
	}
	return v
}

const timeFormat = "2006-01-02T15:04:05.000000Z07:00"

func (s *Server) getHold(r *http.Request, ps httprouter.Params) (int, any, error) {
	h, err := s.cfg.Holds.Get(r.Context(), ps.ByName("holdReference"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewHold(h), nil
}

func (s *Server) listHolds(r *http.Request, _ httprouter.Params) (int, any, error) {
	q, err := query(r, "payoutID", "status", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	o := holds.ListOptions{PayoutID: q["payoutID"], Status: q["status"], Cursor: q["cursor"]}
	if l := q["limit"]; l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			return 0, nil, ledger.Invalid("/limit", "limit must be an integer from 1 to 100")
		}
		o.Limit = n
	}
	p, err := s.cfg.Holds.List(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := struct {
		Holds      []holdView `json:"holds"`
		NextCursor string     `json:"nextCursor,omitempty"`
		HasMore    bool       `json:"hasMore"`
	}{Holds: make([]holdView, 0, len(p.Holds)), NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, h := range p.Holds {
		out.Holds = append(out.Holds, viewHold(h))
	}
	return http.StatusOK, out, nil
}
