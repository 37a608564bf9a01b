package loadtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// formatVersion is the version of the JSON-lines storm format.
const formatVersion = 1

// stormCurrency is the currency of every storm: USD, two minor units.
const (
	stormCurrency = "USD"
	decimalPlaces = 2
)

// The phases of a storm, run one after the other, each at the concurrency.
// Authorizes come first and alone so that their rate is measured cleanly
// (contract §2.9 compares it with the naive SQL); second attempts of an
// authorize under a new key need the first hold in place and uncaptured; a
// second credit attempt needs the first credit answered.
const (
	phaseAuthorize = 0 // every payout's authorize
	phaseSecond    = 1 // authorize second attempts (new key), first credit attempts
	phaseSettle    = 2 // captures, releases, credit second attempts
	numPhases      = 3
)

var phaseNames = [numPhases]string{"authorize", "second-attempts+credits", "settle+credit-retries"}

// header is the first line of a recorded storm. It carries no secret: only
// the fingerprint of the one the recorder was given, if any.
type header struct {
	Kind              string `json:"kind"` // "header"
	Version           int    `json:"version"`
	Seed              int64  `json:"seed"`
	Prefix            string `json:"prefix"`
	ProviderID        string `json:"providerID"`
	Currency          string `json:"currency"`
	Payouts           int    `json:"payouts"`
	Credits           int    `json:"credits"`
	SecretFingerprint string `json:"secretFingerprint,omitempty"`
	// Round is the round of a storm that runs in rounds (0 for the first,
	// and for every recording).
	Round     int           `json:"round,omitempty"`
	CreatedAt time.Time     `json:"createdAt"`
	Accounts  []accountSeed `json:"accounts"`
}

// accountSeed is one customer account the storm seeds through the admin
// API, with its funding adjustment and its two instruments.
type accountSeed struct {
	AccountID        string `json:"accountID"`
	OwnerExternalID  string `json:"ownerExternalID"`
	SourceToken      string `json:"sourceToken"`
	DestinationToken string `json:"destinationToken"`
	Funding          string `json:"funding"`
	FundingKey       string `json:"fundingKey"`
}

// delivery is how a request is delivered, besides the retry policy.
type delivery struct {
	// Duplicate: once answered, delivered again in sequence with the same key.
	Duplicate bool `json:"duplicate,omitempty"`
	// Concurrent: sent twice at once with the same key.
	Concurrent bool `json:"concurrent,omitempty"`
	// Drop: the first answer is lost (client-side timeout or ignored), then
	// the caller retries with the same key.
	Drop bool `json:"drop,omitempty"`
}

// request is one line of a recorded storm after the header: one logical
// callback (one idempotency key), its plaintext service claims and how it is
// delivered. iat, exp and typ are added when it is sealed.
type request struct {
	Seq      int            `json:"seq"`
	Phase    int            `json:"phase"`
	Endpoint string         `json:"endpoint"`
	Service  map[string]any `json:"service"`
	// HoldOf names the payout whose approved holdReference fills the
	// holdReference claim at send time (capture, release).
	HoldOf string `json:"holdOf,omitempty"`
	// SecondOf is the seq of the first attempt this request repeats under a
	// new idempotency key; the answer must carry the same reference.
	SecondOf int `json:"secondOf,omitempty"`
	// LeaveHeld marks an authorize whose payout is neither captured nor
	// released by the storm (an unclaimed payment).
	LeaveHeld bool     `json:"leaveHeld,omitempty"`
	Delivery  delivery `json:"delivery"`
}

// Plan is a whole storm: the header and the requests in order.
type Plan struct {
	Header   header
	Requests []request
}

// Shape is what a generated storm looks like.
type Shape struct {
	Seed            int64
	Prefix          string
	ProviderID      string
	Accounts        int
	Payouts         int
	Credits         int
	Duplicates      float64
	ConcurrentDupes float64
	Drop            float64
	CaptureRatio    float64
	LeaveHeld       float64
	SecondAttempts  float64
}

