package providertest

import (
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/provider-ledger/adapter/provider"

	"github.com/oapi-codegen/nullable"
	"github.com/shopspring/decimal"
)

type group struct {
	LimitGroup
	members []Member // in the order added
}

// moneyIn is an amount as a request writes it, read before validation:
// its value keeps its wire string, so that a malformed one is a 422 naming
// its field rather than a 400 for the whole body.
type moneyIn moneyWire

// money returns the amount of m. The override PUT applies its patch before
// it answers the validation's 422; a value validation refused becomes zero
// there, and is never kept.
func (m moneyIn) money() Money {
	d, _ := decimal.NewFromString(m.Value)
	return Money{Currency: m.Currency, Value: d}
}

// limitsIn is Limits as a create body writes them, read before validation.
type limitsIn struct {
	PerTransactionAmount *moneyIn `json:"perTransactionAmount,omitempty"`
	DailyAmount          *moneyIn `json:"dailyAmount,omitempty"`
	WeeklyAmount         *moneyIn `json:"weeklyAmount,omitempty"`
	MonthlyAmount        *moneyIn `json:"monthlyAmount,omitempty"`
	DailySendCount       *int64   `json:"dailySendCount,omitempty"`
}

// limitsPatch is the tri-state form of Limits in PATCH and PUT bodies:
// absent keeps, null clears to inherit, a value sets.
type limitsPatch struct {
	PerTransactionAmount nullable.Nullable[moneyIn] `json:"perTransactionAmount,omitempty"`
	DailyAmount          nullable.Nullable[moneyIn] `json:"dailyAmount,omitempty"`
	WeeklyAmount         nullable.Nullable[moneyIn] `json:"weeklyAmount,omitempty"`
	MonthlyAmount        nullable.Nullable[moneyIn] `json:"monthlyAmount,omitempty"`
	DailySendCount       nullable.Nullable[int64]   `json:"dailySendCount,omitempty"`
}

// moneyDim is one amount dimension of limits: its name (the JSON member
// and the pointer of its errors) and where it is in each form.
type moneyDim struct {
	name  string
	field func(*Limits) **Money
	in    func(*limitsIn) **moneyIn
	patch func(*limitsPatch) nullable.Nullable[moneyIn]
}

var moneyDims = []moneyDim{
	{"perTransactionAmount", func(l *Limits) **Money { return &l.PerTransactionAmount },
		func(l *limitsIn) **moneyIn { return &l.PerTransactionAmount },
		func(p *limitsPatch) nullable.Nullable[moneyIn] { return p.PerTransactionAmount }},
	{"dailyAmount", func(l *Limits) **Money { return &l.DailyAmount },
		func(l *limitsIn) **moneyIn { return &l.DailyAmount },
		func(p *limitsPatch) nullable.Nullable[moneyIn] { return p.DailyAmount }},
	{"weeklyAmount", func(l *Limits) **Money { return &l.WeeklyAmount },
		func(l *limitsIn) **moneyIn { return &l.WeeklyAmount },
		func(p *limitsPatch) nullable.Nullable[moneyIn] { return p.WeeklyAmount }},
	{"monthlyAmount", func(l *Limits) **Money { return &l.MonthlyAmount },
		func(l *limitsIn) **moneyIn { return &l.MonthlyAmount },
		func(p *limitsPatch) nullable.Nullable[moneyIn] { return p.MonthlyAmount }},
}

var amountRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// validateCurrency checks a limit amount's currency: USD, 2 decimal places.
func validateCurrency(v *validation, ptr string, c Currency) {
	if c.Code != provider.USDCurrency().Code {
		v.add(ptr+"/currency/code", "only USD is supported")
	}
	if c.DecimalPlaces != 2 {
		v.add(ptr+"/currency/decimalPlaces", "must be 2 for USD")
	}
}

// validateMoneyIn checks a limit amount of a request: its currency, and a
// plain non-negative decimal exactly representable in cents.
func validateMoneyIn(v *validation, ptr string, m moneyIn) {
	validateCurrency(v, ptr, m.Currency)
	d, err := decimal.NewFromString(m.Value)
	if !amountRe.MatchString(m.Value) || err != nil || !d.Equal(d.Round(2)) {
		v.add(ptr+"/value", valueDetail)
	}
}

const valueDetail = "must be a non-negative decimal with at most 2 places"

// validateLimits checks limits given in Go (SetPolicy, the platform
// maximum) as validateMoneyIn checks a request's.
func validateLimits(v *validation, l Limits) {
	for _, d := range moneyDims {
		if m := *d.field(&l); m != nil {
			validateCurrency(v, "/"+d.name, m.Currency)
			if m.Value.IsNegative() || !m.Value.Equal(m.Value.Round(2)) {
				v.add("/"+d.name+"/value", valueDetail)
			}
		}
	}
	validateCount(v, l.DailySendCount)
}

