package providertest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

type providerState struct {
	id        string
	shortName string

	participants map[string]*participant // by participantID
	byExternal   map[string]*participant
	createKeys   map[string]createKey // Idempotency-Key of participant registration

	groups     map[string]*group
	groupOrder []*group
	overrides  map[string]*Override // by participantID
	policy     *Policy

	payouts  map[string]*Payout
	reviews  []*Review            // in creation order
	payments map[string][]Payment // seeded extra items by participantID
	// sentBy are the payouts by SenderExternalID, and listings each
	// participant's payments list in order, built on the first read after
	// a change: a page costs its own items, not every payout's.
	sentBy   map[string][]*Payout
	listings map[string][]listed

	fundingSources map[string]*FundingSource
	fsOrder        []*FundingSource

	secrets    []*SigningSecret // in creation order
	secretKeys map[string]*secretKey
}

func newProviderState(id string) *providerState {
	return &providerState{
		id:             id,
		participants:   map[string]*participant{},
		byExternal:     map[string]*participant{},
		createKeys:     map[string]createKey{},
		groups:         map[string]*group{},
		overrides:      map[string]*Override{},
		payouts:        map[string]*Payout{},
		payments:       map[string][]Payment{},
		sentBy:         map[string][]*Payout{},
		listings:       map[string][]listed{},
		fundingSources: map[string]*FundingSource{},
		secretKeys:     map[string]*secretKey{},
	}
}

type participant struct {
	Participant
	decision SignupDecision
	decideAt time.Time
	disabled bool
}

type createKey struct {
	hash          [32]byte
	participantID string
}

// status is the participant's status at now: pending until the signup check
// lands, then its outcome, unless an operator disabled it.
func (p *participant) status(now time.Time) string {
	switch {
	case p.disabled:
		return StatusDisabled
	case now.Before(p.decideAt):
		return StatusPending
	default:
		return p.decision.Outcome
	}
}

func (p *participant) snapshot(now time.Time) Participant {
	c := p.Participant
	c.Status = p.status(now)
	c.PhoneNumbers = append([]string(nil), p.PhoneNumbers...)
	return c
}

// lookup resolves a path's participantID, which may be the participantID or
// the provider's externalID (participantID first).
func (ps *providerState) lookup(ref string) *participant {
	if p, ok := ps.participants[ref]; ok {
		return p
	}
	return ps.byExternal[ref]
}

var errNoProvider = errors.New("providertest: unknown provider")
var errNoParticipant = errors.New("providertest: unknown participant")

// state returns the provider; callers hold s.mu.
func (s *Service) state(providerID string) (*providerState, error) {
	ps, ok := s.providers[providerID]
	if !ok {
		return nil, errNoProvider
	}
	return ps, nil
}

type participantCreate struct {
	ExternalID   string   `json:"externalID"`
	GivenName    string   `json:"givenName"`
	FamilyName   string   `json:"familyName"`
	Address      *Address `json:"address"`
	PhoneNumbers []string `json:"phoneNumbers"`
}

func (s *Service) createParticipant(w http.ResponseWriter, r *http.Request, pid string) {
	key := r.Header.Get("Idempotency-Key")
	if key != "" {
		if _, err := uuid.Parse(key); err != nil {
			invalid(w, r, "Idempotency-Key must be a UUID")
			return
		}
	}
	raw := rawBody(r)
	var req participantCreate
	if !decodeBody(w, r, &req) {
		return
	}
	var v validation
	req.ExternalID = strings.TrimSpace(req.ExternalID)
	if req.ExternalID == "" {
		v.add("/externalID", "required")
	}
	if req.GivenName == "" {
		v.add("/givenName", "required")
	}
	if req.FamilyName == "" {
		v.add("/familyName", "required")
	}
	if req.Address == nil {
		v.add("/address", "required")
	} else {
		a := req.Address
		for _, f := range []struct{ ptr, val string }{{"addressLine1", a.AddressLine1}, {"city", a.City},
			{"stateOrProvince", a.StateOrProvince}, {"postalCode", a.PostalCode}, {"country", a.Country}} {
			if f.val == "" {
				v.add("/address/"+f.ptr, "required")
			}
		}
	}
	if req.PhoneNumbers == nil {
		v.add("/phoneNumbers", "required")
	}
	if v.write(w, r, http.StatusBadRequest) {
		return
	}

	s.mu.Lock()
	ps, _ := s.state(pid)
	now := s.Now()
	hash := sha256.Sum256(raw)
	if key != "" {
		if prev, ok := ps.createKeys[key]; ok {
			s.mu.Unlock()
			if prev.hash != hash {
				invalid(w, r, "Idempotency-Key was used with a different request")
				return
			}
			writeJSON(w, http.StatusCreated, participantCreated{prev.participantID, StatusPending})
			return
		}
	}
	if _, dup := ps.byExternal[req.ExternalID]; dup {
		s.mu.Unlock()
		problem(w, r, http.StatusConflict, "already-registered", "Participant already registered",
			"a participant with this externalID is already registered")
		return
	}
	p := &participant{Participant: Participant{
		ParticipantID: s.nextID("par"), ExternalID: req.ExternalID, GivenName: req.GivenName,
		FamilyName: req.FamilyName, Address: *req.Address, PhoneNumbers: req.PhoneNumbers, CreatedOn: now,
	}}
	p.decision = s.cfg.signup(p.snapshot(now))
	if p.decision.Outcome != StatusDenied {
		p.decision.Outcome = StatusActive
	}
	p.decideAt = now.Add(p.decision.After)
	ps.participants[p.ParticipantID] = p
	ps.byExternal[p.ExternalID] = p
	if key != "" {
		ps.createKeys[key] = createKey{hash: hash, participantID: p.ParticipantID}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, participantCreated{p.ParticipantID, StatusPending})
}

