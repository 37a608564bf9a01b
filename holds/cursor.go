package holds

import (
	"errors"
	"regexp"
	"time"

	"github.com/provider-ledger/adapter/ledger"
)

// maxCursorMicros is the end of year 9999 in microseconds since 1970: no
// hold is placed later, and no cursor names a time past it.
const maxCursorMicros = 253402300799999999

// holdReference is the form of every hold reference authorize issues
// (ledger.NewReference("hold_")).
var holdReference = regexp.MustCompile(`^hold_[a-z2-7]{26}$`)

// checkCursor accepts only a cursor that List could have written: its
// decoded time (us, microseconds since 1970) and hold reference must be
// storable, and encoding them again must give c byte for byte, so that a
// cursor with a sign, leading zeros, Base64 padding, line breaks, other
// alphabets or non-zero trailing bits is refused rather than read as some
// other position (or as the first page).
func checkCursor(c string, us int64, ref string) error {
	switch {
	case us < 0 || us > maxCursorMicros:
		return errors.New("cursor time out of range")
	case !ledger.ValidText(ref):
		return errors.New("cursor reference is not text")
	case !holdReference.MatchString(ref):
		// As the journal's cursor holds a transaction ID in its one form:
		// a reference this ledger never issues names no position.
		return errors.New("cursor reference is not a hold reference")
	case EncodeCursor(Hold{PlacedAt: time.UnixMicro(us), HoldReference: ref}) != c:
		return errors.New("cursor is not in canonical form")
	}
	return nil
}
