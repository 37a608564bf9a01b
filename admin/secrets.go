package admin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

// registerSecrets adds the /v1/signing-secrets routes (contract §4):
//
//	GET    /v1/signing-secrets            200 {"signingSecrets": [SecretInfo…]}, newest first
//	POST   /v1/signing-secrets            {"secret": "<Base64 of 32 bytes>"} or {"generate": true}
//	                                      201 {secretID, fingerprint} (+ secret when generated);
//	                                      200 when the secret is stored and active; 409 when retired
//	DELETE /v1/signing-secrets/:secretID  204; 404 when unknown
//	POST   /v1/keyring/rekey              {} or {"kekFingerprint": "<16 hex>"}
//	                                      200 KeyringRekey; 409 kek-mismatch
//
// A secret's value appears in one answer only: the one that generated it.
// It is never logged, listed or echoed in an error.
func (s *Handler) registerSecrets() {
	s.handle(http.MethodGet, "/v1/signing-secrets", s.listSecrets)
	s.handle(http.MethodPost, "/v1/signing-secrets", s.addSecret)
	s.handle(http.MethodDelete, "/v1/signing-secrets/:secretID", s.retireSecret)
	s.handle(http.MethodPost, "/v1/keyring/rekey", s.rekeySecrets)
}

func (s *Handler) listSecrets(r *http.Request, _ httprouter.Params) (int, any, error) {
	list, err := s.cfg.Secrets.List(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.SigningSecretList{SigningSecrets: make([]adminapi.SigningSecret, 0, len(list))} // [] rather than null
	for _, info := range list {
		out.SigningSecrets = append(out.SigningSecrets, adminapi.SigningSecret(info))
	}
	return http.StatusOK, out, nil
}

func (s *Handler) addSecret(r *http.Request, _ httprouter.Params) (int, any, error) {
	// The body is an adminapi.SigningSecretRequest, read as a map of raw
	// members rather than into the struct: encoding/json matches struct
	// fields case-insensitively, and here {"Secret": …} is an unknown field
	// like any other. Raw values let absent, null, a wrong type and a bad
	// value each be answered with their own pointer.
	var body map[string]json.RawMessage
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(body)) {
		if name != "secret" && name != "generate" {
			return 0, nil, ledger.Invalid("/"+escapePointer(name), "unknown field %q", name)
		}
	}
	secretRaw, hasSecret := body["secret"]
	generateRaw, hasGenerate := body["generate"]
	switch {
	case hasSecret && hasGenerate:
		return 0, nil, ledger.Invalid("/generate", "give either secret or generate, not both")
	case !hasSecret && !hasGenerate:
		return 0, nil, ledger.Invalid("/secret", "secret (the Base64 of 32 bytes) or generate (true) is required")
	case hasGenerate:
		var gen bool
		if bytes.Equal(generateRaw, []byte("null")) || json.Unmarshal(generateRaw, &gen) != nil {
			return 0, nil, ledger.Invalid("/generate", "generate must be a JSON boolean")
		}
		if !gen {
			return 0, nil, ledger.Invalid("/generate", "generate must be true; to add a secret of your own, give secret instead")
		}
		info, secret, err := s.cfg.Secrets.Generate(r.Context())
		if err != nil {
			return 0, nil, err
		}
		setTarget(r, "secretID", info.SecretID)
		out := adminapi.SigningSecretCreated{SecretID: info.SecretID, Fingerprint: info.Fingerprint,
			Secret: base64.StdEncoding.EncodeToString(secret)}
		clear(secret)
		return http.StatusCreated, out, nil
	}
	var b64 string
	if bytes.Equal(secretRaw, []byte("null")) || json.Unmarshal(secretRaw, &b64) != nil {
		return 0, nil, ledger.Invalid("/secret", "secret must be a JSON string")
	}
	// ParseSecret's error never contains its input; neither does ours.
	secret, err := envelope.ParseSecret(b64)
	if err != nil {
		return 0, nil, ledger.Invalid("/secret", "secret must be the Base64 of exactly 32 bytes")
	}
	// A key anyone could guess (all zero, a repeated pattern, …) would let
	// anyone forge callbacks; the store refuses it too.
	var weak *envelope.WeakSecretError
	if errors.As(envelope.CheckStrength(secret), &weak) {
		clear(secret)
		return 0, nil, ledger.Invalid("/secret", "secret is weak (%s): use 32 bytes from a random source", weak.Reason)
	}
	info, created, err := s.cfg.Secrets.Add(r.Context(), secret)
	clear(secret)
	if err != nil {
		return 0, nil, err
	}
	setTarget(r, "secretID", info.SecretID)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, adminapi.SigningSecretCreated{SecretID: info.SecretID, Fingerprint: info.Fingerprint}, nil
}

func (s *Handler) retireSecret(r *http.Request, ps httprouter.Params) (int, any, error) {
	if err := s.cfg.Secrets.Retire(r.Context(), ps.ByName("secretID")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// rekeySecrets is POST /v1/keyring/rekey: re-encrypt the active secrets
// under this replica's current KEK (keyring.Vault.Rekey). 200 with what was
// done and what remains under another KEK, also when nothing was to do.
func (s *Handler) rekeySecrets(r *http.Request, _ httprouter.Params) (int, any, error) {
	var body adminapi.KeyringRekeyRequest
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	res, err := s.cfg.Secrets.Rekey(r.Context(), body.KEKFingerprint)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.KeyringRekey{KEKFingerprint: res.KEKFingerprint, Rekeyed: res.Rekeyed, Current: res.Current,
		Remaining: len(res.Remaining), RemainingSecrets: make([]adminapi.RemainingSecret, 0, len(res.Remaining))}
	if res.PreviousKEKFingerprint != "" {
		out.PreviousKEKFingerprint = &res.PreviousKEKFingerprint
	}
	for _, x := range res.Remaining {
		out.RemainingSecrets = append(out.RemainingSecrets, adminapi.RemainingSecret{SecretID: x.SecretID,
			Fingerprint: x.Fingerprint, KEKFingerprint: x.KEKFingerprint, Reason: string(x.Reason)})
	}
	return http.StatusOK, out, nil
}

// escapePointer escapes a member name as a JSON Pointer token (RFC 6901).
func escapePointer(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
