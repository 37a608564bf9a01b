package providertest

// Conformance scenario FundingSources.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func (c *conformance) fundingSources(t *testing.T) {
	f := c.newFundingSource(t)
	base, id, src := f.base, f.id, f.src

	t.Run("CreateIsIdempotentOnParticipantTypeAndSource", func(t *testing.T) {
		r := c.req(t, "POST", c.p("/participants/%s/funding-sources", f.pid), fundingSourceCreate(FundingCard, src, "Visa again", "4242"), nil)
		expect(t, r, http.StatusCreated)
		if got := decode[fundingSourceIDAnswer](t, r).FundingSourceID; got != id {
			t.Fatalf("resend gave %s, want %s", got, id)
		}
		r = c.req(t, "POST", base, fundingSourceCreate(FundingBankAccount, src, "Checking", "0001"), nil)
		expect(t, r, http.StatusCreated)
		if decode[fundingSourceIDAnswer](t, r).FundingSourceID == id {
			t.Fatal("another fundingType reused the ID")
		}
	})
	t.Run("Get", func(t *testing.T) {
		r := c.req(t, "GET", base+"/"+id, "", nil)
		expect(t, r, http.StatusOK)
		fs := decode[fundingSourceAnswer](t, r).FundingSource
		if fs.FundingSourceID != id || fs.FundingType != FundingCard || fs.ProviderSourceID != src ||
			fs.DisplayName != "Visa" || fs.Last4 != "4242" || fs.CreatedOn == "" || has(fs.DisabledOn) {
			t.Fatalf("funding source: %s", r.Body)
		}
		expect(t, c.req(t, "GET", base+"/fs-missing-"+c.run, "", nil), http.StatusNotFound)
		expect(t, c.req(t, "GET", c.p("/participants/%s/funding-sources/%s", c.externalID("nobody-"), id), "", nil), http.StatusNotFound)
		_, otherExt := c.active(t)
		expect(t, c.req(t, "GET", c.p("/participants/%s/funding-sources/%s", otherExt, id), "", nil), http.StatusNotFound)
	})
	t.Run("PatchKeepsIDAndImmutableFields", func(t *testing.T) { c.fundingSourcePatch(t, f) })
	t.Run("CreateValidation", func(t *testing.T) { c.fundingSourceValidation(t, base) })
	t.Run("OtherProvidersSourceIsNotFound", func(t *testing.T) {
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		other, kid, secret, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		auth := hdr{"Authorization": basic(kid, secret)}
		expect(t, c.req(t, "GET", "/providers/"+other+"/participants/"+f.pid+"/funding-sources/"+id, "", auth), http.StatusNotFound)
	})
	t.Run("ResendReactivatesRemovedSource", func(t *testing.T) { c.fundingSourceReactivation(t, f) })
}

// fundingSource is the funding source the FundingSources scenario creates:
// its participant, the collection's path, its providerSourceID and its ID.
type fundingSource struct {
	pid, base, src, id string
}

// newFundingSource registers an active participant and creates a card
// funding source for it.
func (c *conformance) newFundingSource(t *testing.T) fundingSource {
	t.Helper()
	pid, ext := c.active(t)
	f := fundingSource{pid: pid, base: c.p("/participants/%s/funding-sources", url.PathEscape(ext)), src: "card-" + c.run}
	r := c.req(t, "POST", f.base, fundingSourceCreate(FundingCard, f.src, "Visa", "4242"), nil)
	expect(t, r, http.StatusCreated)
	f.id = decode[fundingSourceIDAnswer](t, r).FundingSourceID
	if f.id == "" {
		t.Fatalf("no fundingSourceID: %s", r.Body)
	}
	return f
}

// fundingSourceCreate is the JSON body that creates a funding source.
func fundingSourceCreate(typ, src, name, last4 string) string {
	return fmt.Sprintf(`{"fundingType":%q,"providerSourceID":%q,"displayName":%q,"last4":%q}`, typ, src, name, last4)
}

