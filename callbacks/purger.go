package callbacks

import (
	"context"
	"log/slog"
	"time"

	"github.com/provider-ledger/adapter/internal/loop"
)

// Purger deletes stored callback answers older than the retention
// (LEDGER_IDEMPOTENCY_RETENTION), in bounded batches, every Interval. Rows
// younger than the retention are never touched, so a retry within it always
// gets its stored answer.
type Purger struct {
	DB        Purgeable
	Retention time.Duration // default 840h
	Interval  time.Duration // default 1h
	BatchSize int           // default 5000
	Now       func() time.Time
	Logger    *slog.Logger

	loop loop.Loop
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

// RunOnce deletes every expired answer, a batch at a time, and returns how
// many it deleted. A cancelled context stops it without error.
func (p *Purger) RunOnce(ctx context.Context) (int64, error) {
	p.defaults()
	n, err := p.DB.PurgeCallbacks(ctx, p.Now().Add(-p.Retention), p.BatchSize)
	if ctx.Err() != nil {
		return n, nil
	}
	return n, err
}

// Purgeable deletes stored callback answers received before cutoff, at
// most batch rows per statement, and says how many (*store.DB implements
// it).
type Purgeable interface {
	PurgeCallbacks(ctx context.Context, cutoff time.Time, batch int) (int64, error)
}

// Start runs RunOnce now and every Interval until Stop or ctx ends.
func (p *Purger) Start(ctx context.Context) error {
	p.defaults()
	return p.loop.Start(ctx, p.Interval, true, func(ctx context.Context) {
		if n, err := p.RunOnce(ctx); err != nil {
			p.Logger.Warn("purging expired callback answers failed", "err", err)
		} else if n > 0 {
			p.Logger.Info("purged expired callback answers", "rows", n)
		}
	})
}

// Stop stops the loop and waits for it.
func (p *Purger) Stop() { p.loop.Stop() }
