package drive

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"
	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/keyring"
	"github.com/provider-ledger/adapter/ledger"
)

// callback is one callback of a lifecycle: its endpoint, its idempotency
// key (for messages), and its service claims (claims.AuthorizeService,
// …), sent as they are on every attempt and every replay.
type callback struct {
	endpoint, key string
	service       any
}

// maxAttempts bounds the retries of one callback, as the service does.
const maxAttempts = 5

// send posts one callback, retrying 408, 429, 5xx and transport errors with
// the same claims (so the same idempotency key), re-sealed per attempt. Any
// other non-200 is terminal.
func (d *driver) send(ctx context.Context, cb callback) (*caller.Reply, error) {
	backoff := 50 * time.Millisecond
	var last string
	var lastErr error // the last transport error, if the last attempt had one
	for attempt := 1; ; attempt++ {
		d.sent++
		r, err := d.cb.Send(ctx, cb.endpoint, cb.service)
		switch {
		case err != nil && r != nil && r.Status == http.StatusOK:
			return nil, fmt.Errorf("%s: %w", cb.endpoint, err) // a 200 we cannot open: not retryable
		case err != nil:
			last, lastErr = err.Error(), err
		case r.Status == http.StatusOK:
			return r, nil
		case r.Retryable():
			last, lastErr = fmt.Sprintf("%d %v", r.Status, r.ProblemType()), nil
			if s, perr := strconv.Atoi(r.RetryAfter); perr == nil && s >= 0 {
				backoff = max(backoff, min(time.Duration(s)*time.Second, 2*time.Second))
			}
		default:
			return nil, fmt.Errorf("%s key %s refused: %d %v (%v)%s", cb.endpoint, cb.key, r.Status,
				r.ProblemType(), r.ProblemDetail(), refusalHint(r, d.cfg.SecretFile))
		}
		if attempt == maxAttempts {
			if lastErr != nil {
				last = cli.Callbacks.Explain(lastErr).Error()
			}
			return nil, fmt.Errorf("%s key %s: gave up after %d attempts: %s", cb.endpoint, cb.key, attempt, last)
		}
		d.retry++
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// refusalHint is the next step after a refusal a person can fix.
func refusalHint(r *caller.Reply, secretFile string) string {
	typ := r.ProblemType()
	switch {
	case r.Status == http.StatusBadRequest && strings.HasSuffix(typ, ":undecryptable"):
		return "; ledgerd does not know the signing secret of " + secretFile + ": pass the one it has with --secret-file " +
			"(an embedded ledgerd writes " + keyring.SecretFile + " in its data directory, LEDGER_DATA_DIR)"
	case r.Status == http.StatusForbidden:
		return "; ledgerd serves another provider: set --provider-id to its LEDGER_PROVIDER_ID"
	}
	return ""
}

// replay sends the same claims again and requires the same answer.
func (d *driver) replay(ctx context.Context, cb callback, first *caller.Reply) error {
	r, err := d.send(ctx, cb)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(r.Service, first.Service) {
		return fmt.Errorf("%s key %s: replay answered %s, first %s", cb.endpoint, cb.key, r.Raw, first.Raw)
	}
	d.replays++
	return nil
}

// expect requires an approval answering the endpoint's reference.
func expect(r *caller.Reply, endpoint string) error {
	if ref := claims.ReferenceClaim(endpoint); r.Outcome() != ledger.OutcomeApproved || r.Str(ref) == "" {
		return fmt.Errorf("%s answered %s, want approved with %s", endpoint, r.Raw, ref)
	}
	return nil
}

// sendApproved sends one callback and requires it approved with its
// endpoint's reference.
func (d *driver) sendApproved(ctx context.Context, cb callback) (*caller.Reply, error) {
	r, err := d.send(ctx, cb)
	if err != nil {
		return nil, err
	}
	if err := expect(r, cb.endpoint); err != nil {
		return nil, err
	}
	return r, nil
}
