package holds_test

import (
	"errors"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// FuzzDecodeCursor: a cursor that decodes is the cursor of the position it
// decodes to (encoding that position gives it back byte for byte), so no
// two cursors name one position and none names a position List could not
// have written. Its seeds run as an ordinary test.
func FuzzDecodeCursor(f *testing.F) {
	for _, h := range []holds.Hold{
		{PlacedAt: time.UnixMicro(1_700_000_000_123_456), HoldReference: "hold_01HZX3"},
		{PlacedAt: time.UnixMicro(0), HoldReference: "h"},
		{PlacedAt: time.UnixMicro(253402300799999999), HoldReference: "a|b"},
	} {
		f.Add(holds.EncodeCursor(h))
	}
	for _, c := range []string{"", "!!", "Z2FyYmFnZQ", "MTc=", "LTF8aA", "MDF8aA", "MXw", "MXxhAGI", "MXz_", "MXxo\n"} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		p, err := holds.DecodeCursor(c)
		if err != nil {
			return
		}
		if p.HoldReference == "" {
			t.Fatalf("DecodeCursor(%q) = %+v: no hold reference", c, p)
		}
		if again := holds.EncodeCursor(holds.Hold{PlacedAt: p.PlacedAt, HoldReference: p.HoldReference}); again != c {
			t.Fatalf("DecodeCursor(%q) = %+v, which encodes as %q", c, p, again)
		}
		o := holds.ListOptions{Cursor: c}
		if q, err := o.Validate(); err != nil || !q.PlacedAt.Equal(p.PlacedAt) || q.HoldReference != p.HoldReference {
			t.Fatalf("Validate with cursor %q = %+v, %v; DecodeCursor gave %+v", c, q, err, p)
		}
	})
}

// TestDecodeCursorRefuses: cursors List could not have written are refused
// rather than read as another position.
func TestDecodeCursorRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, cursor string }{
		{"NotBase64", "!!"},
		{"NoSeparator", "Z2FyYmFnZQ"},                   // "garbage"
		{"NegativeTime", "LTF8aA"},                      // "-1|h"
		{"LeadingZero", "MDF8aA"},                       // "01|h"
		{"NoReference", "MXw"},                          // "1|"
		{"NULInReference", "MXxhAGI"},                   // "1|a\x00b"
		{"InvalidUTF8", "MXz_"},                         // "1|\xff"
		{"Padded", "MXxo" + "="},                        // "1|h" with padding
		{"PastYear9999", "MjUzNDAyMzAwODAwMDAwMDAwfGg"}, // "253402300800000000|h"
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if p, err := holds.DecodeCursor(c.cursor); err == nil {
				t.Fatalf("DecodeCursor(%q) = %+v, want an error", c.cursor, p)
			}
		})
	}
}

// TestListOptionsValidate: the defaults and bounds are ledger's, and with
// two bad filters the first is reported, every time.
func TestListOptionsValidate(t *testing.T) {
	t.Parallel()
	o := holds.ListOptions{}
	if _, err := o.Validate(); err != nil || o.Limit != ledger.DefaultLimit {
		t.Fatalf("zero options: limit %d, %v", o.Limit, err)
	}
	for _, c := range []struct {
		name    string
		o       holds.ListOptions
		pointer string
	}{
		{"LimitOverMax", holds.ListOptions{Limit: ledger.MaxLimit + 1}, "/limit"},
		{"LimitNegative", holds.ListOptions{Limit: -1}, "/limit"},
		{"Status", holds.ListOptions{Status: "gone"}, "/status"},
		{"BothFiltersBad", holds.ListOptions{PayoutID: "a\x00", AccountID: "b\xff"}, "/payoutID"},
		{"AccountID", holds.ListOptions{AccountID: "b\xff"}, "/accountID"},
		{"Cursor", holds.ListOptions{Cursor: "!!"}, "/cursor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for range 20 { // a map's order would change between runs
				o := c.o
				_, err := o.Validate()
				var le *ledger.Error
				if !errors.As(err, &le) || le.Code != ledger.CodeInvalid || le.Pointer != c.pointer {
					t.Fatalf("Validate(%+v) = %v, want invalid at %s", c.o, err, c.pointer)
				}
			}
		})
	}
	o = holds.ListOptions{Limit: ledger.MaxLimit}
	if _, err := o.Validate(); err != nil {
		t.Fatalf("limit %d: %v", ledger.MaxLimit, err)
	}
}
