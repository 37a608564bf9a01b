package providertest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"
)

func checkLen(v *validation, ptr, s string, lo, hi int) {
	if n := utf8.RuneCountInString(s); n < lo || n > hi {
		v.add(ptr, "must be "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi)+" characters")
	}
}

func (s *Service) createFundingSource(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		ProviderSourceID string `json:"providerSourceID"`
		DisplayName      string `json:"displayName"`
		FundingType      string `json:"fundingType"`
		Last4            string `json:"last4"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	var v validation
	checkLen(&v, "/providerSourceID", req.ProviderSourceID, 1, 256)
	checkLen(&v, "/displayName", req.DisplayName, 1, 256)
	if req.FundingType != FundingCard && req.FundingType != FundingBankAccount {
		v.add("/fundingType", "must be card or bank_account")
	}
	checkLen(&v, "/last4", req.Last4, 0, 4)

	s.mu.Lock()
	defer s.mu.Unlock()
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	if p == nil {
		notFound(w, r, "participant")
		return
	}
	if v.write(w, r, http.StatusUnprocessableEntity) {
		return
	}
	now := s.Now()
	for _, fs := range ps.fsOrder {
		if fs.FundingType != req.FundingType || fs.ProviderSourceID != req.ProviderSourceID {
			continue
		}
		if fs.ParticipantID != p.ParticipantID {
			problem(w, r, http.StatusConflict, "funding-source-conflict", "Funding source registered elsewhere",
				"this providerSourceID is registered to another participant")
			return
		}
		// Idempotent on (participant, fundingType, providerSourceID): the
		// existing ID, reactivated if it was removed. Display fields are not
		// changed by a resend (PATCH changes them).
		if fs.DisabledOn != nil {
			fs.DisabledOn, fs.UpdatedOn = nil, now
		}
		writeJSON(w, http.StatusCreated, fundingSourceCreated{fs.FundingSourceID})
		return
	}
	fs := &FundingSource{FundingSourceID: s.nextID("fs"), FundingType: req.FundingType,
		ProviderSourceID: req.ProviderSourceID, DisplayName: req.DisplayName, Last4: req.Last4,
		CreatedOn: now, UpdatedOn: now, ParticipantID: p.ParticipantID}
	ps.fundingSources[fs.FundingSourceID] = fs
	ps.fsOrder = append(ps.fsOrder, fs)
	writeJSON(w, http.StatusCreated, fundingSourceCreated{fs.FundingSourceID})
}

// fundingSource resolves a funding-source path (participant and source of
// this provider); it answers 404 and returns nil otherwise. Callers hold s.mu.
func (s *Service) fundingSource(w http.ResponseWriter, r *http.Request, pid string) *FundingSource {
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	if p == nil {
		notFound(w, r, "participant")
		return nil
	}
	fs, ok := ps.fundingSources[r.PathValue("fundingSourceID")]
	if !ok || fs.ParticipantID != p.ParticipantID {
		notFound(w, r, "funding source")
		return nil
	}
	return fs
}

func (s *Service) getFundingSource(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fs := s.fundingSource(w, r, pid); fs != nil {
		writeJSON(w, http.StatusOK, fundingSourceBody{*fs})
	}
}

func (s *Service) patchFundingSource(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		DisplayName      *string         `json:"displayName"`
		Last4            *string         `json:"last4"`
		ProviderSourceID json.RawMessage `json:"providerSourceID"`
		FundingType      json.RawMessage `json:"fundingType"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.fundingSource(w, r, pid)
	if fs == nil {
		return
	}
	var v validation
	if req.DisplayName != nil {
		checkLen(&v, "/displayName", *req.DisplayName, 1, 256)
	}
	if req.Last4 != nil {
		checkLen(&v, "/last4", *req.Last4, 1, 4)
	}
	if req.ProviderSourceID != nil {
		v.add("/providerSourceID", "is immutable")
	}
	if req.FundingType != nil {
		v.add("/fundingType", "is immutable")
	}
	if v.write(w, r, http.StatusUnprocessableEntity) {
		return
	}
	if req.DisplayName != nil {
		fs.DisplayName = *req.DisplayName
	}
	if req.Last4 != nil {
		fs.Last4 = *req.Last4
	}
	fs.UpdatedOn = s.Now()
	writeJSON(w, http.StatusOK, fundingSourceBody{*fs})
}

// FundingSource returns a funding source by ID.
func (s *Service) FundingSource(providerID, id string) (FundingSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return FundingSource{}, err
	}
	fs, ok := ps.fundingSources[id]
	if !ok {
		return FundingSource{}, errors.New("providertest: unknown funding source")
	}
	return *fs, nil
}

// RemoveFundingSource removes a funding source (sets disabledOn); the spec
// shows no endpoint for it. A create resend reactivates it.
func (s *Service) RemoveFundingSource(providerID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	fs, ok := ps.fundingSources[id]
	if !ok {
		return errors.New("providertest: unknown funding source")
	}
	now := s.Now()
	fs.DisabledOn, fs.UpdatedOn = &now, now
	return nil
}
