package providertest

// Conformance scenarios of participants: ParticipantRegistration,
// ParticipantLifecycle and SenderTokens.

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func (c *conformance) participantRegistration(t *testing.T) {
	ext := c.externalID("")
	key := newUUID()
	r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": key})
	expect(t, r, http.StatusCreated)
	id := decode[wireParticipant](t, r).ParticipantID
	if id == "" {
		t.Fatalf("no participantID: %s", r.Body)
	}

	t.Run("DuplicateExternalIDIsConflict", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": newUUID()})
		expect(t, r, http.StatusConflict)
	})
	t.Run("ReplayedKeyCreatesNoSecondParticipant", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants"), participantBody(ext), hdr{"Idempotency-Key": key})
		if r.Status == http.StatusCreated && decode[wireParticipant](t, r).ParticipantID != id {
			t.Fatalf("replay created %s, first was %s", r.Body, id)
		} else if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
			t.Fatalf("replay answered %v", r)
		}
	})
	t.Run("MissingFieldsAreBadRequest", func(t *testing.T) {
		for _, body := range []string{`{}`, `{"externalID":"x"}`, `not json`,
			strings.Replace(participantBody(c.externalID("")), `"city":"Springfield",`, "", 1)} {
			r := c.req(t, "POST", c.p("/participants"), body, hdr{"Idempotency-Key": newUUID()})
			expect(t, r, http.StatusBadRequest)
		}
	})
	t.Run("PathTakesParticipantIDOrExternalID", func(t *testing.T) {
		a := c.req(t, "GET", c.p("/participants/%s", id), "", nil)
		b := c.req(t, "GET", c.p("/participants/%s", url.PathEscape(ext)), "", nil)
		expect(t, a, http.StatusOK)
		expect(t, b, http.StatusOK)
		pa, pb := decode[wireParticipant](t, a), decode[wireParticipant](t, b)
		if pa.ParticipantID != id || pb.ParticipantID != id {
			t.Fatalf("lookups disagree: %s / %s", a.Body, b.Body)
		}
		if st := pa.Status; !slices.Contains([]string{StatusPending, StatusActive, StatusDenied, StatusDisabled}, st) {
			t.Fatalf("status %q", st)
		}
	})
	t.Run("UnknownParticipantIsNotFound", func(t *testing.T) {
		expect(t, c.req(t, "GET", c.p("/participants/%s", c.externalID("nobody-")), "", nil), http.StatusNotFound)
	})
}

func (c *conformance) token(t *testing.T, externalID string, h hdr) reply {
	t.Helper()
	body := ""
	if externalID != "" {
		body = fmt.Sprintf(`{"externalID":%q,"clientType":"device"}`, externalID)
	}
	return c.req(t, "POST", "/provider-participant-token", body, h)
}

func (c *conformance) participantLifecycle(t *testing.T) {
	t.Run("PendingCannotMint", func(t *testing.T) {
		need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus")
		ext := c.externalID("")
		c.register(t, ext)
		if st := c.settle(t, ext, StatusPending); st != StatusPending {
			t.Fatalf("status %s", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
	t.Run("ClearedBecomesActive", func(t *testing.T) {
		_, ext := c.active(t)
		expect(t, c.token(t, ext, nil), http.StatusOK)
	})
	t.Run("DeniedCannotMint", func(t *testing.T) {
		ext := c.externalID("deny-")
		c.register(t, ext)
		want := ""
		if !c.tg.Hooks.DenyPrefix {
			need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus or DenyPrefix")
			want = StatusDenied
		}
		if st := c.settle(t, ext, want); st != StatusDenied {
			t.Fatalf("status %s, want denied", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
	t.Run("DisabledCannotMint", func(t *testing.T) {
		need(t, c.tg.Hooks.SetParticipantStatus != nil, "SetParticipantStatus")
		_, ext := c.active(t)
		if st := c.settle(t, ext, StatusDisabled); st != StatusDisabled {
			t.Fatalf("status %s", st)
		}
		expectBodiless(t, c.token(t, ext, nil), http.StatusForbidden)
	})
}

func (c *conformance) senderTokens(t *testing.T) {
	_, ext := c.active(t)
	r := c.token(t, ext, nil)
	expect(t, r, http.StatusOK)
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Fatalf("cache headers: %v", r.Header)
	}
	tok := decode[wireToken](t, r)
	if tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "bearer") {
		t.Fatalf("token: %s", r.Body)
	}
	if tok.ExpiresIn == nil || *tok.ExpiresIn != TokenLifetime {
		t.Fatalf("expires_in, want 3600: %s", r.Body)
	}
	if tok.RefreshToken.IsSpecified() {
		t.Fatal("a refresh_token was returned")
	}

	expectBodiless(t, c.req(t, "POST", "/provider-participant-token", `{"clientType":"web"}`, nil), http.StatusBadRequest)
	expectBodiless(t, c.req(t, "POST", "/provider-participant-token",
		fmt.Sprintf(`{"externalID":%q,"clientType":"kiosk"}`, ext), nil), http.StatusBadRequest)
	expectBodiless(t, c.token(t, c.externalID("nobody-"), nil), http.StatusNotFound)
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": ""}), http.StatusUnauthorized)
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(c.tg.APIKeyID, "wrong")}), http.StatusUnauthorized)
	// Only Basic works: the key is never exchanged for a bearer token.
	expectBodiless(t, c.token(t, ext, hdr{"Authorization": "Bearer " + tok.AccessToken}), http.StatusUnauthorized)
	// clientType defaults to web.
	expect(t, c.req(t, "POST", "/provider-participant-token", fmt.Sprintf(`{"externalID":%q}`, ext), nil), http.StatusOK)

	t.Run("KeyWithoutTransfersWriteIsForbidden", func(t *testing.T) {
		need(t, c.tg.Hooks.NoScopeKey != nil, "NoScopeKey")
		id, secret, err := c.tg.Hooks.NoScopeKey()
		if err != nil {
			t.Fatal(err)
		}
		expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(id, secret)}), http.StatusForbidden)
	})
	t.Run("OtherProvidersParticipantIsForbidden", func(t *testing.T) {
		// Authentication rule 7: a participant belonging to another
		// provider returns 403, bodiless like every token error.
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		_, id, secret, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		expectBodiless(t, c.token(t, ext, hdr{"Authorization": basic(id, secret)}), http.StatusForbidden)
	})
	t.Run("ParticipantLoginWithEmptyBody", func(t *testing.T) {
		need(t, c.tg.Hooks.ParticipantLogin != nil, "ParticipantLogin")
		user, pass, err := c.tg.Hooks.ParticipantLogin(ext)
		if err != nil {
			t.Fatal(err)
		}
		r := c.req(t, "POST", "/provider-participant-token", "", hdr{"Authorization": basic(user, pass)})
		expect(t, r, http.StatusOK)
		if e := decode[wireToken](t, r).ExpiresIn; e == nil || *e != TokenLifetime || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("login token: %v %s", r.Header, r.Body)
		}
	})
}