// newPrefix returns a run prefix from the seed and the time, unique enough
// that several runs can target one ledgerd. It contains letters outside hex
// so it never occurs inside a UUID (replay --reprefix substitutes it).
func newPrefix(seed int64, now time.Time) string {
	return "lt" + strconv.FormatUint(uint64(seed)%46656, 36) + "x" + strconv.FormatInt(now.UnixMilli(), 36)
}

// Generate builds a storm from shape, deterministically for a seed and
// prefix. Every account is funded with what its payouts need plus a margin,
// so every authorize of the storm must be approved. It is round 0 of
// generateRound.
func Generate(s Shape) Plan { return generateRound(s, 0, nil) }

// generateRound builds round round of a storm that runs in rounds (a storm
// with a duration): round 0 creates the accounts; a later round reuses
// accounts (those of round 0) and funds them again with what its own
// payouts need, under fresh funding keys, so that every round's authorizes
// find the money whatever earlier rounds left held. Payout IDs, request IDs
// and idempotency keys are fresh in every round; all carry the prefix.
func generateRound(s Shape, round int, accounts []accountSeed) Plan {
	g := &generator{s: s, rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x6c6f6164746573+uint64(round)))} // "loadtes"
	p := Plan{Header: header{Kind: "header", Version: formatVersion, Seed: s.Seed, Prefix: s.Prefix, ProviderID: s.ProviderID,
		Currency: stormCurrency, Payouts: s.Payouts, Credits: s.Credits, Round: round}}
	p.Header.Accounts = g.accounts(accounts)
	g.need = make([]decimal.Decimal, len(p.Header.Accounts))
	for range s.Payouts {
		g.payout(p.Header.Accounts)
	}
	for range s.Credits {
		g.credit(p.Header.Accounts)
	}
	for i := range p.Header.Accounts {
		// What the payouts need, a margin, and whole dollars: every authorize
		// must find the money.
		p.Header.Accounts[i].Funding = g.need[i].Add(decimal.New(int64(1000+g.rng.IntN(9000)), 0)).StringFixed(decimalPlaces)
	}
	p.Requests = g.sequence()
	return p
}

// generator is the state of one generateRound: the shape, the random
// source, the requests of each phase so far and what each account's
// payouts need.
type generator struct {
	s      Shape
	rng    *rand.Rand
	phases [numPhases][]request
	need   []decimal.Decimal // by account index
}

// newUUID returns a random version 4 UUID from the generator's source.
func (g *generator) newUUID() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

// hex returns n random lowercase hex digits.
func (g *generator) hex(n int) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for range n {
		sb.WriteByte(digits[g.rng.IntN(16)])
	}
	return sb.String()
}

// cents returns a random amount from lo to hi cents.
func (g *generator) cents(lo, hi int) decimal.Decimal {
	return decimal.New(int64(lo+g.rng.IntN(hi-lo+1)), -decimalPlaces)
}

// key returns a fresh idempotency key carrying the prefix.
func (g *generator) key() string { return g.s.Prefix + "-" + g.newUUID() }

// delivery draws how a request is delivered.
func (g *generator) delivery() delivery {
	return delivery{Duplicate: g.rng.Float64() < g.s.Duplicates, Concurrent: g.rng.Float64() < g.s.ConcurrentDupes, Drop: g.rng.Float64() < g.s.Drop}
}

// moneyClaim returns the service's money object for an amount of the
// storm's currency.
func moneyClaim(d decimal.Decimal) map[string]any {
	return map[string]any{"currency": map[string]any{"code": stormCurrency, "decimalPlaces": decimalPlaces}, "value": d.StringFixed(decimalPlaces)}
}

// accounts returns the round's accounts: new ones when reuse is nil (round
// 0), else a copy of reuse under fresh funding keys.
func (g *generator) accounts(reuse []accountSeed) []accountSeed {
	if reuse != nil {
		out := slices.Clone(reuse)
		for i := range out {
			out[i].FundingKey = g.key()
		}
		return out
	}
	var out []accountSeed
	for i := range g.s.Accounts {
		out = append(out, accountSeed{
			AccountID:        AccountID(g.s.Prefix, i),
			OwnerExternalID:  fmt.Sprintf("%s-cust-%s", g.s.Prefix, g.hex(12)),
			SourceToken:      fmt.Sprintf("%s-src-%s", g.s.Prefix, g.hex(24)),
			DestinationToken: fmt.Sprintf("%s-dst-%s", g.s.Prefix, g.hex(24)),
			FundingKey:       g.key(),
		})
	}
	return out
}

