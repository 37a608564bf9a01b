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

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks"
)

// FormatVersion is the version of the JSON-lines storm format.
const FormatVersion = 1

// Currency is the currency of every storm: USD, two minor units.
const (
	Currency      = "USD"
	decimalPlaces = 2
)

// The phases of a storm, run one after the other, each at the concurrency.
// Authorizes come first and alone so that their rate is measured cleanly
// (design 2.9 compares it with the naive SQL); second attempts of an
// authorize under a new key need the first hold in place and uncaptured; a
// second credit attempt needs the first credit answered.
const (
	PhaseAuthorize = 0 // every payout's authorize
	PhaseSecond    = 1 // authorize second attempts (new key), first credit attempts
	PhaseSettle    = 2 // captures, releases, credit second attempts
	numPhases      = 3
)

var phaseNames = [numPhases]string{"authorize", "second-attempts+credits", "settle+credit-retries"}

// Header is the first line of a recorded storm. It carries no secret: only
// the fingerprint of the one the recorder was given, if any.
type Header struct {
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
	Accounts  []AccountSeed `json:"accounts"`
}

// AccountSeed is one customer account the storm seeds through the admin
// API, with its funding adjustment and its two instruments.
type AccountSeed struct {
	AccountID        string `json:"accountID"`
	OwnerExternalID  string `json:"ownerExternalID"`
	SourceToken      string `json:"sourceToken"`
	DestinationToken string `json:"destinationToken"`
	Funding          string `json:"funding"`
	FundingKey       string `json:"fundingKey"`
}

// Delivery is how a request is delivered, besides the retry policy.
type Delivery struct {
	// Duplicate: once answered, delivered again in sequence with the same key.
	Duplicate bool `json:"duplicate,omitempty"`
	// Concurrent: sent twice at once with the same key.
	Concurrent bool `json:"concurrent,omitempty"`
	// Drop: the first answer is lost (client-side timeout or ignored), then
	// the caller retries with the same key.
	Drop bool `json:"drop,omitempty"`
}

// Request is one line of a recorded storm after the header: one logical
// callback (one idempotency key), its plaintext service claims and how it is
// delivered. iat, exp and typ are added when it is sealed.
type Request struct {
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
	Delivery  Delivery `json:"delivery"`
}

