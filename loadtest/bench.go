package loadtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/envelope"
)

// BenchReport is the report of `loadtest bench`: the adapter's
// authorize+capture cycles per second at each client count, and, with
// --ceiling-db, the pgbench ceiling measured right after on the same
// server and the ratio between them (docs/benchmarks.md).
type BenchReport struct {
	Prefix    string        `json:"prefix"`
	StartedAt time.Time     `json:"startedAt"`
	Runs      []BenchResult `json:"runs"`
}

// BenchResult is one client count.
type BenchResult struct {
	Adapter CycleReport    `json:"adapter"`
	Ceiling *CeilingReport `json:"ceiling,omitempty"`
	// Ratio is adapter cycles/s ÷ ceiling cycles/s.
	Ratio      float64 `json:"ratio,omitempty"`
	CeilingErr string  `json:"ceilingError,omitempty"`
}

type benchConfig struct {
	callbacks, admin, adminToken, providerID, secretFile string
	clients                                              []int
	duration, warmup                                     time.Duration
	accounts                                             int
	ceilingDB, report                                    string
}

func parseBench(args []string, stderr io.Writer, h Hooks) (benchConfig, error) {
	cfg := benchConfig{adminToken: h.Getenv("LEDGER_ADMIN_TOKEN")}
	fs := flag.NewFlagSet("loadtest bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.callbacks, "callbacks", "http://127.0.0.1:8080/ledger", "base URL of ledgerd's callbacks")
	fs.StringVar(&cfg.admin, "admin", "http://127.0.0.1:8081", "base URL of ledgerd's admin API (bearer token: env LEDGER_ADMIN_TOKEN)")
	fs.StringVar(&cfg.providerID, "provider-id", "local", "this provider's account ID (ledgerd's LEDGER_PROVIDER_ID)")
	fs.StringVar(&cfg.secretFile, "secret-file", "", "file holding a Base64 signing secret ledgerd knows (default: install a fresh one through the admin API)")
	clients := fs.String("clients", "16,64", "comma-separated client counts, one run each")
	fs.DurationVar(&cfg.duration, "duration", 20*time.Second, "measured window per run (adapter and each pgbench script)")
	fs.DurationVar(&cfg.warmup, "warmup", 3*time.Second, "run before each adapter window, not counted")
	fs.IntVar(&cfg.accounts, "accounts", 1000, "funded accounts the cycles pick from")
	fs.StringVar(&cfg.ceilingDB, "ceiling-db", "", "URL of a scratch database on ledgerd's Postgres server: run the pgbench ceiling there after each adapter run and report the ratio (its tables are dropped and recreated)")
	fs.StringVar(&cfg.report, "report", "", "file to write the JSON report to")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 1024 {
			return cfg, fmt.Errorf("--clients %q: each must be 1 to 1024", *clients)
		}
		cfg.clients = append(cfg.clients, n)
	}
	if cfg.duration < time.Second || cfg.warmup < 0 {
		return cfg, fmt.Errorf("--duration must be at least 1s and --warmup not negative")
	}
	if cfg.accounts < 1 || cfg.accounts > 100000 {
		return cfg, fmt.Errorf("--accounts must be 1 to 100000")
	}
	return cfg, nil
}

