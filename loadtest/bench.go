package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/internal/cli"
)

// BenchReport is the report of `loadtest bench`: the adapter's
// authorize+capture cycles per second at each client count, and, with
// --ceiling-db, the pgbench ceiling measured right after on the same
// server and the ratio between them (docs/benchmarks.md).
type BenchReport struct {
	Prefix    string        `json:"prefix"`
	StartedAt time.Time     `json:"startedAt"`
	Runs      []benchResult `json:"runs"`
}

// benchResult is one client count.
type benchResult struct {
	Adapter cycleReport    `json:"adapter"`
	Ceiling *ceilingReport `json:"ceiling,omitempty"`
	// Ratio is adapter cycles/s ÷ ceiling cycles/s.
	Ratio      float64 `json:"ratio,omitempty"`
	CeilingErr string  `json:"ceilingError,omitempty"`
}

// bench runs `loadtest bench`.
func bench(ctx context.Context, cfg benchConfig, stdout, stderr io.Writer, h Hooks) error {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "loadtest bench: "+format+"\n", a...) }
	// The callbacks' requests are sent on the sending goroutine
	// (connTransport); the timeout is the transport's.
	hc := &http.Client{Transport: newConnTransport(newTransport(1024), 30*time.Second, 4*1024+16)}
	defer hc.CloseIdleConnections()
	adm, err := newAdminClient(cfg.admin, cfg.adminToken, &http.Client{Transport: newTransport(16)})
	if err != nil {
		return cli.Usagef("--admin: %v", err)
	}
	key, cleanup, err := benchKey(ctx, adm, cfg.secretFile, logf)
	if err != nil {
		return setupExit(err)
	}
	defer cleanup()
	client := &caller.Client{BaseURL: cfg.callbacks, Key: key.Prepared(), HTTP: hc, RawOnly: true}
	if err := probeCallbacks(ctx, hc, cfg.callbacks); err != nil {
		return setupExit(err)
	}
	prefix := newPrefix(time.Now().UnixNano()%(1<<40), h.now())
	accounts, err := seedBenchAccounts(ctx, adm, prefix, cfg.providerID, cfg.accounts, logf)
	if err != nil {
		return setupExit(err)
	}
	rep := BenchReport{Prefix: prefix, StartedAt: time.Now().UTC()}
	for ri, c := range cfg.clients {
		r := benchOne(ctx, adm, client, cfg.providerID, fmt.Sprintf("%s-r%d", prefix, ri), accounts, c, cfg.duration, cfg.warmup, cfg.ceilingDB, logf)
		if ctx.Err() != nil {
			return &cli.ExitError{Code: exitSetup, Err: ctx.Err()}
		}
		rep.Runs = append(rep.Runs, r)
	}
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return setupExit(err)
		}
	} else {
		printBench(stdout, rep)
	}
	if cfg.report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.report, append(b, '\n'), 0o644); err != nil {
			return setupExit(fmt.Errorf("writing the report: %w", err))
		}
	}
	for _, r := range rep.Runs {
		if r.Adapter.Cycles == 0 || r.CeilingErr != "" {
			return &cli.ExitError{Code: exitFailed}
		}
	}
	return nil
}

// seedBenchAccounts seeds n richly funded accounts for the cycle workload.
func seedBenchAccounts(ctx context.Context, adm *adminClient, prefix, providerID string, n int, logf func(string, ...any)) ([]accountSeed, error) {
	plan := Generate(Shape{Seed: 1, Prefix: prefix, ProviderID: providerID, Accounts: n, Payouts: 0, Credits: 1})
	for i := range plan.Header.Accounts {
		plan.Header.Accounts[i].Funding = "1000000000.00"
	}
	logf("seeding %d accounts (prefix %s)", n, prefix)
	if err := seedAll(ctx, adm, plan.Header.Accounts, 16, newModel(prefix)); err != nil {
		return nil, fmt.Errorf("seeding through the admin API: %w", cli.AdminAPI.Explain(err))
	}
	return plan.Header.Accounts, nil
}

