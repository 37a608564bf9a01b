package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestTopologyObserve(t *testing.T) {
	t.Parallel()
	a1, a2, a3 := Identity{SystemID: 7, Timeline: 1}, Identity{SystemID: 7, Timeline: 2}, Identity{SystemID: 7, Timeline: 3}
	other := Identity{SystemID: 9, Timeline: 1}
	type step struct {
		after   time.Duration // since the previous step
		id      Identity
		refused bool
	}
	for _, c := range []struct {
		name                 string
		steps                []step
		primary              Identity
		changes, splitBrains int64
		conflictWithinWindow bool
	}{
		{"FirstIsThePrimary", []step{{0, a1, false}, {time.Second, a1, false}}, a1, 0, 0, false},
		{"PromotionIsAChange", []step{{0, a1, false}, {time.Second, a2, false}, {time.Second, a3, false}}, a3, 2, 0, false},
		{"FormerPrimaryIsRefused", []step{{0, a1, false}, {0, a2, false}, {time.Second, a1, true}}, a2, 1, 1, true},
		{"OneEpisodeWhileItPersists", []step{{0, a2, false}, {0, a1, true}, {time.Second, a1, true}, {time.Second, a2, false}, {time.Second, a1, true}}, a2, 0, 1, true},
		{"ANewEpisodeAfterTheWindow", []step{{0, a2, false}, {0, a1, true}, {SplitBrainWindow + time.Second, a1, true}}, a2, 0, 2, true},
		{"ConflictEndsWithTheWindow", []step{{0, a2, false}, {0, a1, true}, {SplitBrainWindow, a2, false}}, a2, 0, 1, false},
		{"AnotherClusterWhileOursAnswersIsRefused", []step{{0, a1, false}, {time.Second, other, true}}, a1, 0, 1, true},
		{"AnotherClusterOnceOursIsGoneIsAChange", []step{{0, a1, false}, {SplitBrainWindow + time.Second, other, false}}, other, 1, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			tp := newTopology(nil)
			tp.now = func() time.Time { return now }
			for i, s := range c.steps {
				now = now.Add(s.after)
				err := tp.observe(s.id, "10.0.0.1:5432")
				if refused := errors.Is(err, errStalePrimary); refused != s.refused {
					t.Fatalf("step %d (%s): refused %v, want %v", i, s.id, refused, s.refused)
				}
			}
			got := tp.snapshot()
			if got.Primary != c.primary || got.PrimaryChanges != c.changes || got.SplitBrains != c.splitBrains {
				t.Fatalf("%+v, want primary %s, %d changes, %d split brains", got, c.primary, c.changes, c.splitBrains)
			}
			if within := !got.LastConflict.IsZero() && now.Sub(got.LastConflict) < SplitBrainWindow; within != c.conflictWithinWindow {
				t.Fatalf("conflict within the window: %v, want %v", within, c.conflictWithinWindow)
			}
		})
	}
}

func TestHostOrder(t *testing.T) {
	t.Parallel()
	cfg, err := pgx.ParseConfig("postgres://u@127.0.0.1:5432,127.0.0.2:5433,127.0.0.3:5434/db?sslmode=prefer")
	if err != nil {
		t.Fatal(err)
	}
	hosts := func(cc *pgx.ConnConfig) string {
		var s []string
		for _, g := range hostGroups(cc) {
			s = append(s, g[0].Host)
		}
		return strings.Join(s, ",")
	}
	if g := hostGroups(cfg); len(g) != 3 || len(g[0]) != 2 {
		t.Fatalf("sslmode=prefer lists each host twice: %d groups, first of %d", len(g), len(g[0]))
	}
	tp := newTopology(nil)
	cc := cfg.Copy()
	if err := tp.preferPrimary(context.Background(), cc); err != nil || hosts(cc) != "127.0.0.1,127.0.0.2,127.0.0.3" {
		t.Fatalf("no primary known: %s %v", hosts(cc), err)
	}
	_ = tp.observe(Identity{1, 1}, "127.0.0.2:5433")
	cc = cfg.Copy()
	if err := tp.preferPrimary(context.Background(), cc); err != nil || hosts(cc) != "127.0.0.2,127.0.0.1,127.0.0.3" {
		t.Fatalf("primary at the second host: %s %v", hosts(cc), err)
	}
	if cc.TLSConfig == nil || len(cc.Fallbacks) != 5 || cc.Fallbacks[0].Host != "127.0.0.2" || cc.Fallbacks[0].TLSConfig != nil {
		t.Fatalf("the primary's TLS attempt then its plain one come first: %+v", cc.Fallbacks[0])
	}
}