// payout adds one payout from a random account: its authorize, perhaps a
// second attempt under a new key, and its capture or release unless it is
// left held.
func (g *generator) payout(accounts []accountSeed) {
	s := g.s
	ai := g.rng.IntN(len(accounts))
	a := accounts[ai]
	amount := g.cents(100, 25000) // 1.00 .. 250.00
	g.need[ai] = g.need[ai].Add(amount)
	payout := s.Prefix + "-" + g.newUUID()
	fraud := float64(g.rng.IntN(50)) / 100 // below every sane step-up threshold
	auth := request{Endpoint: claims.Authorize, Delivery: g.delivery(), Service: map[string]any{
		"payoutID": payout, "providerID": s.ProviderID, "externalID": a.OwnerExternalID, "fundingSource": a.SourceToken,
		"amount": moneyClaim(amount), "fraudScore": fraud, "callerSubject": "svc-payouts", "requestID": s.Prefix + "-" + g.newUUID(),
		"idempotencyKey": g.key()}}
	r := g.rng.Float64()
	var final string
	switch {
	case r < s.LeaveHeld:
		auth.LeaveHeld = true
	case r < s.LeaveHeld+(1-s.LeaveHeld)*s.CaptureRatio:
		final = claims.Capture
	default:
		final = claims.Release
	}
	g.phases[phaseAuthorize] = append(g.phases[phaseAuthorize], auth)
	g.maybeSecond(phaseAuthorize, phaseSecond)
	switch final {
	case claims.Capture:
		g.phases[phaseSettle] = append(g.phases[phaseSettle], request{Endpoint: claims.Capture, HoldOf: payout, Delivery: g.delivery(),
			Service: map[string]any{"payoutID": payout, "providerID": s.ProviderID, "idempotencyKey": g.key()}})
	case claims.Release:
		reason := [...]string{"cancelled", "expired", "review_rejected"}[g.rng.IntN(3)]
		g.phases[phaseSettle] = append(g.phases[phaseSettle], request{Endpoint: claims.Release, HoldOf: payout, Delivery: g.delivery(),
			Service: map[string]any{"payoutID": payout, "providerID": s.ProviderID, "idempotencyKey": g.key(), "reason": reason}})
	}
}

// credit adds one credit to a random account, and perhaps a second
// attempt under a new key.
func (g *generator) credit(accounts []accountSeed) {
	s := g.s
	a := accounts[g.rng.IntN(len(accounts))]
	credit := request{Endpoint: claims.CreditAccount, Delivery: g.delivery(), Service: map[string]any{
		"providerID": s.ProviderID, "idempotencyKey": g.key(), "requesterExternalID": a.OwnerExternalID,
		"fundingDestination": a.DestinationToken, "amount": moneyClaim(g.cents(100, 50000)), "requestID": s.Prefix + "-" + g.newUUID()}}
	g.phases[phaseSecond] = append(g.phases[phaseSecond], credit)
	g.maybeSecond(phaseSecond, phaseSettle)
}

// maybeSecond, at the shape's rate of second attempts, repeats the last
// request of phase under a new idempotency key in phase into. Until
// sequence numbers the requests, the repeat's SecondOf is the negated
// 1-based index of the first attempt in its phase.
func (g *generator) maybeSecond(phase, into int) {
	if g.rng.Float64() >= g.s.SecondAttempts {
		return
	}
	first := g.phases[phase][len(g.phases[phase])-1]
	second := request{Endpoint: first.Endpoint, Delivery: g.delivery(), Service: clone(first.Service), SecondOf: -len(g.phases[phase])}
	second.Service["idempotencyKey"] = g.key()
	g.phases[into] = append(g.phases[into], second)
}