func validateCount(v *validation, n *int64) {
	if n != nil && *n < 0 {
		v.add("/dailySendCount", "must not be negative")
	}
}

// validate checks the limits of a create body.
func (l *limitsIn) validate(v *validation) {
	for _, d := range moneyDims {
		if m := *d.in(l); m != nil {
			validateMoneyIn(v, "/"+d.name, *m)
		}
	}
	validateCount(v, l.DailySendCount)
}

// limits returns validated limits as the fake keeps them.
func (l *limitsIn) limits() Limits {
	out := Limits{DailySendCount: l.DailySendCount}
	for _, d := range moneyDims {
		if m := *d.in(l); m != nil {
			money := m.money()
			*d.field(&out) = &money
		}
	}
	return out
}

func (p *limitsPatch) validate(v *validation) {
	for _, d := range moneyDims {
		if m, err := d.patch(p).Get(); err == nil {
			validateMoneyIn(v, "/"+d.name, m)
		}
	}
	if n, err := p.DailySendCount.Get(); err == nil {
		validateCount(v, &n)
	}
}

// apply applies a validated patch to l.
func (p *limitsPatch) apply(l *Limits) {
	for _, d := range moneyDims {
		n := d.patch(p)
		switch {
		case n.IsNull():
			*d.field(l) = nil
		case n.IsSpecified():
			m := n.MustGet().money()
			*d.field(l) = &m
		}
	}
	switch {
	case p.DailySendCount.IsNull():
		l.DailySendCount = nil
	case p.DailySendCount.IsSpecified():
		c := p.DailySendCount.MustGet()
		l.DailySendCount = &c
	}
}

func validCurrency(v *validation, c string) {
	if c != "" && c != provider.USDCurrency().Code {
		v.add("/currency", "only USD is supported")
	}
}

func (s *Service) listGroups(w http.ResponseWriter, r *http.Request, pid string) {
	off, lim, ok := pageParams(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	items := make([]LimitGroup, 0, len(ps.groupOrder))
	for _, g := range ps.groupOrder {
		items = append(items, g.LimitGroup)
	}
	s.mu.Unlock()
	page, more := pageOf(items, off, lim)
	writeJSON(w, http.StatusOK, groupsPage{page, more})
}

func (s *Service) createGroup(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Currency    string `json:"currency"`
		limitsIn
	}
	if !decodeBody(w, r, &req) {
		return
	}
	var v validation
	if req.Name == "" {
		v.add("/name", "required")
	}
	validCurrency(&v, req.Currency)
	req.limitsIn.validate(&v)
	if v.write(w, r, http.StatusUnprocessableEntity) {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	now := s.Now()
	g := &group{LimitGroup: LimitGroup{GroupID: s.nextID("grp"), Name: req.Name, Description: req.Description,
		Currency: provider.USDCurrency().Code, Limits: req.limitsIn.limits(), VersionID: s.nextID("ver"), CreatedOn: now}}
	ps.groups[g.GroupID] = g
	ps.groupOrder = append(ps.groupOrder, g)
	out := g.LimitGroup
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, groupBody{out})
}

