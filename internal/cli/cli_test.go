package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/internal/buildinfo"
)

// testTree is a small program: groups, leaves with flags, a command whose
// usage errors exit 3, and a subtree where --json takes a value.
func testTree() *cobra.Command {
	root := Group(&cobra.Command{Use: "prog", Short: "a test program", Version: "v1"})
	ExitStatus(root, "0  ok\n1  failed\n2  usage")
	accounts := Group(&cobra.Command{Use: "accounts", Short: "accounts"})
	get := &cobra.Command{Use: "get ID", Short: "get one", Args: ExactArgs(1), RunE: func(cmd *cobra.Command, args []string) error {
		admin, _ := cmd.Flags().GetString("admin")
		js, _ := cmd.Flags().GetBool("json")
		fmt.Fprintf(cmd.OutOrStdout(), "get %s admin=%s json=%v\n", args[0], admin, js)
		return nil
	}}
	get.Flags().String("admin", "http://default", "admin URL")
	Env(get.Flags(), "admin", "PROG_ADMIN_URL", "PROG_FALLBACK_URL")
	get.Flags().String("token", "", "a token")
	Env(get.Flags(), "token", "PROG_TOKEN")
	get.Flags().Bool("json", false, "JSON")
	get.Flags().Int("limit", 1, "a number")
	Env(get.Flags(), "limit", "PROG_LIMIT")
	accounts.AddCommand(get)

	adjust := &cobra.Command{Use: "adjust ACCOUNT AMOUNT", Args: ExactArgs(2), RunE: func(cmd *cobra.Command, args []string) error {
		key, _ := cmd.Flags().GetString("key")
		fmt.Fprintf(cmd.OutOrStdout(), "adjust %s by %s key %s\n", args[0], args[1], key)
		return nil
	}}
	adjust.Flags().String("key", "", "idempotency key")
	adjust.Flags().Bool("json", false, "JSON")

	fail := &cobra.Command{Use: "fail", Args: NoArgs, RunE: func(*cobra.Command, []string) error {
		return errors.New("boom\n\tsecond line")
	}}
	usage := &cobra.Command{Use: "usage", Args: NoArgs, RunE: func(*cobra.Command, []string) error { return Usagef("give --x") }}
	verdict := &cobra.Command{Use: "verdict", Args: NoArgs, Annotations: map[string]string{UsageExitCode: "3"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "warning found")
			return &ExitError{Code: 1}
		}}
	ExitStatus(verdict, "0  clean\n1  warnings\n3  error")
	verdict.Flags().Bool("fix", false, "fix")

	body := Group(&cobra.Command{Use: "provider"})
	body.PersistentFlags().String("base-url", "", "base URL")
	create := &cobra.Command{Use: "create", Args: NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		b, _ := cmd.Flags().GetString("json")
		u, _ := cmd.Flags().GetString("base-url")
		fmt.Fprintf(cmd.OutOrStdout(), "create %s at %s\n", b, u)
		return nil
	}}
	create.Flags().String("json", "", "request body")
	body.AddCommand(create)

	root.AddCommand(accounts, adjust, fail, usage, verdict, body)
	return root
}

