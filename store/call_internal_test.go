package store

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// TestCallArgs: a call's SQL names each tagged field's parameter in field
// order, and its arguments are what pgx reads the fields' values through:
// a pointer field as it is (nil stays NULL), a uuid as *[16]byte of its
// bytes, any other field by its address.
func TestCallArgs(t *testing.T) {
	t.Parallel()
	type args struct {
		Key     string           `arg:"p_key"`
		Skipped int              // no tag: not an argument
		Subject *string          `arg:"p_subject"`
		Now     time.Time        `arg:"p_now"`
		Amount  decimal.Decimal  `arg:"p_amount"`
		Max     *decimal.Decimal `arg:"p_max"`
		ID      uuid.UUID        `arg:"p_id"`
		FP      []byte           `arg:"p_fp"`
	}
	c := newCall[args]("fn", "a, b")
	if want := "SELECT a, b FROM fn(p_key => $1, p_subject => $2, p_now => $3, p_amount => $4, p_max => $5, p_id => $6, p_fp => $7)"; c.sql != want {
		t.Fatalf("sql = %s", c.sql)
	}
	p := &args{Key: "k", Now: time.Unix(1, 0), Amount: decimal.RequireFromString("1.25"), ID: uuid.New(), FP: []byte{1, 2}}
	got := c.args(p)
	if len(got) != 7 {
		t.Fatalf("%d args", len(got))
	}
	if a, ok := got[0].(*string); !ok || a != &p.Key {
		t.Errorf("p_key: %T", got[0])
	}
	if a, ok := got[1].(*string); !ok || a != nil {
		t.Errorf("p_subject: %T %v, want a nil *string", got[1], got[1])
	}
	if a, ok := got[2].(*time.Time); !ok || a != &p.Now {
		t.Errorf("p_now: %T", got[2])
	}
	if a, ok := got[3].(*decimal.Decimal); !ok || a != &p.Amount {
		t.Errorf("p_amount: %T", got[3])
	}
	if a, ok := got[4].(*decimal.Decimal); !ok || a != nil {
		t.Errorf("p_max: %T %v, want a nil *decimal.Decimal", got[4], got[4])
	}
	if a, ok := got[5].(*[16]byte); !ok || *a != [16]byte(p.ID) {
		t.Errorf("p_id: %T", got[5])
	}
	if a, ok := got[6].(*[]byte); !ok || a != &p.FP {
		t.Errorf("p_fp: %T", got[6])
	}
	subject := "s"
	p.Subject = &subject
	if a := c.args(p)[1].(*string); a != &subject {
		t.Errorf("p_subject given: %v", a)
	}
}
