package providertest

// Conformance scenarios of limits: LimitGroups, LimitGroupMembers,
// ParticipantOverrides and ProviderPolicy.

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/provider"
)

func money(v string) string {
	return fmt.Sprintf(`{"currency":{"code":"USD","decimalPlaces":2},"value":%q}`, v)
}

func (c *conformance) limitGroups(t *testing.T) {
	r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(
		`{"name":"gold %s","description":"d","dailyAmount":%s,"weeklyAmount":%s,"dailySendCount":5}`,
		c.run, money("100.00"), money("200.00")), nil)
	expect(t, r, http.StatusCreated)
	g := decode[groupAnswer](t, r).Group
	id, v1 := g.GroupID, g.VersionID
	if id == "" || v1 == "" || g.Currency != provider.USDCurrency().Code || g.CreatedOn == "" {
		t.Fatalf("group: %s", r.Body)
	}
	if !isUSD(g.DailyAmount, "100.00") || !isCount(g.DailySendCount, 5) {
		t.Fatalf("dimensions not echoed: %s", r.Body)
	}

	t.Run("CreateValidation", func(t *testing.T) {
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"), `{"description":"no name"}`, nil), 422, "/name")
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"),
			`{"name":"eur","dailyAmount":{"currency":{"code":"EUR","decimalPlaces":2},"value":"1.00"}}`, nil),
			422, "/dailyAmount/currency/code")
		expectPointer(t, c.req(t, "POST", c.p("/limit-groups"), `{"name":"neg","dailySendCount":-1}`, nil),
			422, "/dailySendCount")
		expectProblem(t, c.req(t, "POST", c.p("/limit-groups"), `{"name":`, nil), http.StatusBadRequest)
	})

	path := c.p("/limit-groups/%s", id)
	var v2 string
	t.Run("PatchAbsentKeepsNullClearsValueSets", func(t *testing.T) {
		r := c.req(t, "PATCH", path, fmt.Sprintf(`{"dailyAmount":null,"perTransactionAmount":%s,"expectedVersionID":%q}`,
			money("50.00"), v1), nil)
		expect(t, r, http.StatusOK)
		g := decode[groupAnswer](t, r).Group
		if g.DailyAmount.IsSpecified() {
			t.Fatalf("null did not clear dailyAmount: %s", r.Body)
		}
		if !isUSD(g.WeeklyAmount, "200.00") || !isUSD(g.PerTransactionAmount, "50.00") ||
			g.Description != "d" || !isCount(g.DailySendCount, 5) {
			t.Fatalf("absent fields changed or value not set: %s", r.Body)
		}
		v2 = g.VersionID
		if v2 == "" || v2 == v1 {
			t.Fatalf("versionID %q after patch (was %q)", v2, v1)
		}
	})
	t.Run("StaleVersionIsConflict", func(t *testing.T) {
		expectCode(t, c.req(t, "PATCH", path, fmt.Sprintf(`{"name":"x","expectedVersionID":%q}`, v1), nil), "version_conflict")
	})
	t.Run("NullClearsNameAndDescription", func(t *testing.T) {
		r := c.req(t, "PATCH", path, fmt.Sprintf(`{"name":null,"description":null,"dailySendCount":null,"expectedVersionID":%q}`, v2), nil)
		expect(t, r, http.StatusOK)
		g := decode[groupAnswer](t, r).Group
		if g.Name != "" || g.Description != "" || has(g.DailySendCount) {
			t.Fatalf("not cleared: %s", r.Body)
		}
	})
	t.Run("PatchValidationAndMissing", func(t *testing.T) {
		expectPointer(t, c.req(t, "PATCH", path, `{"weeklyAmount":`+money("1.001")+`}`, nil), 422, "/weeklyAmount/value")
		expect(t, c.req(t, "PATCH", c.p("/limit-groups/%s", "grp-missing-"+c.run), `{"name":"x"}`, nil), http.StatusNotFound)
	})
}

func (c *conformance) newGroup(t *testing.T) string {
	t.Helper()
	r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(`{"name":"members %s"}`, c.run), nil)
	expect(t, r, http.StatusCreated)
	return decode[groupAnswer](t, r).Group.GroupID
}

func (c *conformance) limitGroupMembers(t *testing.T) {
	gid := c.newGroup(t)
	pid, ext := c.active(t)
	member := func(ref string) string { return c.p("/limit-groups/%s/members/%s", gid, url.PathEscape(ref)) }

	r := c.req(t, "PUT", member(ext), "", nil)
	expect(t, r, http.StatusOK)
	m1 := decode[memberAnswer](t, r).Member
	if m1.ExternalID != ext || m1.AddedOn == "" {
		t.Fatalf("member: %s", r.Body)
	}
	if c.tg.Hooks.Advance != nil {
		c.tg.Hooks.Advance(time.Minute)
	}
	r = c.req(t, "PUT", member(pid), "", nil)
	expect(t, r, http.StatusOK)
	if m2 := decode[memberAnswer](t, r).Member; m2.AddedOn != m1.AddedOn {
		t.Fatalf("second PUT changed the membership: %v then %v", m1, m2)
	}
	r = c.req(t, "GET", c.p("/limit-groups/%s/members", gid), "", nil)
	if ms := decode[membersAnswer](t, r).Members; ms == nil || len(*ms) != 1 || (*ms)[0].ExternalID != ext {
		t.Fatalf("members: %s", r.Body)
	}
	expectProblem(t, c.req(t, "GET", c.p("/limit-groups/%s/members?limit=101", gid), "", nil), http.StatusBadRequest)

	expect(t, c.req(t, "DELETE", member(pid), "", nil), http.StatusNoContent)
	expect(t, c.req(t, "DELETE", member(ext), "", nil), http.StatusNoContent)
	r = c.req(t, "GET", c.p("/limit-groups/%s/members", gid), "", nil)
	if ms := decode[membersAnswer](t, r).Members; ms != nil && len(*ms) != 0 {
		t.Fatalf("members after delete: %s", r.Body)
	}

	expect(t, c.req(t, "PUT", member(c.externalID("nobody-")), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "PUT", c.p("/limit-groups/%s/members/%s", "grp-missing-"+c.run, pid), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "DELETE", c.p("/limit-groups/%s/members/%s", "grp-missing-"+c.run, pid), "", nil), http.StatusNotFound)
	expect(t, c.req(t, "GET", c.p("/limit-groups/%s/members", "grp-missing-"+c.run), "", nil), http.StatusNotFound)
}