// bench runs `loadtest bench`.
func bench(ctx context.Context, args []string, stdout, stderr io.Writer, h Hooks) int {
	cfg, err := parseBench(args, stderr, h)
	if err != nil {
		if err == flag.ErrHelp {
			return ExitOK
		}
		fmt.Fprintf(stderr, "loadtest bench: %v\n", err)
		return ExitSetup
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "loadtest bench: "+format+"\n", a...) }
	transport := &http.Transport{Proxy: nil, MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048, IdleConnTimeout: 90 * time.Second}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	adm, err := newAdminClient(cfg.admin, cfg.adminToken, hc)
	if err != nil {
		logf("--admin: %v", err)
		return ExitSetup
	}
	key, cleanup, err := benchKey(ctx, adm, cfg.secretFile, logf)
	if err != nil {
		logf("%v", err)
		return ExitSetup
	}
	defer cleanup()
	client := &callbacks.Client{BaseURL: cfg.callbacks, Key: key, HTTP: hc, RawOnly: true}
	if err := warmUp(ctx, client, cfg.providerID); err != nil {
		logf("%v", err)
		return ExitSetup
	}
	prefix := NewPrefix(time.Now().UnixNano()%(1<<40), h.Now())
	plan := Generate(Shape{Seed: 1, Prefix: prefix, ProviderID: cfg.providerID, Accounts: cfg.accounts, Payouts: 0, Credits: 1})
	for i := range plan.Header.Accounts {
		plan.Header.Accounts[i].Funding = "1000000000.00"
	}
	logf("seeding %d accounts (prefix %s)", cfg.accounts, prefix)
	if err := seedAll(ctx, adm, plan.Header.Accounts, 16); err != nil {
		logf("seeding through the admin API: %v", err)
		return ExitSetup
	}
	rep := BenchReport{Prefix: prefix, StartedAt: time.Now().UTC()}
	for ri, c := range cfg.clients {
		logf("adapter: %d clients, %s (+%s warm-up)", c, cfg.duration, cfg.warmup)
		var cpuPG procCPU
		var ledgerd0, self0 time.Duration
		var ok0 bool
		sample := func(start bool) {
			if start {
				ledgerd0, ok0 = adm.cpuSeconds(ctx)
				self0 = selfCPU()
				cpuPG.start()
				return
			}
		}
		r := BenchResult{}
		r.Adapter = runCycles(ctx, client, cfg.providerID, fmt.Sprintf("%s-r%d", prefix, ri), plan.Header.Accounts,
			CycleSettings{Clients: c, Duration: cfg.duration, Warmup: cfg.warmup}, sample)
		if cpuPG.stopc != nil && r.Adapter.Cycles > 0 {
			n := float64(r.Adapter.Cycles)
			cpu := &CPUPerCycle{Postgres: round(cpuPG.stop() / n), Loadgen: round(float64((selfCPU() - self0).Microseconds()) / n)}
			if l1, ok1 := adm.cpuSeconds(ctx); ok0 && ok1 {
				cpu.Ledgerd = round(float64((l1 - ledgerd0).Microseconds()) / n)
			}
			r.Adapter.CPU = cpu
		}
		if ctx.Err() != nil {
			return ExitSetup
		}
		if cfg.ceilingDB != "" {
			cr, err := ceiling(ctx, cfg.ceilingDB, c, cfg.duration, logf)
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
		rep.Runs = append(rep.Runs, r)
	}
	printBench(stdout, rep)
	if cfg.report != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.report, append(b, '\n'), 0o644); err != nil {
			logf("writing the report: %v", err)
			return ExitSetup
		}
	}
	for _, r := range rep.Runs {
		if r.Adapter.Cycles == 0 || r.CeilingErr != "" {
			return ExitFailed
		}
	}
	return ExitOK
}

// benchKey reads the secret file or installs a fresh secret that is
// retired by the returned cleanup.
func benchKey(ctx context.Context, adm *adminClient, file string, logf func(string, ...any)) (envelope.Key, func(), error) {
	if file != "" {
		k, err := readSecret(file)
		return k, func() {}, err
	}
	secret, id, _, err := adm.generateSecret(ctx)
	if err != nil {
		return envelope.Key{}, nil, err
	}
	raw, err := envelope.ParseSecret(secret)
	if err != nil {
		return envelope.Key{}, nil, err
	}
	logf("installed signing secret %s; it is retired at the end", id)
	return envelope.Key{ID: id, Secret: raw}, func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := adm.retireSecret(rctx, id); err != nil {
			logf("retiring signing secret %s: %v", id, err)
		}
	}, nil
}

func printBench(w io.Writer, rep BenchReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "clients\tcycles/s\tauth p50 ms\tauth p99 ms\tcapt p50 ms\tcapt p99 ms\tretried\tfailed\tceiling cycles/s\tratio\tpg µs/cycle\tledgerd µs/cycle\tloadgen µs/cycle\t")
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
		fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", a.Clients, a.CyclesPerSec,
			a.Authorize.P50, a.Authorize.P99, a.Capture.P50, a.Capture.P99, a.Retried, a.Failed, ceil, ratio, pg, ld, lg)
	}
	tw.Flush()
	for _, r := range rep.Runs {
		if c := r.Ceiling; c != nil {
			fmt.Fprintf(w, "ceiling at %d clients: authorize %.0f tps (p50 %.2f ms, p99 %.2f ms), capture %.0f tps (p50 %.2f ms, p99 %.2f ms), postgres %.0f µs per naive authorize\n",
				c.Clients, c.AuthorizeTPS, c.AuthorizeLat.P50, c.AuthorizeLat.P99, c.CaptureTPS, c.CaptureLat.P50, c.CaptureLat.P99, c.PostgresMicro)
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
