package providertest

// Conformance scenarios of access to the API: Authentication, VersionHeader,
// Pagination and ProviderRecord.

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func (c *conformance) authentication(t *testing.T) {
	path := c.p("/limit-groups")
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": ""}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": basic(c.tg.APIKeyID, "wrong")}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "GET", path, "", hdr{"Authorization": "Bearer " + c.tg.APIKeySecret}), http.StatusUnauthorized)
	expectBodiless(t, c.req(t, "POST", c.p("/participants"), participantBody(c.externalID("")),
		hdr{"Authorization": ""}), http.StatusUnauthorized)
	expect(t, c.req(t, "GET", path, "", nil), http.StatusOK)

	t.Run("EveryEndpointNeedsTheAPIKey", func(t *testing.T) {
		for _, e := range providerEndpoints {
			path := c.p("%s", e.path)
			for _, auth := range []string{"", basic(c.tg.APIKeyID, c.tg.APIKeySecret+"x"), "Bearer " + c.tg.APIKeySecret} {
				if r := c.req(t, e.method, path, e.body, hdr{"Authorization": auth}); r.Status != http.StatusUnauthorized {
					t.Errorf("%s %s with Authorization %q: %v, want 401", e.method, e.path, auth, r)
				}
			}
		}
	})
	t.Run("OtherProvidersPathIsForbidden", func(t *testing.T) {
		need(t, c.tg.Hooks.OtherProvider != nil, "OtherProvider")
		other, _, _, err := c.tg.Hooks.OtherProvider()
		if err != nil {
			t.Fatal(err)
		}
		// Rule 3: for signing-secret and provider-update endpoints the
		// path providerID must be the caller's account.
		expect(t, c.req(t, "GET", "/providers/"+other+"/signing-secrets", "", nil), http.StatusForbidden)
		expect(t, c.req(t, "POST", "/providers/"+other+"/signing-secrets", "",
			hdr{"X-Idempotency-Key": "conf-" + randomHex(6)}), http.StatusForbidden)
		expect(t, c.req(t, "PATCH", "/providers/"+other, `{"shortName":"Other1"}`, nil), http.StatusForbidden)
		expect(t, c.req(t, "GET", "/providers/"+other+"/limit-groups", "", nil), http.StatusForbidden)
	})
}

// providerEndpoints is every {providerID}-scoped endpoint of the spec, with
// placeholder IDs and a well-formed body, relative to /providers/{providerID}.
var providerEndpoints = []struct{ method, path, body string }{
	{"PATCH", "", `{"shortName":"Acme01"}`},
	{"POST", "/participants", participantBody("auth-probe")},
	{"GET", "/participants/p-probe", ""},
	{"GET", "/limit-groups", ""},
	{"POST", "/limit-groups", `{"name":"probe"}`},
	{"PATCH", "/limit-groups/g-probe", `{"name":"probe"}`},
	{"GET", "/limit-groups/g-probe/members", ""},
	{"PUT", "/limit-groups/g-probe/members/p-probe", ""},
	{"DELETE", "/limit-groups/g-probe/members/p-probe", ""},
	{"PUT", "/participants/p-probe/limits", `{"dailySendCount":1}`},
	{"DELETE", "/participants/p-probe/limits", ""},
	{"GET", "/limits", ""},
	{"GET", "/reviews", ""},
	{"GET", "/reviews/r-probe", ""},
	{"POST", "/reviews/r-probe/resolutions", `{"resolution":"approved"}`},
	{"GET", "/participants/p-probe/payments", ""},
	{"POST", "/participants/p-probe/funding-sources", `{"fundingType":"card","providerSourceID":"s","displayName":"n"}`},
	{"GET", "/participants/p-probe/funding-sources/f-probe", ""},
	{"PATCH", "/participants/p-probe/funding-sources/f-probe", `{"displayName":"n"}`},
	{"GET", "/signing-secrets", ""},
	{"POST", "/signing-secrets", ""},
}

