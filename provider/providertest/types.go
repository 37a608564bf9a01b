package providertest

import (
	"time"
)

// The types in this file are both the fake's wire format (their JSON is what
// the fake sends) and what its seeding and inspection methods take and return.
// They are deliberately independent of the client package, so that the client
// and the fake are two separate readings of the spec and a test between them
// can catch a misreading in either.

// Limits are the limit dimensions shared by limit groups, overrides and the
// provider policy. A nil field is unset (inherits from the next level).
type Limits struct {
	PerTransactionAmount *Money `json:"perTransactionAmount,omitempty"`
	DailyAmount          *Money `json:"dailyAmount,omitempty"`
	WeeklyAmount         *Money `json:"weeklyAmount,omitempty"`
	MonthlyAmount        *Money `json:"monthlyAmount,omitempty"`
	DailySendCount       *int64 `json:"dailySendCount,omitempty"`
}

// Address is a participant's postal address.
type Address struct {
	AddressLine1    string `json:"addressLine1"`
	AddressLine2    string `json:"addressLine2,omitempty"`
	City            string `json:"city"`
	StateOrProvince string `json:"stateOrProvince"`
	PostalCode      string `json:"postalCode"`
	Country         string `json:"country"`
}

// Participant statuses.
const (
	StatusPending  = "pending"
	StatusActive   = "active"
	StatusDenied   = "denied"
	StatusDisabled = "disabled"
)

// Participant is the fake's record of a registered participant.
type Participant struct {
	ParticipantID string    `json:"participantID"`
	ExternalID    string    `json:"externalID"`
	Status        string    `json:"status"`
	GivenName     string    `json:"-"`
	FamilyName    string    `json:"-"`
	Address       Address   `json:"-"`
	PhoneNumbers  []string  `json:"-"`
	CreatedOn     time.Time `json:"-"`
}

// Token is a sender token the fake has issued.
type Token struct {
	AccessToken   string
	ParticipantID string
	ExternalID    string
	ClientType    string
	IssuedOn      time.Time
	ExpiresOn     time.Time
}

// LimitGroup is the current version of a limit group.
type LimitGroup struct {
	GroupID     string `json:"groupID"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Currency    string `json:"currency"`
	Limits
	VersionID  string     `json:"versionID"`
	CreatedOn  time.Time  `json:"createdOn"`
	DisabledOn *time.Time `json:"disabledOn,omitempty"`
}

// Member is a participant's membership of a limit group.
type Member struct {
	ExternalID    string    `json:"externalID"`
	AddedOn       time.Time `json:"addedOn"`
	ParticipantID string    `json:"-"`
}

// Override is the current version of a participant limit override.
type Override struct {
	Limits
	ExpiresOn  *time.Time `json:"expiresOn"`
	Reason     string     `json:"reason,omitempty"`
	Reference  string     `json:"reference,omitempty"`
	VersionID  string     `json:"versionID"`
	CreatedOn  time.Time  `json:"createdOn"`
	DisabledOn *time.Time `json:"disabledOn,omitempty"`
	Currency   string     `json:"currency"`
}

// Policy is the provider's default limit policy.
type Policy struct {
	Limits
	VersionID string    `json:"versionID"`
	CreatedOn time.Time `json:"createdOn"`
	Currency  string    `json:"currency"`
}

// Payout statuses named by the spec.
const (
	PayoutInitiated    = "initiated"
	PayoutAuthorized   = "authorized"
	PayoutAccepted     = "accepted"
	PayoutClaiming     = "claiming"
	PayoutCompleted    = "completed"
	PayoutFailed       = "failed"
	PayoutPayoutFailed = "payout_failed"
	PayoutCancelled    = "cancelled"
	PayoutExpired      = "expired"
	PayoutDenied       = "denied"
)

// Payout is a payout the fake knows of. The spec does not show the full payout
// a reviewer gets; the fake shows these fields.
type Payout struct {
	PayoutID         string    `json:"payoutID"`
	Amount           Money     `json:"amount"`
	RecipientName    string    `json:"recipientName,omitempty"`
	RecipientPhone   string    `json:"recipientPhone,omitempty"`
	Status           string    `json:"status"`
	SenderExternalID string    `json:"senderExternalID"`
	FundingSource    string    `json:"fundingSource,omitempty"`
	Memo             string    `json:"memo,omitempty"`
	CreatedOn        time.Time `json:"createdOn"`
}

// PayoutSummary is the payout summary carried by a review.
type PayoutSummary struct {
	PayoutID      string `json:"payoutID"`
	Amount        Money  `json:"amount"`
	RecipientName string `json:"recipientName,omitempty"`
	Status        string `json:"status"`
}

// Review statuses and resolutions.
const (
	ReviewPending  = "pending"
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
)

// Review is a manual review of a held payout.
type Review struct {
	ReviewID         string        `json:"reviewID"`
	Status           string        `json:"status"`
	CreatedOn        time.Time     `json:"createdOn"`
	ResolvedOn       *time.Time    `json:"resolvedOn,omitempty"`
	Reason           string        `json:"reason,omitempty"`
	RiskAssessmentID string        `json:"riskAssessmentID,omitempty"`
	Payout           PayoutSummary `json:"payout"`
	Notes            string        `json:"-"`
}

// Release is a release callback the fake would have sent: the service calls
// the provider's release endpoint when a hold must come off.
type Release struct {
	ProviderID string
	PayoutID   string
	Reason     string // review_rejected
	At         time.Time
}

// Counterparty of a payment list item.
type Counterparty struct {
	DisplayName string `json:"displayName,omitempty"`
	PhoneNumber string `json:"phoneNumber,omitempty"`
}

// Payment is an item of a participant's payments list.
type Payment struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Direction    string       `json:"direction"`
	Status       string       `json:"status"`
	Amount       Money        `json:"amount"`
	Counterparty Counterparty `json:"counterparty"`
	Memo         string       `json:"memo,omitempty"`
	CreatedOn    time.Time    `json:"createdOn"`
}

// Funding types.
const (
	FundingCard        = "card"
	FundingBankAccount = "bank_account"
)

// FundingSource is a registered funding source.
type FundingSource struct {
	FundingSourceID  string     `json:"fundingSourceID"`
	FundingType      string     `json:"fundingType"`
	ProviderSourceID string     `json:"providerSourceID"`
	DisplayName      string     `json:"displayName"`
	Last4            string     `json:"last4,omitempty"`
	CreatedOn        time.Time  `json:"createdOn"`
	UpdatedOn        time.Time  `json:"updatedOn"`
	DisabledOn       *time.Time `json:"disabledOn,omitempty"`
	ParticipantID    string     `json:"-"`
}

// SigningSecret is a signing secret. Secret is the Base64 value; the fake
// puts it on the wire only in the create response, but inspection returns it
// so tests can check what a client installed.
type SigningSecret struct {
	SecretID  string     `json:"secretID"`
	CreatedOn time.Time  `json:"createdOn"`
	RevokedOn *time.Time `json:"revokedOn"`
	Secret    string     `json:"secret,omitempty"`
}
