package providertest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"time"
)

type secretKey struct {
	inProgress  bool
	completedOn time.Time
	secretID    string
}

func (s *Service) listSecrets(w http.ResponseWriter, r *http.Request, pid string) {
	off, lim, ok := pageParams(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	var items []SigningSecret
	for _, sec := range slices.Backward(ps.secrets) { // newest first
		if sec.RevokedOn == nil {
			m := *sec
			m.Secret = "" // metadata only
			items = append(items, m)
		}
	}
	s.mu.Unlock()
	page, more := pageOf(items, off, lim)
	writeJSON(w, http.StatusOK, signingSecretsPage{page, more})
}

// idempotencyKeyRe is the fake's reading of "1 to 255 chars": visible ASCII.
var idempotencyKeyRe = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)

func (s *Service) createSecret(w http.ResponseWriter, r *http.Request, pid string) {
	nested := s.version(r) >= NestedSecretVersion
	vals, sent := r.Header["X-Idempotency-Key"]
	key := r.Header.Get("X-Idempotency-Key")
	switch {
	case sent && (len(vals) != 1 || !idempotencyKeyRe.MatchString(key)):
		invalid(w, r, "X-Idempotency-Key must be 1 to 255 visible ASCII characters, sent once")
		return
	case !sent && nested:
		invalid(w, r, "X-Idempotency-Key is required from "+NestedSecretVersion)
		return
	}

	s.mu.Lock()
	ps, _ := s.state(pid)
	now := s.Now()
	if key != "" {
		if rec, ok := ps.secretKeys[key]; ok {
			switch {
			case rec.inProgress:
				s.mu.Unlock()
				conflict(w, r, "idempotency-request-in-progress", "Request in progress",
					"an earlier request with this X-Idempotency-Key is still running")
				return
			case now.Before(rec.completedOn.Add(IdempotencyRetention)):
				s.mu.Unlock()
				// Never the plaintext: it was returned once.
				conflict(w, r, "idempotency-key-reused", "Idempotency key reused",
					"this X-Idempotency-Key already created secret "+rec.secretID)
				return
			}
		}
		ps.secretKeys[key] = &secretKey{inProgress: true}
	}
	gate := s.secretGate
	s.mu.Unlock()

	if gate != nil {
		select {
		case gate.entered <- key:
		default:
		}
		select {
		case <-gate.open:
		case <-r.Context().Done():
			s.mu.Lock()
			delete(ps.secretKeys, key)
			s.mu.Unlock()
			return
		}
	}

	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	s.mu.Lock()
	now = s.Now()
	sec := &SigningSecret{SecretID: s.nextID("sec"), CreatedOn: now, Secret: base64.StdEncoding.EncodeToString(raw)}
	ps.secrets = append(ps.secrets, sec)
	if key != "" {
		ps.secretKeys[key] = &secretKey{completedOn: now, secretID: sec.SecretID}
	}
	out := *sec
	s.mu.Unlock()

	if key != "" {
		w.Header().Set("X-Idempotency-Key", key)
	}
	if nested {
		writeJSON(w, http.StatusCreated, signingSecretBody{out})
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// SigningSecrets returns every signing secret of the provider, revoked ones
// included, oldest first, with their values.
func (s *Service) SigningSecrets(providerID string) ([]SigningSecret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return nil, err
	}
	out := make([]SigningSecret, 0, len(ps.secrets))
	for _, sec := range ps.secrets {
		out = append(out, *sec)
	}
	return out, nil
}

// RevokeSigningSecret revokes a secret (the spec shows no endpoint for it).
func (s *Service) RevokeSigningSecret(providerID, secretID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	for _, sec := range ps.secrets {
		if sec.SecretID == secretID {
			if sec.RevokedOn == nil {
				now := s.Now()
				sec.RevokedOn = &now
			}
			return nil
		}
	}
	return errors.New("providertest: unknown signing secret")
}

var shortNameRe = regexp.MustCompile(`^[A-Za-z0-9]{2,12}$`)

func (s *Service) patchProvider(w http.ResponseWriter, r *http.Request, pid string) {
	// Members by name, so that any other than shortName can be refused.
	var req map[string]json.RawMessage
	if !decodeBody(w, r, &req) {
		return
	}
	var v validation
	var name string
	if raw, ok := req["shortName"]; !ok || json.Unmarshal(raw, &name) != nil || !shortNameRe.MatchString(name) {
		v.add("/shortName", "required: 2 to 12 ASCII letters and digits")
	}
	for k := range req {
		if k != "shortName" {
			v.add("/"+k, "only shortName can be updated")
		}
	}
	if v.write(w, r, http.StatusBadRequest) {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	ps.shortName = name
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, shortNameBody{name})
}

// ShortName returns the provider's short name ("" until set).
func (s *Service) ShortName(providerID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return "", err
	}
	return ps.shortName, nil
}