// Plan is a whole storm: the header and the requests in order.
type Plan struct {
	Header   Header
	Requests []Request
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

// NewPrefix returns a run prefix from the seed and the time, unique enough
// that several runs can target one ledgerd. It contains letters outside hex
// so it never occurs inside a UUID (replay --reprefix substitutes it).
func NewPrefix(seed int64, now time.Time) string {
	return "lt" + strconv.FormatUint(uint64(seed)%46656, 36) + "x" + strconv.FormatInt(now.UnixMilli(), 36)
}

// Generate builds a storm from shape, deterministically for a seed and
// prefix. Every account is funded with what its payouts need plus a margin,
// so every authorize of the storm must be approved. It is round 0 of
// GenerateRound.
func Generate(s Shape) Plan { return GenerateRound(s, 0, nil) }

// GenerateRound builds round round of a storm that runs in rounds (a storm
// with a duration): round 0 creates the accounts; a later round reuses
// accounts (those of round 0) and funds them again with what its own
// payouts need, under fresh funding keys, so that every round's authorizes
// find the money whatever earlier rounds left held. Payout IDs, request IDs
// and idempotency keys are fresh in every round; all carry the prefix.
func GenerateRound(s Shape, round int, accounts []AccountSeed) Plan {
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x6c6f6164746573+uint64(round))) // "loadtes"
	newUUID := func() string {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return uuid.UUID(b).String()
	}
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		var sb strings.Builder
		for range n {
			sb.WriteByte(digits[rng.IntN(16)])
		}
		return sb.String()
	}
	cents := func(lo, hi int) decimal.Decimal { return decimal.New(int64(lo+rng.IntN(hi-lo+1)), -decimalPlaces) }
	money := func(d decimal.Decimal) map[string]any {
		return map[string]any{"currency": map[string]any{"code": Currency, "decimalPlaces": decimalPlaces}, "value": d.StringFixed(decimalPlaces)}
	}
	key := func() string { return s.Prefix + "-" + newUUID() }
	p := Plan{Header: Header{Kind: "header", Version: FormatVersion, Seed: s.Seed, Prefix: s.Prefix, ProviderID: s.ProviderID,
		Currency: Currency, Payouts: s.Payouts, Credits: s.Credits, Round: round}}
	if accounts == nil {
		for i := range s.Accounts {
			p.Header.Accounts = append(p.Header.Accounts, AccountSeed{
				AccountID:        AccountID(s.Prefix, i),
				OwnerExternalID:  fmt.Sprintf("%s-cust-%s", s.Prefix, hex(12)),
				SourceToken:      fmt.Sprintf("%s-src-%s", s.Prefix, hex(24)),
				DestinationToken: fmt.Sprintf("%s-dst-%s", s.Prefix, hex(24)),
				FundingKey:       key(),
			})
		}
	} else {
		p.Header.Accounts = slices.Clone(accounts)
		for i := range p.Header.Accounts {
			p.Header.Accounts[i].FundingKey = key()
		}
	}
	n := len(p.Header.Accounts)
	need := make([]decimal.Decimal, n)
	delivery := func() Delivery {
		return Delivery{Duplicate: rng.Float64() < s.Duplicates, Concurrent: rng.Float64() < s.ConcurrentDupes, Drop: rng.Float64() < s.Drop}
	}
	var phases [numPhases][]Request
	for range s.Payouts {
		ai := rng.IntN(n)
		a := p.Header.Accounts[ai]
		amount := cents(100, 25000) // 1.00 .. 250.00
		need[ai] = need[ai].Add(amount)
		payout := s.Prefix + "-" + newUUID()
		fraud := float64(rng.IntN(50)) / 100 // below every sane step-up threshold
		auth := Request{Endpoint: callbacks.Authorize, Delivery: delivery(), Service: map[string]any{
			"payoutID": payout, "providerID": s.ProviderID, "externalID": a.OwnerExternalID, "fundingSource": a.SourceToken,
			"amount": money(amount), "fraudScore": fraud, "callerSubject": "svc-payouts", "requestID": s.Prefix + "-" + newUUID(),
			"idempotencyKey": key()}}
		r := rng.Float64()
		var final string
		switch {
		case r < s.LeaveHeld:
			auth.LeaveHeld = true
		case r < s.LeaveHeld+(1-s.LeaveHeld)*s.CaptureRatio:
			final = callbacks.Capture
		default:
			final = callbacks.Release
		}
		phases[PhaseAuthorize] = append(phases[PhaseAuthorize], auth)
		if rng.Float64() < s.SecondAttempts {
			second := Request{Endpoint: callbacks.Authorize, Delivery: delivery(), Service: clone(auth.Service), SecondOf: -len(phases[PhaseAuthorize])}
			second.Service["idempotencyKey"] = key()
			phases[PhaseSecond] = append(phases[PhaseSecond], second)
		}
		switch final {
		case callbacks.Capture:
			phases[PhaseSettle] = append(phases[PhaseSettle], Request{Endpoint: callbacks.Capture, HoldOf: payout, Delivery: delivery(),
				Service: map[string]any{"payoutID": payout, "providerID": s.ProviderID, "idempotencyKey": key()}})
		case callbacks.Release:
			reason := [...]string{"cancelled", "expired", "review_rejected"}[rng.IntN(3)]
			phases[PhaseSettle] = append(phases[PhaseSettle], Request{Endpoint: callbacks.Release, HoldOf: payout, Delivery: delivery(),
				Service: map[string]any{"payoutID": payout, "providerID": s.ProviderID, "idempotencyKey": key(), "reason": reason}})
		}
	}
	for range s.Credits {
		a := p.Header.Accounts[rng.IntN(n)]
		credit := Request{Endpoint: callbacks.CreditAccount, Delivery: delivery(), Service: map[string]any{
			"providerID": s.ProviderID, "idempotencyKey": key(), "requesterExternalID": a.OwnerExternalID,
			"fundingDestination": a.DestinationToken, "amount": money(cents(100, 50000)), "requestID": s.Prefix + "-" + newUUID()}}
		phases[PhaseSecond] = append(phases[PhaseSecond], credit)
		if rng.Float64() < s.SecondAttempts {
			second := Request{Endpoint: callbacks.CreditAccount, Delivery: delivery(), Service: clone(credit.Service), SecondOf: -len(phases[PhaseSecond])}
			second.Service["idempotencyKey"] = key()
			phases[PhaseSettle] = append(phases[PhaseSettle], second)
		}
	}
	for i := range p.Header.Accounts {
		// What the payouts need, a margin, and whole dollars: every authorize
		// must find the money.
		p.Header.Accounts[i].Funding = need[i].Add(decimal.New(int64(1000+rng.IntN(9000)), 0)).StringFixed(decimalPlaces)
	}
	// Number the requests; a negative SecondOf is the 1-based index of the
	// first attempt in the phase before and becomes its seq.
	seq := 0
	var offsets [numPhases]int
	for ph := range phases {
		offsets[ph] = seq
		for i := range phases[ph] {
			seq++
			r := &phases[ph][i]
			r.Seq, r.Phase = seq, ph
			if r.SecondOf < 0 {
				r.SecondOf = offsets[ph-1] - r.SecondOf
			}
		}
		// Shuffle within the phase so endpoints and accounts interleave;
		// seq keeps the order of generation, so the order sent is the
		// order of the lines.
		rng.Shuffle(len(phases[ph]), func(i, j int) { phases[ph][i], phases[ph][j] = phases[ph][j], phases[ph][i] })
		p.Requests = append(p.Requests, phases[ph]...)
	}
	return p
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

// Write writes p as JSON lines: the header, then one request per line.
func Write(w io.Writer, p Plan) error {
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

// Read reads a storm written by Write. With newPrefix set, every occurrence
// of the recorded prefix is replaced by it, so one recording can be replayed
// several times against one ledgerd as independent storms.
func Read(r io.Reader, newPrefix string) (Plan, error) {
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
			if p.Header.Kind != "header" || p.Header.Version != FormatVersion {
				return Plan{}, fmt.Errorf("line 1: not a loadtest storm header of version %d", FormatVersion)
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
		var req Request
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

func validRequest(r Request, index int) error {
	switch r.Endpoint {
	case callbacks.Authorize, callbacks.Capture, callbacks.Release, callbacks.CreditAccount:
	default:
		return fmt.Errorf("unknown endpoint %q", r.Endpoint)
	}
	if r.Phase < 0 || r.Phase >= numPhases {
		return fmt.Errorf("phase %d out of range", r.Phase)
	}
	if k, _ := r.Service["idempotencyKey"].(string); k == "" {
		return errors.New("service claims without idempotencyKey")
	}
	if (r.Endpoint == callbacks.Capture || r.Endpoint == callbacks.Release) && r.HoldOf == "" {
		return fmt.Errorf("%s without holdOf", r.Endpoint)
	}
	_ = index
	return nil
}