func (s *Service) getParticipant(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	var snap Participant
	if p != nil {
		snap = p.snapshot(s.Now())
	}
	s.mu.Unlock()
	if p == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// Participant returns the participant ref (participantID or externalID) of
// providerID as of the fake's clock.
func (s *Service) Participant(providerID, ref string) (Participant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Participant{}, err
	}
	p := ps.lookup(ref)
	if p == nil {
		return Participant{}, errNoParticipant
	}
	return p.snapshot(s.Now()), nil
}

// SetParticipantStatus forces a participant's status: StatusDisabled is the
// operator's disabling call (the spec has no provider endpoint for it);
// StatusActive, StatusDenied and StatusPending settle or reopen the signup
// check at once.
func (s *Service) SetParticipantStatus(providerID, ref, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	p := ps.lookup(ref)
	if p == nil {
		return errNoParticipant
	}
	now := s.Now()
	switch status {
	case StatusDisabled:
		p.disabled = true
	case StatusActive, StatusDenied:
		p.disabled = false
		p.decision.Outcome, p.decideAt = status, now
	case StatusPending:
		p.disabled = false
		p.decideAt = now.Add(100 * 365 * 24 * time.Hour)
	default:
		return errors.New("providertest: unknown participant status " + status)
	}
	return nil
}

// ParticipantLogin returns HTTP Basic credentials of a participant login: the
// token endpoint accepts them with an empty body and mints a token for that
// participant. The spec does not show the login's format; this is the fake's.
func (s *Service) ParticipantLogin(providerID, ref string) (username, password string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return "", "", err
	}
	p := ps.lookup(ref)
	if p == nil {
		return "", "", errNoParticipant
	}
	username = "login-" + p.ParticipantID
	password = randomString(18)
	s.logins[username] = login{password: password, providerID: providerID, participantID: p.ParticipantID}
	return username, password, nil
}

// Tokens returns the sender tokens issued so far, oldest first.
func (s *Service) Tokens() []Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Token(nil), s.tokens...)
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// createToken serves POST /provider-participant-token. Every error is
// bodiless, as the spec says.
func (s *Service) createToken(w http.ResponseWriter, r *http.Request, _ string) {
	fail := func(status int) { w.WriteHeader(status) }
	user, pass, ok := r.BasicAuth()
	if !ok {
		fail(http.StatusUnauthorized)
		return
	}
	raw := rawBody(r)
	var req struct {
		ExternalID *string `json:"externalID"`
		ClientType *string `json:"clientType"`
	}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			fail(http.StatusBadRequest)
			return
		}
	}
	clientType := "web"
	if req.ClientType != nil {
		clientType = *req.ClientType
	}
	switch clientType {
	case "web", "device", "service":
	default:
		fail(http.StatusBadRequest)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	var p *participant
	if key, ok := s.keys[user]; ok && key.Secret == pass {
		if req.ExternalID == nil || *req.ExternalID == "" {
			fail(http.StatusBadRequest)
			return
		}
		hasScope := false
		for _, sc := range key.Scopes {
			hasScope = hasScope || sc == TransfersWriteScope(key.ProviderID)
		}
		if !hasScope {
			fail(http.StatusForbidden)
			return
		}
		p = s.providers[key.ProviderID].byExternal[*req.ExternalID]
		if p == nil {
			// "A bad credential and a participant belonging to another
			// provider both return 403" (Authentication, rule 7); 404 is
			// for an externalID no provider has registered.
			status := http.StatusNotFound
			for _, other := range s.providers {
				if other.byExternal[*req.ExternalID] != nil {
					status = http.StatusForbidden
				}
			}
			fail(status)
			return
		}
	} else if l, ok := s.logins[user]; ok && l.password == pass {
		p = s.providers[l.providerID].participants[l.participantID]
	} else {
		fail(http.StatusUnauthorized)
		return
	}
	if p.status(now) != StatusActive {
		fail(http.StatusForbidden)
		return
	}
	tok := Token{AccessToken: "st_" + randomString(24), ParticipantID: p.ParticipantID, ExternalID: p.ExternalID,
		ClientType: clientType, IssuedOn: now, ExpiresOn: now.Add(TokenLifetime * time.Second)}
	s.tokens = append(s.tokens, tok)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, tokenBody{AccessToken: tok.AccessToken, TokenType: "bearer", ExpiresIn: TokenLifetime})
}