// sequence numbers the requests phase after phase, resolves each second
// attempt's SecondOf to the seq of its first, and returns them in the
// order to send: each phase shuffled.
func (g *generator) sequence() []request {
	var out []request
	// A negative SecondOf is the 1-based index of the first attempt in the
	// phase before and becomes its seq.
	seq := 0
	var offsets [numPhases]int
	for ph := range g.phases {
		offsets[ph] = seq
		for i := range g.phases[ph] {
			seq++
			r := &g.phases[ph][i]
			r.Seq, r.Phase = seq, ph
			if r.SecondOf < 0 {
				r.SecondOf = offsets[ph-1] - r.SecondOf
			}
		}
		// Shuffle within the phase so endpoints and accounts interleave;
		// seq keeps the order of generation, so the order sent is the
		// order of the lines.
		g.rng.Shuffle(len(g.phases[ph]), func(i, j int) { g.phases[ph][i], g.phases[ph][j] = g.phases[ph][j], g.phases[ph][i] })
		out = append(out, g.phases[ph]...)
	}
	return out
}

// AccountID is the ID of the storm's i-th account (from 0). The numbering is
// what `loadtest clean` follows to find a prefix's accounts.
func AccountID(prefix string, i int) string {
	return fmt.Sprintf("%s-%010d", prefix, 1000000000+i*7919)
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// writePlan writes p as JSON lines: the header, then one request per line.
func writePlan(w io.Writer, p Plan) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(p.Header); err != nil {
		return err
	}
	for _, r := range p.Requests {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// readPlan reads a storm written by writePlan. With newPrefix set, every
// occurrence of the recorded prefix is replaced by it, so one recording can
// be replayed several times against one ledgerd as independent storms.
func readPlan(r io.Reader, newPrefix string) (Plan, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var p Plan
	line := 0
	oldPrefix := ""
	for sc.Scan() {
		line++
		raw := sc.Text()
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if line > 1 && newPrefix != "" {
			raw = strings.ReplaceAll(raw, oldPrefix, newPrefix)
		}
		if line == 1 {
			if err := json.Unmarshal([]byte(raw), &p.Header); err != nil {
				return Plan{}, fmt.Errorf("line 1: header: %w", err)
			}
			if p.Header.Kind != "header" || p.Header.Version != formatVersion {
				return Plan{}, fmt.Errorf("line 1: not a loadtest storm header of version %d", formatVersion)
			}
			if p.Header.Prefix == "" || len(p.Header.Accounts) == 0 {
				return Plan{}, errors.New("line 1: header without prefix or accounts")
			}
			if newPrefix != "" {
				oldPrefix = p.Header.Prefix
				b, _ := json.Marshal(p.Header)
				if err := json.Unmarshal([]byte(strings.ReplaceAll(string(b), oldPrefix, newPrefix)), &p.Header); err != nil {
					return Plan{}, err
				}
			}
			continue
		}
		var req request
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			return Plan{}, fmt.Errorf("line %d: %w", line, err)
		}
		if err := validRequest(req, len(p.Requests)); err != nil {
			return Plan{}, fmt.Errorf("line %d: %w", line, err)
		}
		p.Requests = append(p.Requests, req)
	}
	if err := sc.Err(); err != nil {
		return Plan{}, err
	}
	if line == 0 {
		return Plan{}, errors.New("empty storm file")
	}
	return p, nil
}

func validRequest(r request, index int) error {
	switch r.Endpoint {
	case claims.Authorize, claims.Capture, claims.Release, claims.CreditAccount:
	default:
		return fmt.Errorf("unknown endpoint %q", r.Endpoint)
	}
	if r.Phase < 0 || r.Phase >= numPhases {
		return fmt.Errorf("phase %d out of range", r.Phase)
	}
	if k, _ := r.Service["idempotencyKey"].(string); k == "" {
		return errors.New("service claims without idempotencyKey")
	}
	if (r.Endpoint == claims.Capture || r.Endpoint == claims.Release) && r.HoldOf == "" {
		return fmt.Errorf("%s without holdOf", r.Endpoint)
	}
	_ = index
	return nil
}
