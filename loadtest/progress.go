package loadtest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progress prints the state of a storm every interval: requests done of
// the total (or time of the duration), answers per second since the last
// line, the p50/p90/p95/p99/p99.9/max latencies so far and the non-200
// answers so far. On a terminal it redraws one line with a bar; otherwise it
// prints plain lines.
type progress struct {
	w        io.Writer
	bar      bool
	every    time.Duration
	label    string
	x        *runner
	start    time.Time
	duration time.Duration // 0: by requests

	stopc   chan struct{}
	stopped sync.WaitGroup

	lastOK   int
	lastTime time.Time
	// note, when set, is shown after the figures (chaos: "ledgerd down").
	mu   sync.Mutex
	note string
}

func newProgress(w io.Writer, bar bool, every time.Duration, label string, x *runner, start time.Time, duration time.Duration) *progress {
	return &progress{w: w, bar: bar, every: every, label: label, x: x, start: start, duration: duration,
		stopc: make(chan struct{}), lastTime: start}
}

func (p *progress) begin() {
	if p == nil || p.every <= 0 {
		return
	}
	p.stopped.Go(func() {
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.print(false)
			case <-p.stopc:
				p.print(true)
				return
			}
		}
	})
}

func (p *progress) end() {
	if p == nil || p.every <= 0 {
		return
	}
	close(p.stopc)
	p.stopped.Wait()
}

func (p *progress) setNote(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.note = s
	p.mu.Unlock()
}

// line is the state now, without the bar.
func (p *progress) line(now time.Time) (frac float64, text string) {
	x := p.x
	x.mu.Lock()
	ok, nonOK := 0, map[string]int{}
	for _, s := range x.stats {
		ok += s.ok
		for code, n := range s.statuses {
			if code != 200 {
				nonOK[strconv.Itoa(code)] += n
			}
		}
		if s.transport > 0 {
			nonOK["transport"] += s.transport
		}
	}
	retried := 0
	for _, s := range x.stats {
		retried += s.retried
	}
	lat := "-"
	if x.all.TotalCount() > 0 {
		q := func(p float64) float64 { return msOf(x.all.ValueAtQuantile(p)) }
		lat = fmt.Sprintf("%.1f/%.1f/%.1f/%.1f/%.1f/%.1f", q(50), q(90), q(95), q(99), q(99.9), msOf(x.all.Max()))
	}
	x.mu.Unlock()
	rate := 0.0
	if dt := now.Sub(p.lastTime).Seconds(); dt > 0 {
		rate = float64(ok-p.lastOK) / dt
	}
	p.lastOK, p.lastTime = ok, now
	done, total := x.done.Load(), x.total.Load()
	elapsed := now.Sub(p.start)
	var b strings.Builder
	if p.duration > 0 {
		frac = min(elapsed.Seconds()/p.duration.Seconds(), 1)
		fmt.Fprintf(&b, "%s/%s, round %d, %d requests", elapsed.Round(time.Second), p.duration, x.round.Load()+1, done)
	} else {
		if total > 0 {
			frac = float64(done) / float64(total)
		}
		fmt.Fprintf(&b, "%s, %d/%d requests (%.0f%%)", elapsed.Round(time.Second), done, total, 100*frac)
	}
	fmt.Fprintf(&b, ", %.0f answers/s, p50/p90/p95/p99/p99.9/max %s ms so far", rate, lat)
	if len(nonOK) > 0 {
		parts := make([]string, 0, len(nonOK))
		for _, k := range slices.Sorted(maps.Keys(nonOK)) {
			parts = append(parts, fmt.Sprintf("%s:%d", k, nonOK[k]))
		}
		fmt.Fprintf(&b, ", non-200 %s", strings.Join(parts, " "))
	}
	if retried > 0 {
		fmt.Fprintf(&b, ", %d retried", retried)
	}
	p.mu.Lock()
	if p.note != "" {
		fmt.Fprintf(&b, " [%s]", p.note)
	}
	p.mu.Unlock()
	return frac, b.String()
}

func (p *progress) print(final bool) {
	frac, text := p.line(time.Now())
	if !p.bar {
		fmt.Fprintf(p.w, "%s: %s\n", p.label, text)
		return
	}
	const width = 24
	filled := int(frac * width)
	bar := strings.Repeat("#", filled) + strings.Repeat("-", width-filled)
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %s%s", bar, text, end)
}
