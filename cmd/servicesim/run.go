package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/provider-ledger/adapter/provider/providertest"
)

// Run is the whole program: it parses args (what follows the command name),
// runs the subcommand until ctx ends, and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := parseServe(args, stderr)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if err := Serve(ctx, cfg, stdout, nil); err != nil {
			fmt.Fprintln(stderr, "servicesim:", err)
			return 1
		}
		return 0
	case "drive":
		cfg, err := parseDrive(args, stderr)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		return Drive(ctx, cfg, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "servicesim: unknown command %q (commands: serve, drive)\n", cmd)
		return 2
	}
}

// ServeConfig configures the sandbox server.
type ServeConfig struct {
	Listen       string
	ProviderID   string
	APIKeyID     string
	APIKeySecret string
	SignupDelay  time.Duration
}

// DefaultServeConfig is the configuration with no flags or env set.
func DefaultServeConfig() ServeConfig {
	return ServeConfig{Listen: "127.0.0.1:8090", ProviderID: "local", APIKeyID: "sim-key",
		APIKeySecret: "sim-secret", SignupDelay: time.Second}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func parseServe(args []string, stderr io.Writer) (ServeConfig, error) {
	cfg := DefaultServeConfig()
	fs := flag.NewFlagSet("servicesim serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Listen, "listen", envOr("SERVICESIM_LISTEN", cfg.Listen), "address to serve the provider API on (env SERVICESIM_LISTEN)")
	fs.StringVar(&cfg.ProviderID, "provider-id", envOr("SERVICESIM_PROVIDER_ID", cfg.ProviderID), "provider account ID (env SERVICESIM_PROVIDER_ID)")
	fs.StringVar(&cfg.APIKeyID, "api-key-id", envOr("SERVICESIM_API_KEY_ID", cfg.APIKeyID), "API key id (env SERVICESIM_API_KEY_ID)")
	fs.StringVar(&cfg.APIKeySecret, "api-key-secret", envOr("SERVICESIM_API_KEY_SECRET", cfg.APIKeySecret), "API key secret (env SERVICESIM_API_KEY_SECRET)")
	delay := envOr("SERVICESIM_SIGNUP_DELAY", cfg.SignupDelay.String())
	fs.StringVar(&delay, "signup-delay", delay, "time until the signup check clears or denies a participant (env SERVICESIM_SIGNUP_DELAY)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "servicesim serve: unexpected arguments %q\n", fs.Args())
		return cfg, errors.New("unexpected arguments")
	}
	d, err := time.ParseDuration(delay)
	if err != nil || d < 0 {
		fmt.Fprintf(stderr, "servicesim serve: --signup-delay %q is not a duration\n", delay)
		return cfg, errors.New("bad signup delay")
	}
	cfg.SignupDelay = d
	if cfg.ProviderID == "" || cfg.APIKeyID == "" || cfg.APIKeySecret == "" {
		fmt.Fprintln(stderr, "servicesim serve: --provider-id, --api-key-id and --api-key-secret must not be empty")
		return cfg, errors.New("empty credentials")
	}
	return cfg, nil
}

// NewSandbox builds the fake with the sandbox conventions (see the package
// doc): signup after cfg.SignupDelay, "deny-" externalIDs denied, a default
// limit policy.
func NewSandbox(cfg ServeConfig) *providertest.Service {
	svc := providertest.NewService(
		providertest.WithProviderID(cfg.ProviderID),
		providertest.WithAPIKey(cfg.APIKeyID, cfg.APIKeySecret),
		providertest.WithSignupCheck(providertest.SandboxSignupCheck(cfg.SignupDelay)),
	)
	if _, err := svc.SetPolicy(cfg.ProviderID, providertest.Limits{
		PerTransactionAmount: providertest.USDPtr("2500.00"),
		DailyAmount:          providertest.USDPtr("5000.00"),
		WeeklyAmount:         providertest.USDPtr("10000.00"),
		MonthlyAmount:        providertest.USDPtr("20000.00"),
		DailySendCount:       providertest.Count(25),
	}); err != nil {
		panic(err) // the literal above is valid
	}
	return svc
}

// Serve serves a sandbox until ctx ends, then shuts down gracefully. When svc
// is nil it builds one with NewSandbox. The banner (address, credentials,
// conventions) goes to out.
func Serve(ctx context.Context, cfg ServeConfig, out io.Writer, svc *providertest.Service) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return ServeListener(ctx, ln, cfg, out, svc)
}

// ServeListener is Serve on an open listener, which it closes.
func ServeListener(ctx context.Context, ln net.Listener, cfg ServeConfig, out io.Writer, svc *providertest.Service) error {
	if svc == nil {
		svc = NewSandbox(cfg)
	}
	srv := &http.Server{
		Handler:           svc,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(out, "servicesim: provider API on http://%s\n", ln.Addr())
	fmt.Fprintf(out, "  SERVICE_BASE_URL=http://%s\n  SERVICE_PROVIDER_ID=%s\n  SERVICE_API_KEY_ID=%s\n  SERVICE_API_KEY_SECRET=%s\n",
		ln.Addr(), cfg.ProviderID, cfg.APIKeyID, cfg.APIKeySecret)
	fmt.Fprintf(out, "  signup check clears participants after %s; externalIDs starting \"deny-\" are denied\n", cfg.SignupDelay)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