func (c *conformance) overrides(t *testing.T) {
	_, ext := c.active(t)
	path := c.p("/participants/%s/limits", url.PathEscape(ext))
	r := c.req(t, "PUT", path, fmt.Sprintf(`{"dailyAmount":%s,"monthlyAmount":%s,"expiresOn":null}`,
		money("10.00"), money("300.00")), nil)
	expect(t, r, http.StatusOK)
	o := decode[overrideAnswer](t, r).Override
	v1 := o.VersionID
	if v1 == "" || o.Currency != provider.USDCurrency().Code || o.CreatedOn == "" || has(o.ExpiresOn) {
		t.Fatalf("override: %s", r.Body)
	}

	r = c.req(t, "PUT", path, fmt.Sprintf(`{"weeklyAmount":%s,"monthlyAmount":null,"expectedVersionID":%q}`, money("20.00"), v1), nil)
	expect(t, r, http.StatusOK)
	o = decode[overrideAnswer](t, r).Override
	if !isUSD(o.DailyAmount, "10.00") || !isUSD(o.WeeklyAmount, "20.00") || has(o.MonthlyAmount) {
		t.Fatalf("absent must keep, value set, null clear: %s", r.Body)
	}
	v2 := o.VersionID

	expectCode(t, c.req(t, "PUT", path, fmt.Sprintf(`{"dailySendCount":3,"expectedVersionID":%q}`, v1), nil), "version_conflict")
	expectPointer(t, c.req(t, "PUT", path, `{"dailyAmount":{"currency":{"code":"EUR","decimalPlaces":2},"value":"1.00"}}`, nil),
		422, "/dailyAmount/currency/code")

	t.Run("SupportOverrideRules", func(t *testing.T) {
		soon := c.tg.Hooks.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		late := c.tg.Hooks.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
		body := func(extra string) string {
			return fmt.Sprintf(`{"dailyAmount":%s,%s,"expectedVersionID":%q}`, money("999.00"), extra, v2)
		}
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":"`+late+`"`), nil), 422, "/expiresOn")
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":null`), nil), 422, "/expiresOn")
		expectPointer(t, c.req(t, "PUT", path, body(`"reason":"vip","expiresOn":"`+soon+`"`), nil), 422, "/reference")
		expectPointer(t, c.req(t, "PUT", path, body(`"reference":"T-1","expiresOn":"`+soon+`"`), nil), 422, "/reason")
		r := c.req(t, "PUT", path, body(`"reason":"vip","reference":"T-1","expiresOn":"`+soon+`"`), nil)
		expect(t, r, http.StatusOK)
		o := decode[overrideAnswer](t, r).Override
		if exp, _ := value(o.ExpiresOn); o.Reason != "vip" || o.Reference != "T-1" || exp == "" {
			t.Fatalf("support override: %s", r.Body)
		}
	})

	t.Run("DeleteThenFirstWriteAgain", func(t *testing.T) {
		r := c.req(t, "DELETE", path, "", nil)
		if r.Status/100 != 2 {
			t.Fatalf("delete: %v", r)
		}
		expect(t, c.req(t, "PUT", path, `{"dailySendCount":2}`, nil), http.StatusOK)
	})
	expect(t, c.req(t, "PUT", c.p("/participants/%s/limits", c.externalID("nobody-")), `{"dailySendCount":1}`, nil), http.StatusNotFound)
}

func (c *conformance) policy(t *testing.T) {
	if h := c.tg.Hooks.SetPolicy; h != nil {
		if err := h(Limits{DailyAmount: USDPtr("1000.00"), DailySendCount: Count(20)}); err != nil {
			t.Fatal(err)
		}
	}
	r := c.req(t, "GET", c.p("/limits"), "", nil)
	if r.Status == http.StatusNotFound && c.tg.Hooks.SetPolicy == nil {
		t.Skip("the target has no policy and no SetPolicy hook")
	}
	expect(t, r, http.StatusOK)
	p := decode[policyAnswer](t, r).Policy
	if p.VersionID == "" || p.CreatedOn == "" || p.Currency != provider.USDCurrency().Code {
		t.Fatalf("policy: %s", r.Body)
	}
	if c.tg.Hooks.SetPolicy != nil && (!isUSD(p.DailyAmount, "1000.00") || !isCount(p.DailySendCount, 20)) {
		t.Fatalf("policy dimensions: %s", r.Body)
	}
}
