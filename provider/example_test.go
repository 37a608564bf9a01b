package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
)

// exampleClient returns a client of a fresh fake whose signup check lands
// after 10ms (like servicesim's, which waits a second).
func exampleClient() (*provider.Client, *providertest.Server) {
	srv := providertest.NewServer(providertest.WithSignupCheck(providertest.SandboxSignupCheck(10 * time.Millisecond)))
	id, secret := srv.APIKey()
	c, err := provider.NewClient(srv.URL, provider.WithProviderID(srv.ProviderID()), provider.WithAPIKey(id, secret))
	if err != nil {
		log.Fatal(err)
	}
	return c, srv
}

// Register a participant, then poll until the signup check has cleared it.
func Example_registerParticipant() {
	c, srv := exampleClient()
	defer srv.Close()
	ctx := context.Background()

	p, _, err := c.Participants.Ensure(ctx, &provider.ParticipantCreateRequest{
		ExternalID: "cust-1001", GivenName: "Alice", FamilyName: "Doe",
		Address: provider.Address{AddressLine1: "1 Main St", City: "Springfield", StateOrProvince: "IL",
			PostalCode: "62701", Country: "US"},
		PhoneNumbers: []string{"+15555550100"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("registered:", p.Status)

	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	p, err = c.Participants.Await(ctx, "cust-1001", 5*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after the signup check:", p.Status)
	// Output:
	// registered: pending
	// after the signup check: active
}

// Mint a sender token for the mobile SDK. Only active participants get one.
func Example_mintToken() {
	// The fake's clock stands still until advanced, so the participant is
	// pending however slowly this runs.
	clk := providertest.NewManualClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	srv := providertest.NewServer(providertest.WithClock(clk),
		providertest.WithSignupCheck(providertest.SandboxSignupCheck(10*time.Millisecond)))
	defer srv.Close()
	id, secret := srv.APIKey()
	c, err := provider.NewClient(srv.URL, provider.WithProviderID(srv.ProviderID()), provider.WithAPIKey(id, secret))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := c.Participants.Create(ctx, newParticipant("cust-2002")); err != nil {
		log.Fatal(err)
	}
	_, _, err = c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "cust-2002", ClientType: provider.ClientDevice})
	fmt.Println("while pending, forbidden:", errors.Is(err, provider.ErrForbidden))

	clk.Advance(time.Second) // the signup check clears
	if _, err := c.Participants.Await(ctx, "cust-2002", 5*time.Millisecond); err != nil {
		log.Fatal(err)
	}
	tok, resp, err := c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "cust-2002", ClientType: provider.ClientDevice})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tok.TokenType, tok.ExpiresIn, resp.Header.Get("Cache-Control"))
	// Output:
	// while pending, forbidden: true
	// bearer 3600 no-store
}

// Rotate a signing secret into the adapter: create it at the service, add it
// to ledgerd's keyring, and only later have the old one revoked (several
// secrets may be active at once). `ledgerctl provider secrets create
// --install` does the first two steps.
func Example_rotateSigningSecret() {
	c, srv := exampleClient()
	defer srv.Close()
	ctx := context.Background()

	// Stands in for ledgerd's admin API: POST /v1/signing-secrets {secret}.
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Secret string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"secretID":"ks_1","fingerprint":"len%d"}`, len(body.Secret))
	}))
	defer admin.Close()

	sec, resp, err := c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rotation-2026-11"))
	if err != nil {
		log.Fatal(err) // ErrIdempotencyKeyReused: the key already made a secret
	}
	key, err := sec.Key() // 32 raw bytes, the A256KW key
	if err != nil {
		log.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"secret": sec.Secret})
	ans, err := http.Post(admin.URL+"/v1/signing-secrets", "application/json", bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	ans.Body.Close()
	fmt.Println("created with key", resp.IdempotencyKey, "size", len(key), "installed:", ans.StatusCode)

	// The plaintext is returned once: a replay of the key is refused.
	_, _, err = c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rotation-2026-11"))
	fmt.Println("replay:", errors.Is(err, provider.ErrIdempotencyKeyReused))
	// Output:
	// created with key rotation-2026-11 size 32 installed: 201
	// replay: true
}

// Work the review queue: poll pending reviews, newest first, and resolve
// them. Rejecting the last pending review of an authorized payout cancels it.
func Example_reviewQueue() {
	c, srv := exampleClient()
	defer srv.Close()
	ctx := context.Background()
	if _, _, err := c.Participants.Create(ctx, newParticipant("cust-3003")); err != nil {
		log.Fatal(err)
	}
	// The fake's seeding stands in for payouts the service held.
	for _, amount := range []string{"950.00", "12.00"} {
		po, _ := srv.SeedPayout(srv.ProviderID(), providertest.Payout{SenderExternalID: "cust-3003", Amount: providertest.USD(amount)})
		_, _ = srv.SeedReview(srv.ProviderID(), po.PayoutID, "velocity")
	}

	for rv, err := range c.Reviews.ListIter(ctx, &provider.ReviewListOptions{Status: provider.ReviewPending}) {
		if err != nil {
			log.Fatal(err)
		}
		decision := provider.ReviewApproved
		if rv.Payout.Amount.Value.GreaterThan(provider.MustUSD("500").Value) {
			decision = provider.ReviewRejected
		}
		res, _, err := c.Reviews.Resolve(ctx, rv.ReviewID, &provider.ReviewResolution{Resolution: decision, Notes: "checked"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rv.Payout.Amount, res.Status, "payout:", res.Payout.Status)
	}
	// Output:
	// 12.00 USD approved payout: authorized
	// 950.00 USD rejected payout: cancelled
}
