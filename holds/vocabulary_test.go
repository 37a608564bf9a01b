package holds_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
	"github.com/provider-ledger/adapter/schema"
)

// The outcomes and reasons of the decision tables are written twice: as Go
// constants (holds.Reason*, ledger.Reason*, ledger.Outcome*) and as the
// string literals the server-side functions answer. TestVocabulary holds
// the two to one another, so that neither can drift.

// assigned finds the values a function assigns to its OUT parameters
// outcome, reason and state: `outcome := 'denied';`, and the literals after
// THEN and ELSE of `reason := CASE WHEN … THEN 'a' ELSE 'b' END;`.
var (
	assigned   = regexp.MustCompile(`\b(outcome|reason|state)\s*:=\s*([^;]*);`)
	answered   = regexp.MustCompile(`(?:^|\bTHEN|\bELSE)\s*'([^']*)'`)
	sqlComment = regexp.MustCompile(`--[^\n]*`)
)

// sqlVocabulary returns, per function file, the literals it assigns to
// outcome, reason and state.
func sqlVocabulary(t *testing.T) map[string]map[string][]string {
	t.Helper()
	fns, err := schema.Functions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	for _, f := range fns {
		code := sqlComment.ReplaceAllString(f.SQL, "")
		out[f.Name] = map[string][]string{}
		for _, m := range assigned.FindAllStringSubmatch(code, -1) {
			for _, lit := range answered.FindAllStringSubmatch(strings.TrimSpace(m[2]), -1) {
				out[f.Name][m[1]] = append(out[f.Name][m[1]], lit[1])
			}
		}
	}
	return out
}

// goConstants returns the values of the string constants of the package in
// dir whose names start with prefix, read from its source, so that a
// constant added to Go and not to SQL (or left behind in Go) is seen.
func goConstants(t *testing.T, dir, prefix string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var vals []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				vals = append(vals, stringConstants(g, prefix)...)
			}
		}
	}
	return vals
}

// stringConstants returns the values of g's string constants whose names
// start with prefix.
func stringConstants(g *ast.GenDecl, prefix string) []string {
	var vals []string
	for _, s := range g.Specs {
		vs := s.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if i >= len(vs.Values) || !strings.HasPrefix(n.Name, prefix) {
				continue
			}
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				vals = append(vals, v)
			}
		}
	}
	return vals
}

// set is a sorted list without duplicates.
func set(vals ...string) []string {
	s := slices.Clone(vals)
	slices.Sort(s)
	return slices.Compact(s)
}

func TestVocabulary(t *testing.T) {
	t.Parallel()
	sql := sqlVocabulary(t)
	t.Run("PerFunction", func(t *testing.T) {
		t.Parallel()
		states := []string{string(ledger.StateNew), string(ledger.StateReplay), string(ledger.StateMismatch)}
		want := map[string]map[string][]string{
			"cb_authorize": {
				"outcome": {ledger.OutcomeApproved, ledger.OutcomeDenied},
				"reason": {holds.ReasonPayoutAlreadyAuthorized, holds.ReasonUnknownFundingSource, holds.ReasonFundingSourceMismatch,
					holds.ReasonAccountUnavailable, ledger.ReasonCurrencyMismatch, holds.ReasonFraudSuspected,
					holds.ReasonStepUpRequired, holds.ReasonInsufficientFunds},
				"state": append(states, string(ledger.StateInvalid)),
			},
			// capture and release answer what hold_settle decided.
			"cb_capture": {"state": states},
			"cb_release": {"state": states},
			"hold_settle": {
				"outcome": {ledger.OutcomeApproved, ledger.OutcomeFailed},
				"reason":  {holds.ReasonPayoutMismatch, holds.ReasonHoldReleased, holds.ReasonHoldCaptured},
			},
			"cb_credit": {
				"outcome": {ledger.OutcomeApproved, ledger.OutcomeDestinationUnavailable, ledger.OutcomeRefused},
				"reason": {ledger.ReasonUnknownDestination, ledger.ReasonAccountClosed, ledger.ReasonDestinationMismatch,
					ledger.ReasonAccountFrozen, ledger.ReasonCurrencyMismatch, ledger.ReasonAmountOverLimit},
				// row 2a: the requestID credited for another amount.
				"state": append(states, string(ledger.StateAmountMismatch)),
			},
			// dual control of adjustments: the states of a request, or
			// applied at once.
			"ledger_adjustment_decide": {
				"outcome": {ledger.AdjustmentPending, ledger.AdjustmentPosted, ledger.AdjustmentRejected, ledger.AdjustmentApplied},
			},
		}
		for name, got := range sql {
			for _, what := range []string{"outcome", "reason", "state"} {
				if g, w := set(got[what]...), set(want[name][what]...); !slices.Equal(g, w) {
					t.Errorf("schema/functions/%s.sql answers %s %q; Go declares %q for it", name, what, g, w)
				}
			}
		}
		for name := range want {
			if _, ok := sql[name]; !ok {
				t.Errorf("no function file %s", name)
			}
		}
	})
	t.Run("EveryConstantIsAnswered", func(t *testing.T) {
		t.Parallel()
		union := map[string][]string{}
		for name, byWhat := range sql {
			if name == "ledger_adjustment_decide" {
				continue // its outcomes are an adjustment's states, held above
			}
			for what, vals := range byWhat {
				union[what] = append(union[what], vals...)
			}
		}
		for what, g := range map[string][]string{
			"reason":  append(goConstants(t, ".", "Reason"), goConstants(t, "../ledger", "Reason")...),
			"outcome": goConstants(t, "../ledger", "Outcome"),
		} {
			if got, want := set(union[what]...), set(g...); !slices.Equal(got, want) {
				t.Errorf("the functions answer the %ss %q; Go declares %q", what, got, want)
			}
		}
		if len(slices.Collect(maps.Keys(union))) != 3 {
			t.Fatalf("the functions assign %v: the parser of schema/functions is not looking", slices.Sorted(maps.Keys(union)))
		}
	})
}
