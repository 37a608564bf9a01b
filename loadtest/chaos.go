package loadtest

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Chaos (spawn --chaos): during the storm, ledgerd is killed with SIGKILL
// and started again three times, and Postgres is stopped in immediate mode
// (a crash: recovery at the next start) and started again once. The storm's
// retry policy rides through; afterwards every check must hold.

// outage is one chaos event and how long the service was out. Times are
// seconds since the storm began.
type outage struct {
	What string `json:"what"`
	// Start is when the kill or stop was issued; Ready when ledgerd's
	// /readyz answered 200 again; End when the first callback after Ready
	// was answered 200. End − Start is the window drawn on the charts.
	Start float64 `json:"start"`
	Ready float64 `json:"ready"`
	End   float64 `json:"end"`
	Error string  `json:"error,omitempty"`
}

// ReadyAfter is the seconds from the event to ledgerd's readiness.
func (o outage) ReadyAfter() float64 { return round2(o.Ready - o.Start) }

// AnsweredAfter is the seconds from the event to the first approved answer.
func (o outage) AnsweredAfter() float64 { return round2(o.End - o.Start) }

// chaosTarget is what chaos acts on: spawn's ledgerd and Postgres.
type chaosTarget interface {
	// killLedgerd kills ledgerd with SIGKILL and waits for it to exit.
	killLedgerd() error
	// startLedgerd starts ledgerd again, without waiting for it.
	startLedgerd() error
	// restartPostgres stops Postgres in immediate mode and starts it again.
	restartPostgres(ctx context.Context) error
	// ready reports whether ledgerd's /readyz answers 200.
	ready(ctx context.Context) bool
}

type chaosKind int

const (
	killLedgerd chaosKind = iota
	restartPostgres
)

type chaosEvent struct {
	at   float64 // fraction of the storm's duration
	kind chaosKind
}

// chaos runs the events of a chaotic storm.
type chaos struct {
	target  chaosTarget
	events  []chaosEvent
	lastOK  func() time.Time // the end of the latest 200 answer
	recover time.Duration

	mu      sync.Mutex
	outages []outage
	done    chan struct{}
	cancel  context.CancelFunc
}

// newChaos plans three ledgerd kills and, with postgres, one Postgres
// restart, spread over the storm: a kill, the Postgres restart, two kills.
func newChaos(t chaosTarget, postgres bool) *chaos {
	ev := []chaosEvent{{0.12, killLedgerd}, {0.40, killLedgerd}, {0.62, killLedgerd}}
	if postgres {
		ev = []chaosEvent{{0.12, killLedgerd}, {0.32, restartPostgres}, {0.52, killLedgerd}, {0.70, killLedgerd}}
	}
	return &chaos{target: t, events: ev, recover: 90 * time.Second, done: make(chan struct{})}
}

// describe says what the chaos will do.
func (c *chaos) describe() string {
	kills, pg := 0, 0
	for _, e := range c.events {
		if e.kind == killLedgerd {
			kills++
		} else {
			pg++
		}
	}
	if pg == 0 {
		return fmt.Sprintf("%d ledgerd SIGKILLs and restarts", kills)
	}
	return fmt.Sprintf("%d ledgerd SIGKILLs and restarts, %d Postgres restart (immediate stop)", kills, pg)
}

// begin runs the events in the background, at their fractions of
// duration after start. x tells when callbacks are answered again.
func (c *chaos) begin(ctx context.Context, x *runner, start time.Time, duration time.Duration, prog *progress) {
	c.lastOK = x.lastOKTime
	ctx, c.cancel = context.WithCancel(ctx)
	go func() {
		defer close(c.done)
		for _, e := range c.events {
			at := start.Add(time.Duration(e.at * float64(duration)))
			select {
			case <-time.After(time.Until(at)):
			case <-ctx.Done():
				return
			}
			o := c.run(ctx, e, start, prog)
			c.mu.Lock()
			c.outages = append(c.outages, o)
			c.mu.Unlock()
			if o.Error != "" {
				return
			}
		}
	}()
}

func (c *chaos) run(ctx context.Context, e chaosEvent, start time.Time, prog *progress) outage {
	since := func() float64 { return round2(time.Since(start).Seconds()) }
	o := outage{Start: since()}
	var err error
	switch e.kind {
	case killLedgerd:
		o.What = "ledgerd SIGKILL, restarted"
		prog.setNote("ledgerd killed")
		if err = c.target.killLedgerd(); err == nil {
			err = c.target.startLedgerd()
		}
	case restartPostgres:
		o.What = "Postgres immediate stop, restarted"
		prog.setNote("Postgres restarting")
		err = c.target.restartPostgres(ctx)
	}
	defer prog.setNote("")
	if err != nil {
		o.Error = err.Error()
		return o
	}
	deadline := time.Now().Add(c.recover)
	for !c.target.ready(ctx) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			o.Error = fmt.Sprintf("ledgerd not ready %s after the event", c.recover)
			return o
		}
		time.Sleep(50 * time.Millisecond)
	}
	o.Ready = since()
	readyAt := time.Now()
	for !c.lastOK().After(readyAt) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			o.Error = fmt.Sprintf("no callback answered 200 within %s after the event", c.recover)
			return o
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.End = round2(c.lastOK().Sub(start).Seconds())
	return o
}

// wait returns the outages once the events are over: the one under way
// finishes; with stop, those still to come are called off (the storm
// stopped early), else they are waited for.
func (c *chaos) wait(stop bool) []outage {
	if stop {
		c.cancel()
	}
	<-c.done
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]outage(nil), c.outages...)
}

// check is the chaos as a check: every planned event happened and the
// service came back from each.
func (c *chaos) check(outages []outage) Check {
	ch := Check{Name: "chaos: " + c.describe() + " during the storm, each recovered from", Checked: len(c.events)}
	for _, o := range outages {
		if o.Error != "" {
			ch.failf("%s at %.1fs: %s", o.What, o.Start, o.Error)
		}
	}
	if n := len(outages); n < len(c.events) {
		ch.Failed += len(c.events) - n
		ch.Detail = append(ch.Detail, fmt.Sprintf("only %d of %d events happened: the storm ended first (give a longer --duration)", n, len(c.events)))
	}
	ch.OK = ch.Failed == 0
	return ch
}

// lastOKTime is the end of the latest 200 answer.
func (x *runner) lastOKTime() time.Time { return time.Unix(0, x.lastOK.Load()) }
