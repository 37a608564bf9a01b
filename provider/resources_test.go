package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider"
	"github.com/provider-ledger/adapter/provider/providertest"
)

func ioNopCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

func collect[T any](t *testing.T, seq func(func(*T, error) bool)) []*T {
	t.Helper()
	var out []*T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestParticipants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetEnsure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := b.register(t, "alice")
		if p.ParticipantID == "" || p.ExternalID != "alice" || p.Status != provider.StatusPending {
			t.Fatalf("created %+v", p)
		}
		_, _, err := b.c.Participants.Create(ctx, newParticipant("alice"))
		var already *provider.AlreadyRegisteredError
		if !errors.As(err, &already) || already.ExternalID != "alice" || !strings.Contains(err.Error(), `"alice" already registered`) || !errors.Is(err, provider.ErrAlreadyRegistered) ||
			!errors.Is(err, provider.ErrConflict) {
			t.Fatalf("duplicate: %v", err)
		}
		got, _, err := b.c.Participants.Ensure(ctx, newParticipant("alice"))
		if err != nil || got.ParticipantID != p.ParticipantID || got.Status != provider.StatusActive {
			t.Fatalf("ensure existing: %+v %v", got, err)
		}
		fresh, _, err := b.c.Participants.Ensure(ctx, newParticipant("bob"))
		if err != nil || fresh.ParticipantID == "" || fresh.ParticipantID == p.ParticipantID {
			t.Fatalf("ensure new: %+v %v", fresh, err)
		}
		byID, _, err := b.c.Participants.Get(ctx, p.ParticipantID)
		if err != nil || byID.ExternalID != "alice" {
			t.Fatalf("get by id: %+v %v", byID, err)
		}
		_, _, err = b.c.Participants.Create(ctx, &provider.ParticipantCreateRequest{ExternalID: "x"})
		if e := wantIs(t, err, provider.ErrBadRequest); len(e.Errors) == 0 {
			t.Fatalf("validation errors missing: %+v", e)
		}
		_, _, err = b.c.Participants.Ensure(ctx, &provider.ParticipantCreateRequest{ExternalID: "y"})
		wantIs(t, err, provider.ErrBadRequest)
	})

	t.Run("AwaitUntilTheSignupCheckLands", func(t *testing.T) {
		t.Parallel()
		srv := providertest.NewServer(providertest.WithSignupCheck(providertest.SandboxSignupCheck(30 * time.Millisecond)))
		defer srv.Close()
		id, secret := srv.APIKey()
		c, _ := provider.NewClient(srv.URL, provider.WithProviderID(srv.ProviderID()), provider.WithAPIKey(id, secret))
		for ext, want := range map[string]string{"carol": provider.StatusActive, "deny-dave": provider.StatusDenied} {
			if _, _, err := c.Participants.Create(ctx, newParticipant(ext)); err != nil {
				t.Fatal(err)
			}
			p, err := c.Participants.Await(ctx, ext, 5*time.Millisecond)
			if err != nil || p.Status != want {
				t.Fatalf("%s: %+v %v", ext, p, err)
			}
		}
		if err := srv.SetParticipantStatus(srv.ProviderID(), "carol", providertest.StatusPending); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := c.Participants.Await(short, "carol", 5*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("await on a pending participant: %v", err)
		}
		if _, err := c.Participants.Await(ctx, "nobody", time.Millisecond); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("await unknown: %v", err)
		}
		// A zero interval (ledgerctl provider participants wait --interval 0)
		// polls at the default pace instead of panicking in NewTicker.
		short, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := c.Participants.Await(short, "carol", 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("await with interval 0: %v", err)
		}
	})
}

func TestTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "alice")
	tok, resp, err := b.c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "alice", ClientType: provider.ClientDevice})
	if err != nil || tok.AccessToken == "" || tok.TokenType != "bearer" || tok.ExpiresIn != 3600 {
		t.Fatalf("token %+v %v", tok, err)
	}
	if resp.Header.Get("Cache-Control") != "no-store" || strings.Contains(tok.String(), tok.AccessToken) {
		t.Fatalf("headers %v / String %q", resp.Header, tok.String())
	}
	if got := string(b.last(t, "POST /provider-participant-token").Body); got != `{"externalID":"alice","clientType":"device"}` {
		t.Fatalf("body %s", got)
	}
	if toks := b.svc.Tokens(); toks[len(toks)-1].ClientType != "device" {
		t.Fatalf("fake saw %+v", toks)
	}

	_, _, err = b.c.Tokens.Create(ctx, &provider.TokenRequest{})
	wantIs(t, err, provider.ErrBadRequest)
	_, _, err = b.c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "nobody"})
	wantIs(t, err, provider.ErrNotFound)
	b.register(t, "pending-pat")
	_ = b.svc.SetParticipantStatus("local", "pending-pat", providertest.StatusPending)
	_, _, err = b.c.Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "pending-pat"})
	wantIs(t, err, provider.ErrForbidden)
	b.svc.AddAPIKey(providertest.APIKey{ID: "readonly", Secret: "s", ProviderID: "local"})
	_, _, err = b.client(t, provider.WithAPIKey("readonly", "s")).Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "alice"})
	wantIs(t, err, provider.ErrForbidden)
	_, _, err = b.client(t, provider.WithAPIKey("test-key", "nope")).Tokens.Create(ctx, &provider.TokenRequest{ExternalID: "alice"})
	wantIs(t, err, provider.ErrUnauthorized)

	user, pass, _ := b.svc.ParticipantLogin("local", "alice")
	tok, _, err = b.c.Tokens.CreateForLogin(ctx, user, pass)
	if err != nil || tok.ExpiresIn != 3600 {
		t.Fatalf("login token %+v %v", tok, err)
	}
	if r := b.last(t, "POST /provider-participant-token"); len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
		t.Fatalf("login body %q / %v", r.Body, r.Header)
	}
	_, _, err = b.c.Tokens.CreateForLogin(ctx, user, "wrong")
	wantIs(t, err, provider.ErrUnauthorized)
}

func TestLimitGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	var ids []string
	for i := range 5 {
		g, _, err := b.c.LimitGroups.Create(ctx, &provider.LimitGroupCreateRequest{Name: fmt.Sprintf("g%d", i), Description: "d",
			Limits: provider.Limits{DailySendCount: ptr[int64](int64(i))}})
		if err != nil {
			t.Fatal(err)
		}
		if g.Currency != "USD" || g.Description != "d" || *g.DailySendCount != int64(i) || !g.CreatedOn.Equal(t0) {
			t.Fatalf("group %+v", g)
		}
		ids = append(ids, g.GroupID)
	}

	t.Run("PagesAndIterator", func(t *testing.T) { checkLimitGroupsPagesAndIterator(t, b, ids) })
	t.Run("PageSizeCheckedBeforeSending", func(t *testing.T) { checkLimitGroupsPageSizeCheckedBeforeSending(t, b, ids) })
	t.Run("UpdateAndVersionConflict", func(t *testing.T) { checkLimitGroupsUpdateAndVersionConflict(t, b, ids) })
	t.Run("Members", func(t *testing.T) { checkLimitGroupsMembers(t, b, ids) })
}

// checkLimitGroupsPagesAndIterator checks that List pages the five groups of ids two at a time (limit=2
// in the query, a next cursor), that ListIter yields all of them in order in
// three requests, and that breaking out of it early stops fetching.
func checkLimitGroupsPagesAndIterator(t *testing.T, b bundle, ids []string) {
	ctx := context.Background()
	page, resp, err := b.c.LimitGroups.List(ctx, &provider.ListOptions{Limit: 2})
	if err != nil || len(page) != 2 || !resp.HasMore || resp.NextCursor == "" {
		t.Fatalf("page 1: %v %+v %v", page, resp, err)
	}
	if q := b.last(t, "").Query; q != "limit=2" {
		t.Fatalf("query %q", q)
	}
	b.svc.ResetRequests()
	var got []string
	for _, g := range collect(t, b.c.LimitGroups.ListIter(ctx, &provider.ListOptions{Limit: 2})) {
		got = append(got, g.GroupID)
	}
	if !slices.Equal(got, ids) || len(b.svc.Requests()) != 3 {
		t.Fatalf("iterated %v in %d requests, want %v in 3", got, len(b.svc.Requests()), ids)
	}
	// Breaking out early stops fetching.
	b.svc.ResetRequests()
	for range b.c.LimitGroups.ListIter(ctx, &provider.ListOptions{Limit: 1}) {
		break
	}
	if n := len(b.svc.Requests()); n != 1 {
		t.Fatalf("early break made %d requests", n)
	}
}

