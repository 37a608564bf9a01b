package callbacks

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Purger deletes stored callback answers older than the retention
// (LEDGER_IDEMPOTENCY_RETENTION), in bounded batches, every Interval. Rows
// younger than the retention are never touched, so a retry within it always
// gets its stored answer.
type Purger struct {
	Pool      *pgxpool.Pool
	Retention time.Duration // default 840h
	Interval  time.Duration // default 1h
	BatchSize int           // default 5000
	Now       func() time.Time
	Logger    *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *Purger) defaults() {
	if p.Retention <= 0 {
		p.Retention = 840 * time.Hour
	}
	if p.Interval <= 0 {
		p.Interval = time.Hour
	}
	if p.BatchSize <= 0 {
		p.BatchSize = 5000
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
}

// purgeSQL deletes a batch of expired answers by primary key (a ctid is
// only unique within one partition, so it cannot name a row of the
// partitioned table), checking the age again on the row it deletes.
const purgeSQL = `DELETE FROM callback_requests c
USING (SELECT endpoint, scope, idempotency_key FROM callback_requests WHERE received_at < $1 LIMIT $2) o
WHERE (c.endpoint, c.scope, c.idempotency_key) = (o.endpoint, o.scope, o.idempotency_key)
  AND c.received_at < $1`

// RunOnce deletes every expired answer, a batch at a time, and returns how
// many it deleted. A cancelled context stops it without error.
func (p *Purger) RunOnce(ctx context.Context) (int64, error) {
	p.defaults()
	cutoff := p.Now().Add(-p.Retention)
	var total int64
	for {
		tag, err := p.Pool.Exec(ctx, purgeSQL, cutoff, p.BatchSize)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return total, nil
			}
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(p.BatchSize) {
			return total, nil
		}
	}
}

// Start runs RunOnce every Interval until Stop or ctx ends.
func (p *Purger) Start(ctx context.Context) {
	p.defaults()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.Interval)
		defer t.Stop()
		for {
			if n, err := p.RunOnce(ctx); err != nil {
				p.Logger.Warn("purging expired callback answers failed", "err", err)
			} else if n > 0 {
				p.Logger.Info("purged expired callback answers", "rows", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop stops the loop and waits for it.
func (p *Purger) Stop() {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel = nil
	p.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
