package loadtest

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/provider-ledger/adapter/internal/cli"
)

// environment is what a reader needs to compare a run with another: the
// versions, the machine, the database.
type environment struct {
	Loadtest   string `json:"loadtest"`
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	// Ledgerd is the version of the ledgerd under test: its build info
	// (spawn) or the Go version its /metrics reports.
	Ledgerd string `json:"ledgerd,omitempty"`
	// Commit is the checkout spawn built ledgerd from.
	Commit string `json:"commit,omitempty"`
	// Postgres is the server's version, when known; Database where the
	// ledger lived.
	Postgres string `json:"postgres,omitempty"`
	Database string `json:"database,omitempty"`
}

// localEnvironment describes this machine and this binary.
func localEnvironment() environment {
	e := environment{Loadtest: cli.Version(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
		Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return e
}

// binaryVersion describes a Go binary from its build info: module
// version, VCS revision, Go version.
func binaryVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	return cli.VersionOf(bi)
}

// gitCommit is the commit checked out in dir, with "+dirty" when the tree
// has changes, or "" when dir is no git checkout.
func gitCommit(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+dirty"
	}
	return c
}

// ledgerdGo is the Go version ledgerd's /metrics reports (go_info).
func ledgerdGo(ctx context.Context, adm *adminClient) string {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := adm.metrics(cctx)
	if err != nil {
		return ""
	}
	for k := range m {
		if v, ok := strings.CutPrefix(k, "go_info:"); ok {
			return "built with " + v + " (from its /metrics)"
		}
	}
	return ""
}
