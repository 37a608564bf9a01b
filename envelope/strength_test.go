package envelope_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/envelope"
)

func TestCheckStrength(t *testing.T) {
	t.Parallel()
	seq := func(start, step byte) []byte {
		b := make([]byte, 32)
		for i := range b {
			b[i] = start + byte(i)*step
		}
		return b
	}
	random := func() []byte {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	}
	half := random()[:16]
	fewValues := make([]byte, 32)
	for i := range fewValues {
		fewValues[i] = "secret-passw0rd!"[(i*7)%15]
	}
	for _, c := range []struct {
		name string
		key  []byte
		weak bool
	}{
		{"AllZero", make([]byte, 32), true},
		{"AllFF", bytes.Repeat([]byte{0xff}, 32), true},
		{"AllSame", bytes.Repeat([]byte{0x5a}, 32), true},
		{"OneByteDifferent", append(make([]byte, 31), 1), true},
		{"CountingUp", seq(0, 1), true},
		{"CountingDown", seq(0xff, 0xff), true},
		{"StepOfThree", seq(7, 3), true},
		{"Period2", bytes.Repeat([]byte{0x00, 0xff}, 16), true},
		{"Period4", bytes.Repeat([]byte("abcd"), 8), true},
		{"Period8Password", bytes.Repeat([]byte("password"), 4), true},
		{"Period16Random", append(append([]byte{}, half...), half...), true},
		{"FewDistinctValues", fewValues, true},
		{"HexText", []byte("0123456789abcdef0123456789abcdee"), false},
		{"Empty", nil, true},
		{"Random", random(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := envelope.CheckStrength(c.key)
			if c.weak != (err != nil) || err != nil && !errors.Is(err, envelope.ErrWeakSecret) {
				t.Fatalf("CheckStrength = %v, weak %v", err, c.weak)
			}
			var we *envelope.WeakSecretError
			if err != nil && (!errors.As(err, &we) || we.Reason == "") {
				t.Fatalf("error %v has no reason", err)
			}
		})
	}
	t.Run("RandomKeysPass", func(t *testing.T) {
		t.Parallel()
		for range 10000 {
			if k := random(); envelope.CheckStrength(k) != nil {
				t.Fatalf("a random key was refused: %v", envelope.CheckStrength(k))
			}
		}
	})
	t.Run("ErrorHoldsNoKey", func(t *testing.T) {
		t.Parallel()
		err := envelope.CheckStrength(bytes.Repeat([]byte("AB"), 16))
		if err == nil || strings.Contains(err.Error(), "AB") || strings.Contains(err.Error(), "4142") {
			t.Fatalf("err = %v", err)
		}
	})
}