// checkLimitGroupsPageSizeCheckedBeforeSending checks that a page size of -1 or 101 fails with
// ErrInvalidPageSize, from List and ListIter, before any request is sent, and
// that a garbage cursor is the server's ErrBadRequest.
func checkLimitGroupsPageSizeCheckedBeforeSending(t *testing.T, b bundle, ids []string) {
	ctx := context.Background()
	b.svc.ResetRequests()
	for _, n := range []int{-1, 101} {
		if _, _, err := b.c.LimitGroups.List(ctx, &provider.ListOptions{Limit: n}); !errors.Is(err, provider.ErrInvalidPageSize) {
			t.Fatalf("limit %d: %v", n, err)
		}
		for _, err := range b.c.LimitGroups.ListIter(ctx, &provider.ListOptions{Limit: n}) {
			if !errors.Is(err, provider.ErrInvalidPageSize) {
				t.Fatalf("iter limit %d: %v", n, err)
			}
		}
	}
	if n := len(b.svc.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	_, _, err := b.c.LimitGroups.List(ctx, &provider.ListOptions{Cursor: "garbage!"})
	wantIs(t, err, provider.ErrBadRequest)
}

// checkLimitGroupsUpdateAndVersionConflict checks that an update renames a group and keeps the
// rest, that a stale version is ErrVersionConflict (version_conflict), a
// missing group ErrNotFound and a limit in another currency ErrValidation
// with field errors.
func checkLimitGroupsUpdateAndVersionConflict(t *testing.T, b bundle, ids []string) {
	ctx := context.Background()
	g, _, _ := b.c.LimitGroups.List(ctx, &provider.ListOptions{Limit: 1})
	cur := g[0]
	up, _, err := b.c.LimitGroups.Update(ctx, cur.GroupID, &provider.LimitGroupUpdate{Name: provider.Value("platinum"),
		ExpectedVersionID: cur.VersionID})
	if err != nil || up.Name != "platinum" || up.Description != "d" {
		t.Fatalf("update %+v %v", up, err)
	}
	_, _, err = b.c.LimitGroups.Update(ctx, cur.GroupID, &provider.LimitGroupUpdate{Name: provider.Value("stale"),
		ExpectedVersionID: cur.VersionID})
	if e := wantIs(t, err, provider.ErrVersionConflict); e.Code != "version_conflict" {
		t.Fatalf("%+v", e)
	}
	_, _, err = b.c.LimitGroups.Update(ctx, "missing", &provider.LimitGroupUpdate{Name: provider.Value("x")})
	wantIs(t, err, provider.ErrNotFound)
	_, _, err = b.c.LimitGroups.Update(ctx, cur.GroupID, &provider.LimitGroupUpdate{
		LimitsUpdate: provider.LimitsUpdate{DailyAmount: provider.Value(provider.Money{Currency: provider.Currency{Code: "EUR", DecimalPlaces: 2}})}})
	if e := wantIs(t, err, provider.ErrValidation); len(e.Errors) == 0 {
		t.Fatalf("%+v", e)
	}
}

// checkLimitGroupsMembers checks adding members by external and participant ID (a re-add
// keeps the first AddedOn), listing them in order, removing one twice (204
// both times), and ErrNotFound for an unknown participant or group.
func checkLimitGroupsMembers(t *testing.T, b bundle, ids []string) {
	ctx := context.Background()
	gid := ids[0]
	alice := b.register(t, "alice")
	b.register(t, "bob")
	m1, _, err := b.c.LimitGroups.AddMember(ctx, gid, "alice")
	if err != nil || m1.ExternalID != "alice" || !m1.AddedOn.Equal(t0) {
		t.Fatalf("add %+v %v", m1, err)
	}
	b.clock.Advance(time.Hour)
	m2, _, err := b.c.LimitGroups.AddMember(ctx, gid, alice.ParticipantID)
	if err != nil || !m2.AddedOn.Equal(m1.AddedOn) {
		t.Fatalf("re-add %+v %v", m2, err)
	}
	if _, _, err := b.c.LimitGroups.AddMember(ctx, gid, "bob"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range collect(t, b.c.LimitGroups.ListMembersIter(ctx, gid, &provider.ListOptions{Limit: 1})) {
		got = append(got, m.ExternalID)
	}
	if !slices.Equal(got, []string{"alice", "bob"}) {
		t.Fatalf("members %v", got)
	}
	for range 2 {
		if resp, err := b.c.LimitGroups.RemoveMember(ctx, gid, "alice"); err != nil || resp.StatusCode != 204 {
			t.Fatalf("remove: %v", err)
		}
	}
	ms, _, _ := b.c.LimitGroups.ListMembers(ctx, gid, nil)
	if len(ms) != 1 || ms[0].ExternalID != "bob" {
		t.Fatalf("after remove %v", ms)
	}
	_, _, err = b.c.LimitGroups.AddMember(ctx, gid, "nobody")
	wantIs(t, err, provider.ErrNotFound)
	_, err = b.c.LimitGroups.RemoveMember(ctx, "missing", "bob")
	wantIs(t, err, provider.ErrNotFound)
	_, _, err = b.c.LimitGroups.ListMembers(ctx, "missing", nil)
	wantIs(t, err, provider.ErrNotFound)
}

func TestLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "alice")

	_, _, err := b.c.Limits.GetPolicy(ctx)
	wantIs(t, err, provider.ErrNotFound)
	if _, err := b.svc.SetPolicy("local", providertest.Limits{DailyAmount: providertest.USDPtr("500.00")}); err != nil {
		t.Fatal(err)
	}
	pol, _, err := b.c.Limits.GetPolicy(ctx)
	if err != nil || pol.DailyAmount == nil || pol.DailyAmount.String() != "500.00 USD" || pol.VersionID == "" || pol.Currency != "USD" {
		t.Fatalf("policy %+v %v", pol, err)
	}

	o, _, err := b.c.Limits.PutOverride(ctx, "alice", &provider.OverrideUpdate{LimitsUpdate: provider.LimitsUpdate{
		DailyAmount: provider.Value(provider.MustUSD("900"))}})
	if err != nil || o.ExpiresOn != nil || o.DailyAmount.String() != "900.00 USD" {
		t.Fatalf("override %+v %v", o, err)
	}
	eff, _ := b.svc.EffectiveLimits("local", "alice")
	if eff.DailyAmount.Value.StringFixed(2) != "900.00" {
		t.Fatalf("the override does not apply: %+v", eff)
	}
	_, _, err = b.c.Limits.PutOverride(ctx, "alice", &provider.OverrideUpdate{ExpectedVersionID: "stale"})
	wantIs(t, err, provider.ErrVersionConflict)
	_, _, err = b.c.Limits.PutOverride(ctx, "alice", &provider.OverrideUpdate{Reason: "vip", ExpectedVersionID: o.VersionID})
	if e := wantIs(t, err, provider.ErrValidation); len(e.Errors) < 2 {
		t.Fatalf("support override errors %+v", e.Errors)
	}
	if _, err := b.c.Limits.DeleteOverride(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if eff, _ := b.svc.EffectiveLimits("local", "alice"); eff.DailyAmount.Value.StringFixed(2) != "500.00" {
		t.Fatalf("after delete: %+v", eff)
	}
	_, err = b.c.Limits.DeleteOverride(ctx, "nobody")
	wantIs(t, err, provider.ErrNotFound)
	_, _, err = b.c.Limits.PutOverride(ctx, "nobody", &provider.OverrideUpdate{})
	wantIs(t, err, provider.ErrNotFound)
}

func TestReviewsAndPayments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "alice")
	var reviews []string
	var payouts []string
	for i := range 3 {
		b.clock.Advance(time.Minute)
		p, err := b.svc.SeedPayout("local", providertest.Payout{SenderExternalID: "alice", Amount: providertest.USD(fmt.Sprintf("%d.25", i+1)),
			RecipientName: "Rita", Memo: "rent"})
		if err != nil {
			t.Fatal(err)
		}
		rv, _ := b.svc.SeedReview("local", p.PayoutID, "velocity")
		reviews = append([]string{rv.ReviewID}, reviews...) // newest first
		payouts = append([]string{p.PayoutID}, payouts...)
	}

	var got []string
	for _, rv := range collect(t, b.c.Reviews.ListIter(ctx, &provider.ReviewListOptions{ListOptions: provider.ListOptions{Limit: 2}})) {
		got = append(got, rv.ReviewID)
		if rv.Status != provider.ReviewPending || rv.Payout.Amount.Currency.Code != "USD" || rv.Payout.RecipientName != "Rita" {
			t.Fatalf("review %+v", rv)
		}
	}
	if !slices.Equal(got, reviews) {
		t.Fatalf("reviews %v, want %v", got, reviews)
	}
	full, _, err := b.c.Reviews.Get(ctx, reviews[0])
	if err != nil || full.Payout.SenderExternalID != "alice" || full.Payout.Memo != "rent" || full.Payout.Amount.String() != "3.25 USD" {
		t.Fatalf("get %+v %v", full, err)
	}
	rv, _, err := b.c.Reviews.Resolve(ctx, reviews[0], &provider.ReviewResolution{Resolution: provider.ReviewRejected, Notes: "fraud"})
	if err != nil || rv.Status != provider.ReviewRejected || rv.ResolvedOn == nil {
		t.Fatalf("resolve %+v %v", rv, err)
	}
	if p, _ := b.svc.Payout("local", payouts[0]); p.Status != providertest.PayoutCancelled {
		t.Fatalf("payout %s", p.Status)
	}
	_, _, err = b.c.Reviews.Resolve(ctx, reviews[0], &provider.ReviewResolution{Resolution: provider.ReviewApproved})
	wantIs(t, err, provider.ErrConflict)
	rejected, _, err := b.c.Reviews.List(ctx, &provider.ReviewListOptions{Status: provider.ReviewRejected})
	if err != nil || len(rejected) != 1 || b.last(t, "").Query != "status=rejected" {
		t.Fatalf("rejected %v %v", rejected, err)
	}
	_, _, err = b.c.Reviews.List(ctx, &provider.ReviewListOptions{Status: "escalated"})
	wantIs(t, err, provider.ErrBadRequest)
	_, _, err = b.c.Reviews.Get(ctx, "missing")
	wantIs(t, err, provider.ErrNotFound)
	_, _, err = b.c.Reviews.Resolve(ctx, "missing", &provider.ReviewResolution{Resolution: provider.ReviewApproved})
	wantIs(t, err, provider.ErrNotFound)

	var ps []string
	for _, p := range collect(t, b.c.Payments.ListIter(ctx, "alice", &provider.ListOptions{Limit: 1})) {
		ps = append(ps, p.ID)
		if p.Direction != "sent" || p.Counterparty.DisplayName != "Rita" || p.Memo != "rent" {
			t.Fatalf("payment %+v", p)
		}
	}
	if !slices.Equal(ps, payouts) {
		t.Fatalf("payments %v, want %v", ps, payouts)
	}
	_, _, err = b.c.Payments.List(ctx, "nobody", nil)
	wantIs(t, err, provider.ErrNotFound)
}

func TestFundingSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.register(t, "alice")
	req := &provider.FundingSourceCreateRequest{ProviderSourceID: "tok_visa", DisplayName: "Visa", FundingType: provider.FundingCard, Last4: "4242"}
	fs, _, err := b.c.FundingSources.Create(ctx, "alice", req)
	if err != nil || fs.FundingSourceID == "" {
		t.Fatalf("create %+v %v", fs, err)
	}
	again, _, err := b.c.FundingSources.Create(ctx, "alice", req)
	if err != nil || again.FundingSourceID != fs.FundingSourceID {
		t.Fatalf("resend %+v %v", again, err)
	}
	got, _, err := b.c.FundingSources.Get(ctx, "alice", fs.FundingSourceID)
	if err != nil || got.DisplayName != "Visa" || got.Last4 != "4242" || got.FundingType != "card" || got.DisabledOn != nil {
		t.Fatalf("get %+v %v", got, err)
	}
	name := "Work Visa"
	up, _, err := b.c.FundingSources.Update(ctx, "alice", fs.FundingSourceID, &provider.FundingSourceUpdate{DisplayName: &name})
	if err != nil || up.DisplayName != name || up.Last4 != "4242" || up.FundingSourceID != fs.FundingSourceID {
		t.Fatalf("update %+v %v", up, err)
	}
	if body := string(b.last(t, "").Body); body != `{"displayName":"Work Visa"}` {
		t.Fatalf("update body %s", body)
	}
	empty := ""
	_, _, err = b.c.FundingSources.Update(ctx, "alice", fs.FundingSourceID, &provider.FundingSourceUpdate{Last4: &empty})
	if e := wantIs(t, err, provider.ErrValidation); !hasPointer(e, "/last4") {
		t.Fatalf("%+v", e)
	}
	_, _, err = b.c.FundingSources.Create(ctx, "alice", &provider.FundingSourceCreateRequest{ProviderSourceID: "x", FundingType: "cash"})
	if e := wantIs(t, err, provider.ErrValidation); !hasPointer(e, "/fundingType") || !hasPointer(e, "/displayName") {
		t.Fatalf("%+v", e)
	}
	_, _, err = b.c.FundingSources.Get(ctx, "alice", "missing")
	wantIs(t, err, provider.ErrNotFound)
	_, _, err = b.c.FundingSources.Create(ctx, "nobody", req)
	wantIs(t, err, provider.ErrNotFound)

	b.svc.AddAPIKey(providertest.APIKey{ID: "k2", Secret: "s2", ProviderID: "bank2"})
	other, _ := provider.NewClient(b.url, provider.WithProviderID("bank2"), provider.WithAPIKey("k2", "s2"))
	_, _, err = other.FundingSources.Get(ctx, "alice", fs.FundingSourceID)
	wantIs(t, err, provider.ErrNotFound)
}

