package admin

import (
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
)

// registerControls adds the routes of the bank's controls that need no
// optional part: tokens (scope admin) and the audit trail (scope audit).
//
//	POST   /v1/tokens            {name, scopes, expiresOn?}  201 TokenCreated (the token, shown once); 409 a live token has the name
//	GET    /v1/tokens                                        200 {tokens: [Token…]}, newest first
//	DELETE /v1/tokens/:tokenID                               204 (a revoked token too); 404
//	GET    /v1/audit             ?actor=&from=&to=&cursor=&limit=  200 {records, nextCursor, hasMore}, oldest first
func (s *Handler) registerControls() {
	s.handle(http.MethodPost, "/v1/tokens", s.createToken)
	s.handle(http.MethodGet, "/v1/tokens", s.listTokens)
	s.handle(http.MethodDelete, "/v1/tokens/:tokenID", s.revokeToken)
	s.handle(http.MethodGet, "/v1/audit", s.listAudit)
}

// createToken makes a token of 256 random bits and stores its SHA-256
// only: the answer is the one place the token ever appears (it is neither
// logged nor in the audit record, whose target is the token's ID).
func (s *Handler) createToken(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body adminapi.TokenCreateRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	token := ledger.NewToken()
	n := ledger.NewAdminToken{TokenID: ledger.NewReference("tok_"), Name: body.Name, Scopes: body.Scopes, Hash: ledger.TokenHash(token),
		CreatedBy: actorOf(r).ID, CreatedOn: s.cfg.Now().UTC().Truncate(time.Microsecond), ExpiresOn: body.ExpiresOn}
	t, err := s.cfg.DB.CreateToken(r.Context(), n)
	if err != nil {
		return 0, nil, err
	}
	setTarget(r, "tokenID", t.TokenID)
	return http.StatusCreated, adminapi.TokenCreated{TokenID: t.TokenID, Name: t.Name, Scopes: t.Scopes, Token: token,
		CreatedOn: t.CreatedOn.UTC(), ExpiresOn: utc(t.ExpiresOn)}, nil
}

func (s *Handler) listTokens(r *http.Request, _ httprouter.Params) (int, any, error) {
	list, err := s.cfg.DB.ListTokens(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.TokenList{Tokens: make([]adminapi.Token, 0, len(list))}
	for _, t := range list {
		out.Tokens = append(out.Tokens, adminapi.Token{TokenID: t.TokenID, Name: t.Name, Scopes: t.Scopes, CreatedOn: t.CreatedOn.UTC(),
			CreatedBy: t.CreatedBy, ExpiresOn: utc(t.ExpiresOn), RevokedOn: utc(t.RevokedOn)})
	}
	return http.StatusOK, out, nil
}

func (s *Handler) revokeToken(r *http.Request, ps httprouter.Params) (int, any, error) {
	if _, err := s.cfg.DB.RevokeToken(r.Context(), ps.ByName("tokenID"), s.cfg.Now()); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