func execute(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Execute(context.Background(), testTree(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		in, want []string
	}{
		{"FlagsBeforeTheWords", []string{"--admin", "U", "--json", "accounts", "get", "A"}, []string{"accounts", "get", "--admin", "U", "--json", "--", "A"}},
		{"FlagsAmongArguments", []string{"accounts", "get", "A", "--admin=U"}, []string{"accounts", "get", "--admin=U", "--", "A"}},
		{"NegativeNumbersAreArguments", []string{"adjust", "acc", "-5.25", "--key", "k"}, []string{"adjust", "--key", "k", "--", "acc", "-5.25"}},
		{"NegativeNumberAsAFlagValue", []string{"adjust", "--key", "-1", "acc", "1"}, []string{"adjust", "--key", "-1", "--", "acc", "1"}},
		{"CallersDashDash", []string{"accounts", "get", "--", "--not-a-flag"}, []string{"accounts", "get", "--", "--not-a-flag"}},
		{"HelpAnywhere", []string{"accounts", "-h", "get"}, []string{"accounts", "get", "-h"}},
		{"WordAfterAnArgumentIsAnArgument", []string{"adjust", "get", "accounts"}, []string{"adjust", "--", "get", "accounts"}},
		{"ValueFlagOfTheSubtree", []string{"provider", "--json", "{}", "create"}, []string{"provider", "create", "--json", "{}"}},
		{"HelpCommand", []string{"help", "accounts", "get"}, []string{"help", "--", "accounts", "get"}},
		{"CompletionRequestUntouched", []string{"__complete", "accounts", "--json", ""}, []string{"__complete", "accounts", "--json", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := normalize(testTree(), c.in); !slices.Equal(got, c.want) {
				t.Fatalf("normalize(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestExecute(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		args       []string
		code       int
		out, errs  string // substrings; errs "" means stderr must be empty
		oneErrLine bool
	}{
		{"Runs", []string{"--admin", "U", "accounts", "get", "A"}, 0, "get A admin=U json=false", "", false},
		{"NegativeArgument", []string{"adjust", "acc", "-5.25", "--key", "k"}, 0, "adjust acc by -5.25 key k", "", false},
		{"HelpOnStdout", []string{"accounts", "get", "-h"}, 0, "Usage:\n  prog accounts get ID [flags]", "", false},
		{"HelpOfAGroup", []string{"accounts", "--help"}, 0, "Available Commands:", "", false},
		{"HelpCommand", []string{"help", "accounts", "get"}, 0, "prog accounts get ID", "", false},
		{"ExitStatusInHelp", []string{"verdict", "-h"}, 0, "Exit status:\n  0  clean\n  1  warnings\n  3  error", "", false},
		{"ExitStatusInherited", []string{"accounts", "get", "-h"}, 0, "Exit status:\n  0  ok", "", false},
		{"Version", []string{"--version"}, 0, "prog v1", "", false},
		{"Error", []string{"fail"}, 1, "", "prog fail: boom; second line\n", true},
		{"UsageError", []string{"usage"}, 2, "", "prog usage: give --x (see 'prog usage --help')", true},
		{"UnknownFlag", []string{"accounts", "get", "A", "--nope"}, 2, "", "prog accounts get: unknown flag: --nope", true},
		{"MissingArgument", []string{"accounts", "get"}, 2, "", "want 1 argument(s), got 0", true},
		{"GroupWithoutCommand", []string{"accounts"}, 2, "", "missing command: one of get", true},
		{"UnknownCommand", []string{"acounts"}, 2, "", `unknown command "acounts" for "prog" (did you mean accounts?)`, true},
		{"UnknownSubcommand", []string{"accounts", "bogus"}, 2, "", `unknown command "bogus" for "prog accounts"`, true},
		{"ExitCodeOfAVerdict", []string{"verdict"}, 1, "warning found", "", false},
		{"UsageExitCodeOfACommand", []string{"verdict", "--nope"}, 3, "", "unknown flag", true},
		{"FlagsOnlyWhereDefined", []string{"adjust", "a", "1", "--admin", "U"}, 2, "", "unknown flag: --admin", true},
		{"PersistentFlagBeforeTheWord", []string{"provider", "--base-url", "B", "create", "--json", "{}"}, 0, "create {} at B", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := execute(c.args...)
			if code != c.code || !strings.Contains(out, c.out) || (c.errs == "") != (errs == "") || !strings.Contains(errs, c.errs) {
				t.Fatalf("%q: exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout with %q, stderr with %q", c.args, code, out, errs, c.code, c.out, c.errs)
			}
			if c.oneErrLine && strings.Count(errs, "\n") != 1 {
				t.Fatalf("stderr is not one line: %q", errs)
			}
		})
	}
}

// TestEnv: not parallel, it sets the environment.
func TestEnv(t *testing.T) {
	t.Setenv("PROG_FALLBACK_URL", "http://fallback")
	if _, out, _ := execute("accounts", "get", "A"); !strings.Contains(out, "admin=http://fallback") {
		t.Fatalf("the second variable is not used: %q", out)
	}
	t.Setenv("PROG_ADMIN_URL", "http://env")
	if _, out, _ := execute("accounts", "get", "A"); !strings.Contains(out, "admin=http://env") {
		t.Fatalf("the first variable does not win: %q", out)
	}
	if _, out, _ := execute("accounts", "get", "A", "--admin", "http://flag"); !strings.Contains(out, "admin=http://flag") {
		t.Fatalf("the flag does not win: %q", out)
	}
	t.Setenv("PROG_TOKEN", "s3cret-token")
	_, help, _ := execute("accounts", "get", "-h")
	if !strings.Contains(help, "admin URL (env PROG_ADMIN_URL, else PROG_FALLBACK_URL)") || !strings.Contains(help, `(default "http://default")`) {
		t.Fatalf("help does not show the variables beside the flag, and the built-in default:\n%s", help)
	}
	if strings.Contains(help, "s3cret-token") || strings.Contains(help, "http://env") {
		t.Fatalf("help shows a value from the environment:\n%s", help)
	}
	t.Setenv("PROG_LIMIT", "lots-of-s3cret")
	code, _, errs := execute("accounts", "get", "A")
	if code != 2 || !strings.Contains(errs, "PROG_LIMIT is not a valid --limit") || strings.Contains(errs, "lots-of-s3cret") {
		t.Fatalf("bad PROG_LIMIT: exit %d %q", code, errs)
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	problem := func(status int, slug string) error {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"type":"urn:provider-ledger:problem:%s","title":"%s","status":%d,"detail":"d"}`, slug, http.StatusText(status), status)
		}))
		defer srv.Close()
		c, _ := adminapi.NewClient(srv.URL)
		_, _, err := c.Accounts.Get(ctx, "a")
		return err
	}

	t.Run("Unauthorized", func(t *testing.T) {
		t.Parallel()
		err := AdminAPI.Explain(problem(401, "unauthorized"))
		if !strings.HasSuffix(err.Error(), "(unauthorized): d; pass ledgerd's admin token with --admin-token or LEDGER_ADMIN_TOKEN") || !errors.Is(err, adminapi.ErrUnauthorized) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("NoRoute", func(t *testing.T) {
		t.Parallel()
		if err := AdminAPI.Explain(problem(404, "not-found")); !strings.Contains(err.Error(), "is --admin the admin listener") {
			t.Fatalf("%v", err)
		}
		if err := AdminAPI.Explain(problem(404, "account-not-found")); strings.Contains(err.Error(), ";") {
			t.Fatalf("a 404 of the API got a hint: %v", err)
		}
	})
	t.Run("DatabaseDown", func(t *testing.T) {
		t.Parallel()
		if err := AdminAPI.Explain(problem(503, "database-unavailable")); !strings.Contains(err.Error(), "ledgerd cannot reach its database") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("OtherAnswersUnchanged", func(t *testing.T) {
		t.Parallel()
		in := problem(422, "insufficient-available")
		if out := AdminAPI.Explain(in); out != in {
			t.Fatalf("%v", out)
		}
		if AdminAPI.Explain(nil) != nil {
			t.Fatal("nil explained")
		}
	})
	t.Run("ConnectionRefused", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c, _ := adminapi.NewClient("http://" + addr)
		_, _, err = c.Accounts.Get(ctx, "a")
		out := AdminAPI.Explain(err)
		want := "cannot reach ledgerd's admin API at http://" + addr + ": connection refused; is ledgerd running? (--admin or LEDGER_ADMIN_URL)"
		if out.Error() != want || !errors.Is(out, syscall.ECONNREFUSED) {
			t.Fatalf("%v\nwant %s", out, want)
		}
		if again := ProviderAPI.Explain(fmt.Errorf("wrapped: %w", out)); strings.Contains(again.Error(), "provider API") {
			t.Fatalf("explained twice: %v", again)
		}
	})
	t.Run("NoSuchHost", func(t *testing.T) {
		t.Parallel()
		c, _ := adminapi.NewClient("http://no-such-host.invalid")
		_, _, err := c.Accounts.Get(ctx, "a")
		if out := AdminAPI.Explain(err); !strings.HasSuffix(out.Error(), "; check the host in --admin or LEDGER_ADMIN_URL") || !strings.Contains(out.Error(), "cannot reach ledgerd's admin API: host no-such-host.invalid: ") {
			t.Fatalf("%v", out)
		}
	})
}

func TestVersion(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	if v := VersionOf(bi); v != "v1.2.3, revision 0123456789ab (modified), go1.26.0" {
		t.Fatal(v)
	}
	bi.Main.Version, bi.Settings = "(devel)", nil
	if v := VersionOf(bi); v != "(devel), revision unknown (built without VCS information), go1.26.0" {
		t.Fatal(v)
	}
	if v, want := Version(), buildinfo.Read().String(); v != want || !strings.HasPrefix(v, buildinfo.Version+", revision ") {
		t.Fatalf("Version() = %q, want %q, beginning with the release %s", v, want, buildinfo.Version)
	}
}