func (c *conformance) versionHeader(t *testing.T) {
	path := c.p("/signing-secrets")
	expect(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": "v2026.10.00"}), http.StatusOK)
	expect(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": ""}), http.StatusOK)
	expectProblem(t, c.req(t, "GET", path, "", hdr{"X-Service-Version": "2026-10"}), http.StatusBadRequest)
}

func (c *conformance) pagination(t *testing.T) {
	var created []string
	for i := range 3 {
		r := c.req(t, "POST", c.p("/limit-groups"), fmt.Sprintf(`{"name":"page %s %d"}`, c.run, i), nil)
		expect(t, r, http.StatusCreated)
		created = append(created, decode[groupAnswer](t, r).Group.GroupID)
	}
	for _, bad := range []string{"0", "101", "-1", "abc", ""} {
		expectProblem(t, c.req(t, "GET", c.p("/limit-groups?limit=%s", bad), "", nil), http.StatusBadRequest)
	}
	// Every list endpoint checks limit.
	pid := c.register(t, c.externalID(""))
	for _, list := range []string{"/limit-groups?", "/limit-groups/" + created[0] + "/members?",
		"/reviews?", "/reviews?status=approved&", "/participants/" + pid + "/payments?", "/signing-secrets?"} {
		for _, bad := range []string{"0", "101"} {
			expectProblem(t, c.req(t, "GET", c.p("%slimit=%s", list, bad), "", nil), http.StatusBadRequest)
		}
		expect(t, c.req(t, "GET", c.p("%slimit=1", list), "", nil), http.StatusOK)
		expect(t, c.req(t, "GET", c.p("%slimit=100", list), "", nil), http.StatusOK)
	}
	expectProblem(t, c.req(t, "GET", c.p("/limit-groups?cursor=not-a-cursor!"), "", nil), http.StatusBadRequest)
	expect(t, c.req(t, "GET", c.p("/limit-groups?limit=100"), "", nil), http.StatusOK)

	// Walk every page of one item; every group created is seen exactly once.
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("pagination does not end")
		}
		q := "?limit=1"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := c.req(t, "GET", c.p("/limit-groups%s", q), "", nil)
		page := decode[groupsAnswer](t, r)
		if page.Groups == nil || len(*page.Groups) > 1 {
			t.Fatalf("page: %s", r.Body)
		}
		for _, g := range *page.Groups {
			seen[g.GroupID]++
		}
		if page.HasMore == nil {
			t.Fatalf("hasMore missing: %s", r.Body)
		}
		next, hasNext := value(page.NextCursor)
		if !*page.HasMore {
			if hasNext && next != "" {
				t.Fatalf("last page carries nextCursor %q", next)
			}
			break
		}
		if next == "" {
			t.Fatal("hasMore without nextCursor")
		}
		cursor = next
	}
	for _, id := range created {
		if seen[id] != 1 {
			t.Fatalf("group %s seen %d times walking pages", id, seen[id])
		}
	}

	// An empty result is an empty list.
	r := c.req(t, "GET", c.p("/limit-groups/%s/members", created[0]), "", nil)
	if m := decode[membersAnswer](t, r); m.Members == nil || len(*m.Members) != 0 || m.HasMore == nil || *m.HasMore || has(m.NextCursor) {
		t.Fatalf("empty page: %s", r.Body)
	}
}

func (c *conformance) providerRecord(t *testing.T) {
	r := c.req(t, "PATCH", c.p(""), `{"shortName":"Acme01"}`, nil)
	expect(t, r, http.StatusOK)
	if decode[shortNameAnswer](t, r).ShortName != "Acme01" {
		t.Fatalf("shortName: %s", r.Body)
	}
	expect(t, c.req(t, "PATCH", c.p(""), `{"shortName":"AB"}`, nil), http.StatusOK)
	expect(t, c.req(t, "PATCH", c.p(""), `{"shortName":"ABCDEFGHIJ12"}`, nil), http.StatusOK)
	for _, bad := range []string{`{"shortName":"A"}`, `{"shortName":"ABCDEFGHIJ123"}`, `{"shortName":"ab-c"}`,
		`{"shortName":"ab c"}`, `{"shortName":"Café"}`, `{}`, `{"shortName":12}`} {
		expectPointer(t, c.req(t, "PATCH", c.p(""), bad, nil), http.StatusBadRequest, "/shortName")
	}
	expectProblem(t, c.req(t, "PATCH", c.p(""), `{"shortName":`, nil), http.StatusBadRequest)
}
