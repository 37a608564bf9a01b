package ledger

import (
	"time"
	"unicode/utf8"
)

// Instrument kinds: what the service sends as fundingSource (source) or
// fundingDestination (destination).
const (
	InstrumentSource      = "source"
	InstrumentDestination = "destination"
)

// Instrument maps a token the service sends to an account.
type Instrument struct {
	Token     string    `json:"token"`
	Kind      string    `json:"kind"`
	AccountID string    `json:"accountID"`
	CreatedAt time.Time `json:"createdAt"`
}

// ValidateInstrument checks an instrument's fields. The token's length is
// in characters, as the database's length() and the admin API's maxLength
// count it, not bytes.
func ValidateInstrument(in Instrument) error {
	switch {
	case in.Token == "" || utf8.RuneCountInString(in.Token) > 256:
		return Invalid("/token", "token must be 1 to 256 characters")
	case !ValidText(in.Token):
		return Invalid("/token", "token must be valid UTF-8 without NUL")
	case in.Kind != InstrumentSource && in.Kind != InstrumentDestination:
		return Invalid("/kind", "kind must be source or destination")
	case in.AccountID == "":
		return Invalid("/accountID", "accountID is required")
	case !ValidText(in.AccountID):
		return Invalid("/accountID", "accountID must be valid UTF-8 without NUL")
	}
	return nil
}
