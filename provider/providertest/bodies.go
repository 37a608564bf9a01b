package providertest

// The bodies the fake answers with: each wraps the resource types of
// types.go under the member the spec names ({"group": …}, a page of
// {"groups": […], "hasMore": …, "nextCursor": …}).

// pageInfo ends every page of a list: whether more items follow and, when
// they do, the cursor of the next page.
type pageInfo struct {
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// pageOf cuts the page at offset (at most limit items) out of items.
func pageOf[T any](items []T, offset, limit int) ([]T, pageInfo) {
	offset = min(offset, len(items))
	end := min(offset+limit, len(items))
	return append([]T{}, items[offset:end]...), pageAt(end, len(items))
}

// pageAt is the pageInfo of a page that ends at end of total items.
func pageAt(end, total int) pageInfo {
	if end < total {
		return pageInfo{HasMore: true, NextCursor: encodeCursor(end)}
	}
	return pageInfo{}
}

type groupsPage struct {
	Groups []LimitGroup `json:"groups"`
	pageInfo
}

type membersPage struct {
	Members []Member `json:"members"`
	pageInfo
}

type reviewsPage struct {
	Reviews []Review `json:"reviews"`
	pageInfo
}

type paymentsPage struct {
	Payments []Payment `json:"payments"`
	pageInfo
}

type signingSecretsPage struct {
	SigningSecrets []SigningSecret `json:"signingSecrets"`
	pageInfo
}

type groupBody struct {
	Group LimitGroup `json:"group"`
}

type memberBody struct {
	Member Member `json:"member"`
}

type overrideBody struct {
	Override Override `json:"override"`
}

type policyBody struct {
	Policy Policy `json:"policy"`
}

type fundingSourceBody struct {
	FundingSource FundingSource `json:"fundingSource"`
}

type fundingSourceCreated struct {
	FundingSourceID string `json:"fundingSourceID"`
}

type participantCreated struct {
	ParticipantID string `json:"participantID"`
	Status        string `json:"status"`
}

// reviewDetail is a review as its GET answers it: the full payout inline.
// (The spec says the reviewer gets the full payout; it does not show the
// body.)
type reviewDetail struct {
	Review
	Payout Payout `json:"payout"`
}

type reviewDetailBody struct {
	Review reviewDetail `json:"review"`
}

type reviewBody struct {
	Review Review `json:"review"`
}

type signingSecretBody struct {
	SigningSecret SigningSecret `json:"signingSecret"`
}

type shortNameBody struct {
	ShortName string `json:"shortName"`
}

// tokenBody is the OAuth 2.0 token response (RFC 6749 §5.1).
type tokenBody struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}
