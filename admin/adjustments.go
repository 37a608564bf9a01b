package admin

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
)

// registerDualControl adds adjustments and their dual control:
//
//	POST /v1/accounts/:accountID/adjustments       {amount, idempotencyKey, memo}  201 Adjustment (applied);
//	                                               202 PendingAdjustment (over the approval threshold: no money moved)
//	GET  /v1/adjustments                           ?accountID=&status=&cursor=&limit=  200 {adjustments, nextCursor, hasMore}
//	GET  /v1/adjustments/:adjustmentID             200 PendingAdjustment
//	POST /v1/adjustments/:adjustmentID/approval    {note?}  201 posted now, 200 posted before; 403 its maker
//	POST /v1/adjustments/:adjustmentID/rejection   {note?}  200
//
// ledger_adjustment_decide decides every state (docs/admin-api.md).
func (s *Handler) registerDualControl() {
	s.handle(http.MethodPost, "/v1/accounts/:accountID/adjustments", s.adjust)
	s.handle(http.MethodGet, "/v1/adjustments", s.listPending)
	s.handle(http.MethodGet, "/v1/adjustments/:adjustmentID", s.getPending)
	s.handle(http.MethodPost, "/v1/adjustments/:adjustmentID/approval", s.decideAdjustment(true))
	s.handle(http.MethodPost, "/v1/adjustments/:adjustmentID/rejection", s.decideAdjustment(false))
}

func (s *Handler) adjust(r *http.Request, ps httprouter.Params) (int, any, error) {
	var body adminapi.AdjustmentRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	if body.Amount == nil {
		return 0, nil, ledger.Invalid("/amount", "amount is required")
	}
	a, err := s.cfg.DB.GetAccount(r.Context(), ps.ByName("accountID"))
	if err != nil {
		return 0, nil, err
	}
	amount, err := ledger.ParseAmount(a.Currency, string(*body.Amount), true)
	if err != nil {
		return 0, nil, ledger.Invalid("/amount", "amount: %v", err)
	}
	out, err := s.cfg.DB.RequestAdjustment(r.Context(), ledger.AdjustmentParams{AccountID: a.AccountID, Amount: amount,
		Key: body.IdempotencyKey, Memo: body.Memo, ApprovalOver: s.cfg.ApprovalOver, TTL: s.cfg.ApprovalTTL,
		Actor: actorOf(r), Now: s.cfg.Now()})
	if err != nil {
		return 0, nil, err
	}
	if p := out.Pending; p != nil {
		setTarget(r, "adjustmentID", p.AdjustmentID)
		return http.StatusAccepted, viewPending(*p), nil
	}
	adj := out.Applied
	setTarget(r, "transactionID", adj.TransactionID)
	return http.StatusCreated, adminapi.Adjustment{
		TransactionID: adj.TransactionID,
		Balance:       wireAmount(a.Currency, adj.Balance),
		Held:          wireAmount(a.Currency, adj.Held),
		Available:     wireAmount(a.Currency, adj.Available),
	}, nil
}

// decideAdjustment is the approval (approve) or the rejection of an
// adjustment under dual control: 201 when an approval posts it now, 200
// for an approval that finds it posted and for a rejection.
func (s *Handler) decideAdjustment(approve bool) handlerFunc {
	return func(r *http.Request, ps httprouter.Params) (int, any, error) {
		var body adminapi.AdjustmentDecisionRequest
		if err := decodeBody(r, &body); err != nil {
			return 0, nil, err
		}
		if n := len([]rune(body.Note)); n > 1024 || (n > 0 && strings.TrimSpace(body.Note) == "") {
			return 0, nil, ledger.Invalid("/note", "note must be at most 1024 characters, not only white space")
		}
		p, err := s.cfg.DB.DecideAdjustment(r.Context(), ledger.AdjustmentDecision{AdjustmentID: ps.ByName("adjustmentID"),
			Approve: approve, Note: body.Note, Actor: actorOf(r), Now: s.cfg.Now()})
		if err != nil {
			return 0, nil, err
		}
		status := http.StatusOK
		if approve && !p.Replayed {
			status = http.StatusCreated
		}
		if p.TransactionID != "" {
			setTarget(r, "transactionID", p.TransactionID)
		}
		return status, viewPending(p), nil
	}
}

func (s *Handler) getPending(r *http.Request, ps httprouter.Params) (int, any, error) {
	p, err := s.cfg.DB.GetPendingAdjustment(r.Context(), ps.ByName("adjustmentID"), s.cfg.Now())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, viewPending(p), nil
}

func (s *Handler) listPending(r *http.Request, _ httprouter.Params) (int, any, error) {
	q, err := readQuery(r, "accountID", "status", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	o := ledger.PendingListOptions{AccountID: q["accountID"], Status: q["status"], Cursor: q["cursor"], Now: s.cfg.Now()}
	if o.Limit, err = q.limit(); err != nil {
		return 0, nil, err
	}
	page, err := s.cfg.DB.ListPendingAdjustments(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.PendingAdjustmentList{Adjustments: make([]adminapi.PendingAdjustment, 0, len(page.Adjustments)),
		NextCursor: page.NextCursor, HasMore: page.HasMore}
	for _, p := range page.Adjustments {
		out.Adjustments = append(out.Adjustments, viewPending(p))
	}
	return http.StatusOK, out, nil
}

func viewPending(p ledger.PendingAdjustment) adminapi.PendingAdjustment {
	v := adminapi.PendingAdjustment{AdjustmentID: p.AdjustmentID, Status: p.Status, AccountID: p.AccountID,
		Amount: wireAmount(p.Currency, p.Amount), Currency: p.Currency, IdempotencyKey: p.IdempotencyKey, Memo: p.Memo,
		RequestedBy: adminapi.ActorRef{TokenID: p.MakerID, Name: p.MakerName},
		RequestedAt: adminapi.Timestamp{Time: p.RequestedAt}, ExpiresAt: adminapi.Timestamp{Time: p.ExpiresAt},
		Note: p.Note, TransactionID: p.TransactionID}
	if p.DecidedAt != nil {
		v.DecidedBy = &adminapi.ActorRef{TokenID: p.CheckerID, Name: p.CheckerName}
		v.DecidedAt = &adminapi.Timestamp{Time: *p.DecidedAt}
	}
	return v
}
