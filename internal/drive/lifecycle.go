package drive

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/holds"
	"github.com/provider-ledger/adapter/ledger"
)

// Amounts are USD cents; the money claim carries 2 decimal places.
func usd(cents int64) ledger.Money {
	return ledger.Money{Currency: "USD", Value: decimal.New(cents, -2)}
}

// cents2 writes cents as a decimal with 2 places ("12.50").
func cents2(c int64) string { return decimal.New(c, -2).StringFixed(2) }

// payout plays payout lifecycle i (from 0): authorize a random amount, then
// capture or release it, every third time delivering both callbacks again;
// it prints one line.
func (d *driver) payout(ctx context.Context, i int) error {
	payout := fmt.Sprintf("%s-p%03d", d.run, i+1)
	amount := 100 + d.rng.Int64N(maxPayout-100+1)
	auth := callback{claims.Authorize, payout + "-auth", claims.AuthorizeService(holds.AuthorizeRequest{PayoutID: payout,
		ProviderID: d.cfg.ProviderID, ExternalID: d.run + "-alice", FundingSource: d.source, Amount: usd(amount),
		IdempotencyKey: payout + "-auth", CallerSubject: "servicesim", RequestID: payout + "-rq"})}
	ar, err := d.sendApproved(ctx, auth)
	if err != nil {
		return fmt.Errorf("payout %s: %w", payout, err)
	}
	hold := ar.Str(claims.ReferenceClaim(claims.Authorize))
	line := fmt.Sprintf("payout %s %s USD: authorize approved %s", payout, cents2(amount), hold)

	final, reason := d.settlement(payout, hold)
	fr, err := d.sendApproved(ctx, final)
	if err != nil {
		return fmt.Errorf("payout %s: %w", payout, err)
	}
	ref := fr.Str(claims.ReferenceClaim(final.endpoint))
	if final.endpoint == claims.Capture {
		d.captured += amount
		d.nCaptured++
		line += " → capture approved " + ref
	} else {
		d.nReleased++
		line += fmt.Sprintf(" → release (%s) approved %s", reason, ref)
	}
	// Every third payout, the service delivers both callbacks again
	// under their keys: the stored answers must come back.
	if i%3 == 0 {
		if err := d.replay(ctx, auth, ar); err != nil {
			return fmt.Errorf("payout %s: %w", payout, err)
		}
		if err := d.replay(ctx, final, fr); err != nil {
			return fmt.Errorf("payout %s: %w", payout, err)
		}
		line += "; authorize and " + final.endpoint + " replayed: same answers"
	}
	fmt.Fprintln(d.out, line)
	return nil
}

// settlement draws how an authorized payout ends: a capture one time in
// four, else a release (cancelled, expired or review_rejected). It returns
// the callback, and the reason of a release.
func (d *driver) settlement(payout, hold string) (cb callback, reason string) {
	choice := d.rng.IntN(4)
	if choice == 0 {
		key := payout + "-capture"
		return callback{claims.Capture, key, claims.CaptureService(holds.CaptureRequest{PayoutID: payout,
			ProviderID: d.cfg.ProviderID, HoldReference: hold, IdempotencyKey: key})}, ""
	}
	reason = []string{"cancelled", "expired", "review_rejected"}[choice-1]
	key := payout + "-release"
	return callback{claims.Release, key, claims.ReleaseService(holds.ReleaseRequest{HoldReference: hold,
		IdempotencyKey: key, PayoutID: payout, ProviderID: d.cfg.ProviderID, Reason: reason})}, reason
}

// request plays paid request i (from 0): a credit-account of a random
// amount, delivered twice under one key; it prints one line.
func (d *driver) request(ctx context.Context, i int) error {
	req := fmt.Sprintf("%s-r%03d", d.run, i+1)
	amount := 100 + d.rng.Int64N(maxCredit-100+1)
	credit := callback{claims.CreditAccount, req + "-credit", claims.CreditService(ledger.CreditRequest{ProviderID: d.cfg.ProviderID,
		IdempotencyKey: req + "-credit", RequesterExternalID: d.run + "-bob", FundingDestination: d.dest, Amount: usd(amount),
		RequestID: req})}
	cr, err := d.sendApproved(ctx, credit)
	if err != nil {
		return fmt.Errorf("request %s: %w", req, err)
	}
	if err := d.replay(ctx, credit, cr); err != nil {
		return fmt.Errorf("request %s: %w", req, err)
	}
	d.credited += amount
	fmt.Fprintf(d.out, "request %s %s USD: credit-account approved %s; replayed: same answer\n", req, cents2(amount), cr.Str(claims.ReferenceClaim(claims.CreditAccount)))
	return nil
}