func (s *Service) patchGroup(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		Name        nullable.Nullable[string] `json:"name,omitempty"`
		Description nullable.Nullable[string] `json:"description,omitempty"`
		limitsPatch
		ExpectedVersionID *string `json:"expectedVersionID"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	var v validation
	if n, err := req.Name.Get(); err == nil && n == "" {
		v.add("/name", "must not be empty; send null to clear")
	}
	req.limitsPatch.validate(&v)
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, _ := s.state(pid)
	g, ok := ps.groups[r.PathValue("groupID")]
	if !ok {
		notFound(w, r, "limit group")
		return
	}
	if v.write(w, r, http.StatusUnprocessableEntity) {
		return
	}
	if req.ExpectedVersionID != nil && *req.ExpectedVersionID != g.VersionID {
		conflict(w, r, "version_conflict", "Version conflict",
			"expectedVersionID is not the latest version; re-read and retry")
		return
	}
	if req.Name.IsSpecified() {
		g.Name = req.Name.GetOrEmpty()
	}
	if req.Description.IsSpecified() {
		g.Description = req.Description.GetOrEmpty()
	}
	req.limitsPatch.apply(&g.Limits)
	g.VersionID, g.CreatedOn = s.nextID("ver"), s.Now()
	writeJSON(w, http.StatusOK, groupBody{g.LimitGroup})
}

func (s *Service) listMembers(w http.ResponseWriter, r *http.Request, pid string) {
	off, lim, ok := pageParams(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	ps, _ := s.state(pid)
	g, found := ps.groups[r.PathValue("groupID")]
	var items []Member
	if found {
		items = append(items, g.members...)
	}
	s.mu.Unlock()
	if !found {
		notFound(w, r, "limit group")
		return
	}
	page, more := pageOf(items, off, lim)
	writeJSON(w, http.StatusOK, membersPage{page, more})
}

// memberTarget resolves the group and participant of a members path; it
// answers 404 and returns false when either is missing. Callers hold s.mu.
func (s *Service) memberTarget(w http.ResponseWriter, r *http.Request, pid string) (*group, *participant, bool) {
	ps, _ := s.state(pid)
	g, ok := ps.groups[r.PathValue("groupID")]
	if !ok {
		notFound(w, r, "limit group")
		return nil, nil, false
	}
	p := ps.lookup(r.PathValue("participantID"))
	if p == nil {
		notFound(w, r, "participant")
		return nil, nil, false
	}
	return g, p, true
}

func (s *Service) putMember(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, p, ok := s.memberTarget(w, r, pid)
	if !ok {
		return
	}
	for _, m := range g.members {
		if m.ParticipantID == p.ParticipantID {
			writeJSON(w, http.StatusOK, memberBody{m})
			return
		}
	}
	m := Member{ExternalID: p.ExternalID, AddedOn: s.Now(), ParticipantID: p.ParticipantID}
	g.members = append(g.members, m)
	writeJSON(w, http.StatusOK, memberBody{m})
}

func (s *Service) deleteMember(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, p, ok := s.memberTarget(w, r, pid)
	if !ok {
		return
	}
	for i, m := range g.members {
		if m.ParticipantID == p.ParticipantID {
			g.members = append(g.members[:i], g.members[i+1:]...)
			break
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) putOverride(w http.ResponseWriter, r *http.Request, pid string) {
	var req struct {
		limitsPatch
		ExpiresOn         nullable.Nullable[time.Time] `json:"expiresOn,omitempty"`
		ExpectedVersionID *string                      `json:"expectedVersionID"`
		Reason            *string                      `json:"reason"`
		Reference         *string                      `json:"reference"`
		Currency          string                       `json:"currency"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	if p == nil {
		notFound(w, r, "participant")
		return
	}
	now := s.Now()
	cur := ps.overrides[p.ParticipantID]
	var v validation
	req.limitsPatch.validate(&v)
	validCurrency(&v, req.Currency)
	next := Override{Currency: provider.USDCurrency().Code}
	if cur != nil {
		next = *cur
	}
	req.limitsPatch.apply(&next.Limits)
	if req.ExpiresOn.IsSpecified() {
		next.ExpiresOn = nil
		if t, err := req.ExpiresOn.Get(); err == nil {
			t = t.UTC()
			next.ExpiresOn = &t
		}
	}
	if req.Reason != nil {
		next.Reason = *req.Reason
	}
	if req.Reference != nil {
		next.Reference = *req.Reference
	}
	// A support override is one that carries a reason or a reference: it
	// must carry both and expire within 24 hours.
	if next.Reason != "" || next.Reference != "" {
		if next.Reason == "" {
			v.add("/reason", "required for a support override")
		}
		if next.Reference == "" {
			v.add("/reference", "required for a support override")
		}
		switch {
		case next.ExpiresOn == nil:
			v.add("/expiresOn", "a support override must expire")
		case !next.ExpiresOn.After(now) || next.ExpiresOn.After(now.Add(SupportOverrideMaxTTL)):
			v.add("/expiresOn", "a support override must expire within 24 hours")
		}
	}
	if v.write(w, r, http.StatusUnprocessableEntity) {
		return
	}
	// A sent expectedVersionID claims to be the latest version: stale (or
	// sent when there is no override) is a conflict. Omitting it, as the
	// first write does, sets no precondition: the PUT creates or updates,
	// as limit-group PATCH does without one.
	if req.ExpectedVersionID != nil && (cur == nil || *req.ExpectedVersionID != cur.VersionID) {
		conflict(w, r, "version_conflict", "Version conflict",
			"expectedVersionID is not the latest version; re-read and retry")
		return
	}
	next.VersionID, next.CreatedOn = s.nextID("ver"), now
	ps.overrides[p.ParticipantID] = &next
	writeJSON(w, http.StatusOK, overrideBody{next})
}

