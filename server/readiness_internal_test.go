package server

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/store"
)

// TestReadinessReasons: each finding is named by its reason, together with
// the others (server/readiness_test.go checks the database's findings on a
// running ledgerd; a split brain on a real pair: failover_test.go).
func TestReadinessReasons(t *testing.T) {
	t.Parallel()
	e := errors.New("x")
	for _, c := range []struct {
		name string
		h    store.Health
		keys int
		age  time.Duration
		want []string
	}{
		{"Ready", store.Health{}, 1, time.Second, nil},
		{"KeyringAtItsLimit", store.Health{}, 1, keyringMaxAge, nil},
		{"KeyringStale", store.Health{}, 1, keyringMaxAge + time.Second, []string{ReasonKeyringStale}},
		{"NoSecret", store.Health{}, 0, time.Second, []string{ReasonNoActiveSecret}},
		{"SplitBrain", store.Health{SplitBrain: e}, 1, 0, []string{ReasonSplitBrain}},
		{"Unreachable", store.Health{Unreachable: e}, 1, 0, []string{ReasonDatabaseUnreachable}},
		{"ReadOnly", store.Health{ReadOnly: e}, 1, 0, []string{ReasonDatabaseReadOnly}},
		{"Slow", store.Health{Slow: e}, 1, 0, []string{ReasonStatementsTimingOut}},
		{"Everything", store.Health{Unreachable: e, SplitBrain: e}, 0, time.Minute,
			[]string{ReasonDatabaseUnreachable, ReasonSplitBrain, ReasonNoActiveSecret, ReasonKeyringStale}},
	} {
		var got []string
		for _, r := range readiness(c.h, c.keys, c.age) {
			if r.Detail == "" {
				t.Errorf("%s: %s has no detail", c.name, r.Reason)
			}
			got = append(got, r.Reason)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
