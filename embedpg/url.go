//go:build unix

package embedpg

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PassfileURL returns a connection URL for the cluster's superuser that
// carries no password: it names DataDir/pgpass (a libpq password file,
// 0600, rewritten at every start), which pgx, psql and every libpq client
// read. Safe to log and to paste:
// postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable&passfile=/abs/DataDir/pgpass.
func (s *Instance) PassfileURL() string { return passfileURL(s.url, s.dataDir) }

func passfileURL(withPassword, dataDir string) string {
	u, err := url.Parse(withPassword)
	if err != nil {
		return ""
	}
	u.User = url.User(superuser)
	// The path stays readable: only what a query value cannot hold is escaped.
	u.RawQuery = strings.TrimPrefix(u.RawQuery+"&passfile="+escapeQuery(filepath.Join(dataDir, "pgpass")), "&")
	return u.String()
}

func escapeQuery(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._-~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// passfileLine is the pgpass line for the superuser on any port and
// database of 127.0.0.1 (the port changes at every start).
func passfileLine(password string) string {
	esc := strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace(password)
	return "127.0.0.1:*:*:" + superuser + ":" + esc + "\n"
}

// errNotRunning is returned by RunningURL when no embedded Postgres of the
// data directory is running.
var errNotRunning = errors.New("embedpg: the embedded Postgres is not running")

// RunningURL returns the connection URL of the embedded Postgres running
// in dataDir (ledgerd's LEDGER_DATA_DIR), read from its files: the port
// from the cluster's postmaster.pid, the password from DataDir/pgpass (the
// URL names the file) or, with withPassword, from DataDir/pg-password
// inline. It fails with errNotRunning when no server of that directory is
// running.
func RunningURL(dataDir string, withPassword bool) (string, error) {
	dir, err := filepath.Abs(dataDir)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: there is no %s (is it the LEDGER_DATA_DIR ledgerd runs with?)", errNotRunning, dataDir)
	} else if err != nil {
		return "", fmt.Errorf("embedpg: data directory %s: %w", dataDir, err)
	}
	pgDir := filepath.Join(dir, "pg")
	b, err := os.ReadFile(filepath.Join(pgDir, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(pgDir, "PG_VERSION")); serr != nil {
			return "", fmt.Errorf("embedpg: %s holds no embedded cluster (is LEDGER_DATA_DIR right?)", dataDir)
		}
		return "", fmt.Errorf("%w in %s (start ledgerd without DATABASE_URL)", errNotRunning, dataDir)
	} else if err != nil {
		return "", fmt.Errorf("embedpg: reading %s: %w", filepath.Join(pgDir, "postmaster.pid"), err)
	}
	// postmaster.pid: PID, data directory, start time, port, socket
	// directory, listen address, shared memory key, status.
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return "", fmt.Errorf("%w in %s (postgres is starting or stopping)", errNotRunning, dataDir)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(lines[0]))
	port, err2 := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err1 != nil || err2 != nil || !alive(max(pid, -pid)) {
		return "", fmt.Errorf("%w in %s (a stale postmaster.pid)", errNotRunning, dataDir)
	}
	u := &url.URL{Scheme: "postgres", User: url.User(superuser), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}
	if !withPassword {
		if _, err := os.Stat(filepath.Join(dir, "pgpass")); err == nil {
			return passfileURL(u.String(), dir), nil
		}
	}
	pw, err := os.ReadFile(filepath.Join(dir, "pg-password"))
	if err != nil {
		return "", fmt.Errorf("embedpg: reading the password: %w", err)
	}
	u.User = url.UserPassword(superuser, strings.TrimSpace(string(pw)))
	return u.String(), nil
}