// fundingSourcePatch checks that a PATCH changes the display fields, keeps
// the ID, and refuses the immutable fields and invalid values.
func (c *conformance) fundingSourcePatch(t *testing.T, f fundingSource) {
	base, id := f.base, f.id
	r := c.req(t, "PATCH", base+"/"+id, `{"displayName":"Work Visa","last4":"1111"}`, nil)
	expect(t, r, http.StatusOK)
	fs := decode[fundingSourceAnswer](t, r).FundingSource
	if fs.FundingSourceID != id || fs.DisplayName != "Work Visa" || fs.Last4 != "1111" ||
		fs.ProviderSourceID != f.src || fs.FundingType != FundingCard {
		t.Fatalf("patched: %s", r.Body)
	}
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"providerSourceID":"other"}`, nil), 422, "/providerSourceID")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"fundingType":"bank_account"}`, nil), 422, "/fundingType")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"last4":""}`, nil), 422, "/last4")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"last4":"12345"}`, nil), 422, "/last4")
	expectPointer(t, c.req(t, "PATCH", base+"/"+id, `{"displayName":""}`, nil), 422, "/displayName")
	expect(t, c.req(t, "PATCH", c.p("/participants/%s/funding-sources/%s", c.externalID("nobody-"), id), `{"displayName":"x"}`, nil), http.StatusNotFound)
}

// fundingSourceValidation checks the validation of a create, on the
// funding-sources collection at base.
func (c *conformance) fundingSourceValidation(t *testing.T, base string) {
	long := strings.Repeat("x", 257)
	expectPointer(t, c.req(t, "POST", base, fundingSourceCreate(FundingCard, "s1-"+c.run, "", ""), nil), 422, "/displayName")
	expectPointer(t, c.req(t, "POST", base, fundingSourceCreate(FundingCard, long, "n", ""), nil), 422, "/providerSourceID")
	expectPointer(t, c.req(t, "POST", base, fundingSourceCreate(FundingCard, "s2-"+c.run, long, ""), nil), 422, "/displayName")
	expectPointer(t, c.req(t, "POST", base, fundingSourceCreate("cash", "s3-"+c.run, "n", ""), nil), 422, "/fundingType")
	expectPointer(t, c.req(t, "POST", base, fundingSourceCreate(FundingCard, "s4-"+c.run, "n", "12345"), nil), 422, "/last4")
	expect(t, c.req(t, "POST", base, fundingSourceCreate(FundingCard, strings.Repeat("y", 256), strings.Repeat("n", 256), ""), nil), http.StatusCreated)
	expect(t, c.req(t, "POST", c.p("/participants/%s/funding-sources", c.externalID("nobody-")), fundingSourceCreate(FundingCard, "s5", "n", ""), nil), http.StatusNotFound)
	expectProblem(t, c.req(t, "POST", base, `{"fundingType":`, nil), http.StatusBadRequest)
}

// fundingSourceReactivation checks that resending the create of a removed
// funding source reactivates it under the same ID.
func (c *conformance) fundingSourceReactivation(t *testing.T, f fundingSource) {
	need(t, c.tg.Hooks.RemoveFundingSource != nil, "RemoveFundingSource")
	base, id := f.base, f.id
	if err := c.tg.Hooks.RemoveFundingSource(id); err != nil {
		t.Fatal(err)
	}
	r := c.req(t, "GET", base+"/"+id, "", nil)
	if on, _ := value(decode[fundingSourceAnswer](t, r).FundingSource.DisabledOn); on == "" {
		t.Fatalf("removed source has no disabledOn: %s", r.Body)
	}
	r = c.req(t, "POST", base, fundingSourceCreate(FundingCard, f.src, "Visa", "4242"), nil)
	expect(t, r, http.StatusCreated)
	if decode[fundingSourceIDAnswer](t, r).FundingSourceID != id {
		t.Fatalf("reactivation gave a new ID: %s", r.Body)
	}
	r = c.req(t, "GET", base+"/"+id, "", nil)
	if decode[fundingSourceAnswer](t, r).FundingSource.DisabledOn.IsSpecified() {
		t.Fatalf("reactivated source still disabled: %s", r.Body)
	}
}