func hasPointer(e *provider.Error, p string) bool { _, ok := e.FieldError(p); return ok }

func TestSigningSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	first, resp, err := b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rot-1"))
	if err != nil || resp.StatusCode != 201 || resp.Header.Get("X-Idempotency-Key") != "rot-1" {
		t.Fatalf("create %+v %v", first, err)
	}
	_, _, err = b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rot-1"))
	if e := wantIs(t, err, provider.ErrIdempotencyKeyReused); strings.Contains(string(e.Body), first.Secret) {
		t.Fatal("the replay carries the plaintext")
	}
	gate := b.svc.GateSigningSecretCreates()
	t.Cleanup(gate.Open)
	done := make(chan error, 1)
	go func() { _, _, err := b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rot-2")); done <- err }()
	<-gate.Entered()
	_, _, err = b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rot-2"))
	wantIs(t, err, provider.ErrIdempotencyRequestInProgress)
	gate.Open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(24 * time.Hour)
	third, _, err := b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey("rot-1"))
	if err != nil || third.SecretID == first.SecretID {
		t.Fatalf("after 24h %+v %v", third, err)
	}
	list := collect(t, b.c.SigningSecrets.ListIter(ctx, &provider.ListOptions{Limit: 1}))
	if len(list) != 3 || list[0].SecretID != third.SecretID || list[2].SecretID != first.SecretID {
		t.Fatalf("list %+v", list)
	}
	for _, s := range list {
		if s.Secret != "" {
			t.Fatal("list carries a secret value")
		}
	}
	_, _, err = b.c.SigningSecrets.Create(ctx, provider.WithIdempotencyKey(strings.Repeat("k", 300)))
	wantIs(t, err, provider.ErrBadRequest)
	if _, err := (&provider.SigningSecret{Secret: "c2hvcnQ="}).Key(); err == nil {
		t.Fatal("a short key decoded")
	}
}

func TestProviderRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	rec, _, err := b.c.Provider.Update(ctx, &provider.ProviderUpdateRequest{ShortName: "Acme01"})
	if err != nil || rec.ShortName != "Acme01" {
		t.Fatalf("%+v %v", rec, err)
	}
	if n, _ := b.svc.ShortName("local"); n != "Acme01" {
		t.Fatalf("fake has %q", n)
	}
	if r := b.last(t, "PATCH /providers/{providerID}"); string(r.Body) != `{"shortName":"Acme01"}` || r.Path != "/providers/local" {
		t.Fatalf("%s %s", r.Path, r.Body)
	}
	_, _, err = b.c.Provider.Update(ctx, &provider.ProviderUpdateRequest{ShortName: "Acme-Bank-Of-America"})
	if e := wantIs(t, err, provider.ErrBadRequest); !hasPointer(e, "/shortName") {
		t.Fatalf("%+v", e)
	}
}