func (s *Service) deleteOverride(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, _ := s.state(pid)
	p := ps.lookup(r.PathValue("participantID"))
	if p == nil {
		notFound(w, r, "participant")
		return
	}
	delete(ps.overrides, p.ParticipantID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) getPolicy(w http.ResponseWriter, r *http.Request, pid string) {
	s.mu.Lock()
	ps, _ := s.state(pid)
	pol := ps.policy
	s.mu.Unlock()
	if pol == nil {
		notFound(w, r, "limit policy")
		return
	}
	writeJSON(w, http.StatusOK, policyBody{*pol})
}

// SetPolicy sets the provider's default limit policy (the spec has no
// endpoint for it) and returns the new version.
func (s *Service) SetPolicy(providerID string, l Limits) (Policy, error) {
	var v validation
	validateLimits(&v, l)
	if len(v) > 0 {
		return Policy{}, errors.New("providertest: invalid policy: " + v[0].Pointer + " " + v[0].Detail)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Policy{}, err
	}
	ps.policy = &Policy{Limits: l, VersionID: s.nextID("ver"), CreatedOn: s.Now(), Currency: provider.USDCurrency().Code}
	return *ps.policy, nil
}

// LimitGroup returns a limit group's current version and its members.
func (s *Service) LimitGroup(providerID, groupID string) (LimitGroup, []Member, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return LimitGroup{}, nil, err
	}
	g, ok := ps.groups[groupID]
	if !ok {
		return LimitGroup{}, nil, errors.New("providertest: unknown limit group")
	}
	return g.LimitGroup, append([]Member(nil), g.members...), nil
}

// DisableLimitGroup removes a group: a new version with disabledOn set, which
// no longer counts in resolution (the spec shows no endpoint for it).
func (s *Service) DisableLimitGroup(providerID, groupID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return err
	}
	g, ok := ps.groups[groupID]
	if !ok {
		return errors.New("providertest: unknown limit group")
	}
	now := s.Now()
	g.VersionID, g.CreatedOn, g.DisabledOn = s.nextID("ver"), now, &now
	return nil
}

// Override returns the participant's current override, if any.
func (s *Service) Override(providerID, ref string) (Override, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Override{}, false, err
	}
	p := ps.lookup(ref)
	if p == nil {
		return Override{}, false, errNoParticipant
	}
	o, ok := ps.overrides[p.ParticipantID]
	if !ok {
		return Override{}, false, nil
	}
	return *o, true, nil
}

// EffectiveLimits resolves the ceilings that apply to a participant now, per
// dimension: an unexpired override's value, else the tightest value among the
// participant's enabled limit groups, else the provider default; then the
// platform maximum clamps the result. (How several groups combine is not
// shown by the spec; the fake takes the tightest.)
func (s *Service) EffectiveLimits(providerID, ref string) (Limits, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps, err := s.state(providerID)
	if err != nil {
		return Limits{}, err
	}
	p := ps.lookup(ref)
	if p == nil {
		return Limits{}, errNoParticipant
	}
	now := s.Now()
	var groups []Limits
	for _, g := range ps.groupOrder {
		if g.DisabledOn != nil {
			continue
		}
		for _, m := range g.members {
			if m.ParticipantID == p.ParticipantID {
				groups = append(groups, g.Limits)
			}
		}
	}
	var override *Limits
	if o := ps.overrides[p.ParticipantID]; o != nil && (o.ExpiresOn == nil || now.Before(*o.ExpiresOn)) {
		override = &o.Limits
	}
	var policy *Limits
	if ps.policy != nil {
		policy = &ps.policy.Limits
	}
	var out Limits
	for _, d := range moneyDims {
		var pick *Money
		if override != nil {
			pick = *d.field(override)
		}
		if pick == nil {
			for i := range groups {
				pick = tighterMoney(pick, *d.field(&groups[i]))
			}
		}
		if pick == nil && policy != nil {
			pick = *d.field(policy)
		}
		max := s.cfg.platformMax
		pick = tighterMoney(pick, *d.field(&max))
		*d.field(&out) = pick
	}
	var count *int64
	if override != nil {
		count = override.DailySendCount
	}
	if count == nil {
		for _, g := range groups {
			count = tighterCount(count, g.DailySendCount)
		}
	}
	if count == nil && policy != nil {
		count = policy.DailySendCount
	}
	out.DailySendCount = tighterCount(count, s.cfg.platformMax.DailySendCount)
	return out, nil
}

func tighterMoney(a, b *Money) *Money {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case b.Value.LessThan(a.Value):
		return b
	default:
		return a
	}
}

func tighterCount(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a <= *b:
		return a
	default:
		return b
	}
}