// benchOne runs the cycle workload at clients for duration (after warmup),
// sampling CPU per cycle, then the ceiling on ceilingDB when given.
func benchOne(ctx context.Context, adm *adminClient, client *caller.Client, providerID, prefix string, accounts []accountSeed,
	clients int, duration, warmup time.Duration, ceilingDB string, logf func(string, ...any)) benchResult {
	logf("adapter: %d clients, %s (+%s warm-up)", clients, duration, warmup)
	var cpuPG procCPU
	var ledgerd0, self0 time.Duration
	var ok0 bool
	sample := func(start bool) {
		if start {
			ledgerd0, ok0 = adm.cpuSeconds(ctx)
			self0 = selfCPU()
			cpuPG.start()
		}
	}
	r := benchResult{}
	r.Adapter = runCycles(ctx, client, providerID, prefix, accounts, cycleSettings{Clients: clients, Duration: duration, Warmup: warmup}, sample)
	if cpuPG.stopc != nil {
		pg := cpuPG.stop()
		if r.Adapter.Cycles > 0 {
			n := float64(r.Adapter.Cycles)
			cpu := &cpuPerCycle{Postgres: round(pg / n), Loadgen: round(float64((selfCPU() - self0).Microseconds()) / n)}
			if l1, ok1 := adm.cpuSeconds(ctx); ok0 && ok1 {
				cpu.Ledgerd = round(float64((l1 - ledgerd0).Microseconds()) / n)
			}
			r.Adapter.CPU = cpu
		}
	}
	if ceilingDB != "" && ctx.Err() == nil {
		cr, err := ceiling(ctx, ceilingDB, clients, duration, logf)
		if err != nil {
			r.CeilingErr = err.Error()
			logf("ceiling: %v", err)
		} else {
			r.Ceiling = &cr
			if cr.CyclesPerSec > 0 {
				r.Ratio = round2(r.Adapter.CyclesPerSec / cr.CyclesPerSec)
			}
		}
	}
	return r
}

// benchKey reads the secret file or installs a fresh secret that is
// retired by the returned cleanup; either way it waits until ledgerd's
// keyring holds it.
func benchKey(ctx context.Context, adm *adminClient, file string, logf func(string, ...any)) (envelope.Key, func(), error) {
	cleanup := func() {}
	var key envelope.Key
	var err error
	if file != "" {
		if key, err = readSecret(file); err != nil {
			return key, nil, err
		}
	} else {
		if key, err = adm.generateSecret(ctx); err != nil {
			return key, nil, err
		}
		logf("installed signing secret %s; it is retired at the end", key.ID)
		cleanup = func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := adm.retireSecret(rctx, key.ID); err != nil {
				logf("retiring signing secret %s: %v", key.ID, err)
			}
		}
	}
	if err := adm.waitForKey(ctx, key, file); err != nil {
		cleanup()
		return key, nil, err
	}
	return key, cleanup, nil
}

func printBench(w io.Writer, rep BenchReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tcycles/s\tauth p50/p90/p95/p99/p99.9/max ms\tcapt p50/p90/p95/p99/p99.9/max ms\tretried\tfailed\tceiling cycles/s\tratio\tpg µs/cycle\tledgerd µs/cycle\tloadgen µs/cycle\t")
	for _, r := range rep.Runs {
		a := r.Adapter
		ceil, ratio := "-", "-"
		if r.Ceiling != nil {
			ceil = strconv.FormatFloat(r.Ceiling.CyclesPerSec, 'f', 0, 64)
			ratio = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		pg, ld, lg := "-", "-", "-"
		if a.CPU != nil {
			pg, ld, lg = fmtMicros(a.CPU.Postgres), fmtMicros(a.CPU.Ledgerd), fmtMicros(a.CPU.Loadgen)
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", a.Clients, a.CyclesPerSec,
			a.Authorize.compact(), a.Capture.compact(), a.Retried, a.Failed, ceil, ratio, pg, ld, lg)
	}
	tw.Flush()
	for _, r := range rep.Runs {
		if c := r.Ceiling; c != nil {
			fmt.Fprintf(w, "ceiling at %d clients: authorize %.0f tps (p50/p90/p95/p99/p99.9/max %s ms), capture %.0f tps (p50/p90/p95/p99/p99.9/max %s ms), postgres %.0f µs per naive authorize\n",
				c.Clients, c.AuthorizeTPS, c.AuthorizeLat.compact(), c.CaptureTPS, c.CaptureLat.compact(), c.PostgresMicro)
		}
		if r.CeilingErr != "" {
			fmt.Fprintf(w, "ceiling at %d clients failed: %s\n", r.Adapter.Clients, r.CeilingErr)
		}
	}
}

func fmtMicros(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
