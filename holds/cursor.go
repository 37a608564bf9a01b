package holds

import (
	"errors"
	"time"

	"github.com/provider-ledger/adapter/ledger"
)

// maxCursorMicros is the end of year 9999 in microseconds since 1970: no
// hold is placed later, and no cursor names a time past it.
const maxCursorMicros = 253402300799999999

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
	case EncodeCursor(Hold{PlacedAt: time.UnixMicro(us), HoldReference: ref}) != c:
		return errors.New("cursor is not in canonical form")
	}
	return nil
}
