package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/internal/cli"
	"github.com/provider-ledger/adapter/internal/drive"
	"github.com/provider-ledger/adapter/provider/providertest"
)

// run is the whole program: it parses args (what follows the command name),
// runs the subcommand until ctx ends, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Execute(ctx, newRoot(), args, stdout, stderr)
}

const rootLong = `servicesim is a local sandbox of the payments service. Without a command (or
with serve) it serves an in-memory fake of the service's provider API for one
provider account, with the sandbox conventions below; "servicesim drive"
plays the service's callbacks against a running ledgerd.

Sandbox conventions: a new participant is pending until the signup check
clears it after --signup-delay; an externalID starting with "deny-" is
denied instead. The provider starts with a default limit policy. State is
kept in memory and lost on exit. Point ledgerctl provider at it with the
export SERVICE_* lines it prints at start (its whole banner is valid shell),
or with eval "$(servicesim env)" from another shell.`

const serveExitStatus = `0  stopped by SIGINT or SIGTERM
1  could not serve (the address is taken, …)
2  usage error: bad flag or arguments`

func newRoot() *cobra.Command {
	cfg := defaultServeConfig()
	root := &cobra.Command{
		Use:     "servicesim",
		Short:   "Local sandbox of the payments service: the provider API fake, and a callback driver",
		Long:    rootLong,
		Version: cli.Version(),
		Args:    cli.NoCommand,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runServe(cmd, cfg) },
	}
	serveFlags(root, &cfg)
	cli.ExitStatus(root, serveExitStatus)

	scfg := defaultServeConfig()
	serveCmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the provider API fake (what servicesim does without a command)",
		Long:  rootLong,
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runServe(cmd, scfg) },
	}
	serveFlags(serveCmd, &scfg)
	root.AddCommand(serveCmd, newEnvCmd(), newDriveCmd(new(drive.Config)))
	return root
}

// serveFlags registers the flags of serve on cmd, into cfg.
func serveFlags(cmd *cobra.Command, cfg *serveConfig) {
	fs := cmd.Flags()
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "address to serve the provider API on")
	cli.Env(fs, "listen", "SERVICESIM_LISTEN")
	fs.StringVar(&cfg.ProviderID, "provider-id", cfg.ProviderID, "the provider account the sandbox serves")
	cli.Env(fs, "provider-id", "SERVICESIM_PROVIDER_ID")
	fs.StringVar(&cfg.APIKeyID, "api-key-id", cfg.APIKeyID, "API key ID the sandbox accepts")
	cli.Env(fs, "api-key-id", "SERVICESIM_API_KEY_ID")
	fs.StringVar(&cfg.APIKeySecret, "api-key-secret", cfg.APIKeySecret, "API key secret the sandbox accepts")
	cli.Env(fs, "api-key-secret", "SERVICESIM_API_KEY_SECRET")
	fs.DurationVar(&cfg.SignupDelay, "signup-delay", cfg.SignupDelay, "time until the signup check clears or denies a participant")
	cli.Env(fs, "signup-delay", "SERVICESIM_SIGNUP_DELAY")
}

func runServe(cmd *cobra.Command, cfg serveConfig) error {
	if err := checkServeConfig(cfg); err != nil {
		return err
	}
	return serve(cmd.Context(), cfg, cmd.OutOrStdout(), nil)
}

// checkServeConfig refuses a configuration serve cannot run with.
func checkServeConfig(cfg serveConfig) error {
	if cfg.SignupDelay < 0 {
		return cli.Usagef("--signup-delay %s is negative", cfg.SignupDelay)
	}
	if cfg.ProviderID == "" || cfg.APIKeyID == "" || cfg.APIKeySecret == "" {
		return cli.Usagef("--provider-id, --api-key-id and --api-key-secret must not be empty")
	}
	return nil
}

// serveConfig configures the sandbox server.
type serveConfig struct {
	Listen       string
	ProviderID   string
	APIKeyID     string
	APIKeySecret string
	SignupDelay  time.Duration
}

// defaultServeConfig is the configuration with no flags or env set.
func defaultServeConfig() serveConfig {
	return serveConfig{Listen: "127.0.0.1:8090", ProviderID: "local", APIKeyID: "sim-key",
		APIKeySecret: "sim-secret", SignupDelay: time.Second}
}

// newSandbox builds the fake with the sandbox conventions (see the package
// doc): signup after cfg.SignupDelay, "deny-" externalIDs denied, a default
// limit policy.
func newSandbox(cfg serveConfig) *providertest.Service {
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

// serve serves a sandbox until ctx ends, then shuts down gracefully. When svc
// is nil it builds one with newSandbox. The banner (address, credentials,
// conventions) goes to out.
func serve(ctx context.Context, cfg serveConfig, out io.Writer, svc *providertest.Service) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return serveListener(ctx, ln, cfg, out, svc)
}

// serveListener is serve on an open listener, which it closes.
func serveListener(ctx context.Context, ln net.Listener, cfg serveConfig, out io.Writer, svc *providertest.Service) error {
	if svc == nil {
		svc = newSandbox(cfg)
	}
	srv := &http.Server{
		Handler:           svc,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(out, "# servicesim: provider API on http://%s\n", ln.Addr())
	writeExports(out, baseURL(ln.Addr().String()), cfg)
	fmt.Fprintf(out, "# signup check clears participants after %s; externalIDs starting \"deny-\" are denied\n", cfg.SignupDelay)

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
