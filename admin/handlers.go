package admin

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

func viewAccount(a ledger.Account) adminapi.Account {
	return adminapi.Account{
		AccountID: a.AccountID, OwnerExternalID: a.OwnerExternalID, Currency: a.Currency, Status: a.Status,
		Balance:   wireAmount(a.Currency, a.Balance),
		Held:      wireAmount(a.Currency, a.Held),
		Available: wireAmount(a.Currency, a.Available),
	}
}

// wireAmount is v on the wire, with the currency's minor units.
func wireAmount(currency string, v decimal.Decimal) adminapi.Amount {
	return adminapi.Amount(ledger.FormatAmount(currency, v))
}

func (s *Handler) createAccount(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body adminapi.AccountCreateRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	setTarget(r, "accountID", body.AccountID)
	a, err := s.cfg.DB.CreateAccount(r.Context(), ledger.NewAccount{
		AccountID: body.AccountID, OwnerExternalID: body.OwnerExternalID, Currency: body.Currency, Status: body.Status})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, viewAccount(a), nil
}

func (s *Handler) getAccount(r *http.Request, ps httprouter.Params) (int, any, error) {
	a, err := s.cfg.DB.GetAccount(r.Context(), ps.ByName("accountID"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewAccount(a), nil
}

func (s *Handler) patchAccount(r *http.Request, ps httprouter.Params) (int, any, error) {
	var body adminapi.AccountUpdateRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	if body.Status == nil {
		return 0, nil, ledger.Invalid("/status", "status is required")
	}
	a, err := s.cfg.DB.SetAccountStatus(r.Context(), ps.ByName("accountID"), *body.Status)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewAccount(a), nil
}

func (s *Handler) addInstrument(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body adminapi.Instrument
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	setTarget(r, "accountID", body.AccountID)
	in, created, err := s.cfg.DB.AddInstrument(r.Context(), ledger.Instrument{Token: body.Token, Kind: body.Kind, AccountID: body.AccountID})
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, adminapi.Instrument{Token: in.Token, Kind: in.Kind, AccountID: in.AccountID}, nil
}

func viewHold(h holds.Hold) adminapi.Hold {
	v := adminapi.Hold{
		HoldReference: h.HoldReference, PayoutID: h.PayoutID, AccountID: h.AccountID, FundingSource: h.FundingSource,
		Amount: wireAmount(h.Currency, h.Amount), Currency: h.Currency, Status: h.Status,
		CaptureReference: h.CaptureReference, ReleaseReference: h.ReleaseReference, ReleaseReason: h.ReleaseReason,
		PlacedAt: adminapi.Timestamp{Time: h.PlacedAt},
	}
	if h.CapturedAt != nil {
		v.CapturedAt = &adminapi.Timestamp{Time: *h.CapturedAt}
	}
	if h.ReleasedAt != nil {
		v.ReleasedAt = &adminapi.Timestamp{Time: *h.ReleasedAt}
	}
	return v
}

func (s *Handler) getHold(r *http.Request, ps httprouter.Params) (int, any, error) {
	h, err := s.cfg.DB.GetHold(r.Context(), ps.ByName("holdReference"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewHold(h), nil
}

func (s *Handler) listHolds(r *http.Request, _ httprouter.Params) (int, any, error) {
	q, err := readQuery(r, "payoutID", "accountID", "status", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	return s.holdsPage(r, q, holds.ListOptions{AccountID: q["accountID"]})
}
