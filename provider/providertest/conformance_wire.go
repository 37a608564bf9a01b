package providertest

// The shapes the conformance scenarios read answers into. They are the
// scenarios' own reading of the spec, independent of the fake's types
// (types.go): a member whose presence a scenario checks is a pointer or
// a nullable.Nullable, so that an answer omitting it, or sending null,
// fails where it must; amounts are Money, compared as decimals.

import (
	"encoding/json"
	"testing"

	"github.com/oapi-codegen/nullable"
	"github.com/shopspring/decimal"
)

// decode reads the body of r as a T, failing the test when it is not JSON
// of that shape.
func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not a %T: %v: %s", v, err, r.Body)
	}
	return v
}

// value returns n's value and whether it has one (neither absent nor null).
func value[T any](n nullable.Nullable[T]) (T, bool) {
	v, err := n.Get()
	return v, err == nil
}

// has reports whether n has a value (neither absent nor null).
func has[T any](n nullable.Nullable[T]) bool {
	_, ok := value(n)
	return ok
}

// isUSD reports whether n is an amount of want (a decimal string) US
// dollars.
func isUSD(n nullable.Nullable[Money], want string) bool {
	m, ok := value(n)
	return ok && m.Currency.Code == "USD" && m.Value.Equal(decimal.RequireFromString(want))
}

// isCount reports whether n is the count want.
func isCount(n nullable.Nullable[int64], want int64) bool {
	c, ok := value(n)
	return ok && c == want
}

// wireProblem is a problem+json body (RFC 9457).
type wireProblem struct {
	Type   string                                  `json:"type"`
	Title  string                                  `json:"title"`
	Status *int                                    `json:"status"`
	Detail *string                                 `json:"detail"`
	Code   string                                  `json:"code"`
	Errors nullable.Nullable[[]wireProblemPointer] `json:"errors"`
}

// wireProblemPointer is a member of a validation problem's errors.
type wireProblemPointer struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// wireLimits are the limit dimensions of a group, override or policy.
type wireLimits struct {
	PerTransactionAmount nullable.Nullable[Money] `json:"perTransactionAmount"`
	DailyAmount          nullable.Nullable[Money] `json:"dailyAmount"`
	WeeklyAmount         nullable.Nullable[Money] `json:"weeklyAmount"`
	MonthlyAmount        nullable.Nullable[Money] `json:"monthlyAmount"`
	DailySendCount       nullable.Nullable[int64] `json:"dailySendCount"`
}

type wireGroup struct {
	GroupID     string `json:"groupID"`
	VersionID   string `json:"versionID"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Currency    string `json:"currency"`
	CreatedOn   string `json:"createdOn"`
	wireLimits
}

type wireMember struct {
	ExternalID string `json:"externalID"`
	AddedOn    string `json:"addedOn"`
}

type wireOverride struct {
	VersionID string                    `json:"versionID"`
	Currency  string                    `json:"currency"`
	CreatedOn string                    `json:"createdOn"`
	ExpiresOn nullable.Nullable[string] `json:"expiresOn"`
	Reason    string                    `json:"reason"`
	Reference string                    `json:"reference"`
	wireLimits
}

type wirePolicy struct {
	VersionID string `json:"versionID"`
	Currency  string `json:"currency"`
	CreatedOn string `json:"createdOn"`
	wireLimits
}

type wireFundingSource struct {
	FundingSourceID  string                    `json:"fundingSourceID"`
	FundingType      string                    `json:"fundingType"`
	ProviderSourceID string                    `json:"providerSourceID"`
	DisplayName      string                    `json:"displayName"`
	Last4            string                    `json:"last4"`
	CreatedOn        string                    `json:"createdOn"`
	DisabledOn       nullable.Nullable[string] `json:"disabledOn"`
}

type wireSecret struct {
	SecretID  string                    `json:"secretID"`
	CreatedOn string                    `json:"createdOn"`
	RevokedOn nullable.Nullable[string] `json:"revokedOn"`
	Secret    string                    `json:"secret"`
}

type wireParticipant struct {
	ParticipantID string `json:"participantID"`
	Status        string `json:"status"`
}

type wireToken struct {
	AccessToken  string                             `json:"access_token"`
	TokenType    string                             `json:"token_type"`
	ExpiresIn    *int64                             `json:"expires_in"`
	RefreshToken nullable.Nullable[json.RawMessage] `json:"refresh_token"`
}

type wireReview struct {
	ReviewID string `json:"reviewID"`
}

type wirePayment struct {
	ID        string                   `json:"id"`
	Direction string                   `json:"direction"`
	Status    string                   `json:"status"`
	Amount    nullable.Nullable[Money] `json:"amount"`
}

// wirePage is what ends every page of a list.
type wirePage struct {
	HasMore    *bool                     `json:"hasMore"`
	NextCursor nullable.Nullable[string] `json:"nextCursor"`
}

// The bodies of single resources and of pages, by the member that holds
// them; a list member is a pointer so that an absent or null list fails.
type (
	groupAnswer struct {
		Group wireGroup `json:"group"`
	}
	memberAnswer struct {
		Member wireMember `json:"member"`
	}
	overrideAnswer struct {
		Override wireOverride `json:"override"`
	}
	policyAnswer struct {
		Policy wirePolicy `json:"policy"`
	}
	fundingSourceAnswer struct {
		FundingSource wireFundingSource `json:"fundingSource"`
	}
	fundingSourceIDAnswer struct {
		FundingSourceID string `json:"fundingSourceID"`
	}
	shortNameAnswer struct {
		ShortName string `json:"shortName"`
	}
	groupsAnswer struct {
		Groups *[]wireGroup `json:"groups"`
		wirePage
	}
	membersAnswer struct {
		Members *[]wireMember `json:"members"`
		wirePage
	}
	reviewsAnswer struct {
		Reviews *[]wireReview `json:"reviews"`
		wirePage
	}
	paymentsAnswer struct {
		Payments *[]wirePayment `json:"payments"`
		wirePage
	}
	secretsAnswer struct {
		SigningSecrets *[]wireSecret `json:"signingSecrets"`
		wirePage
	}
)
