package store_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/provider-ledger/adapter/store"
	"github.com/provider-ledger/adapter/store/storetest"
)

// connectFails connects to url, which must fail, and returns the driver's
// error.
func connectFails(t *testing.T, url string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		conn.Close(ctx)
		t.Fatalf("%s: connected", url)
	}
	return err
}

// wantExplained checks what ExplainFor(err, setting) says, word for word.
func wantExplained(t *testing.T, err error, setting, want string) {
	t.Helper()
	got := store.ExplainFor(err, setting).Error()
	if got != want {
		t.Fatalf("explained as\n  %q\nwant\n  %q\nfrom the driver's\n  %q", got, want, err)
	}
}

// TestExplain: what a person reads when Postgres cannot be reached is one
// line with the host, the port, the cause and the next step, without the
// driver's per-address lines, tabs and "server refused TLS connection".
func TestExplain(t *testing.T) {
	t.Parallel()

	t.Run("ConnectionRefused", func(t *testing.T) {
		t.Parallel()
		addr := closedPort(t)
		err := connectFails(t, "postgres://postgres@"+addr+"/x?sslmode=prefer")
		wantExplained(t, err, "DATABASE_URL", "cannot connect to Postgres at "+addr+": connection refused; is Postgres running there? (DATABASE_URL)")
		if got := store.Explain(err).Error(); !strings.HasSuffix(got, "(--database-url or DATABASE_URL)") {
			t.Fatalf("Explain names no setting: %s", got)
		}
	})
	t.Run("LocalhostRefusedOnEveryAddress", func(t *testing.T) {
		t.Parallel()
		_, port, _ := net.SplitHostPort(closedPort(t))
		wantExplained(t, connectFails(t, "postgres://postgres@localhost:"+port+"/x"), "TEST_DATABASE_URL",
			"cannot connect to Postgres at localhost:"+port+": connection refused; is Postgres running there? (TEST_DATABASE_URL)")
	})
	t.Run("WrongPasswordAfterTLSRefused", func(t *testing.T) {
		t.Parallel()
		addr := fakeServer(t, func(be *pgproto3.Backend) {
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "postgres"`})
		})
		wantExplained(t, connectFails(t, "postgres://postgres:wrong@"+addr+"/postgres?sslmode=prefer"), "TEST_DATABASE_URL",
			"cannot connect to Postgres at "+addr+`: password authentication failed for user "postgres"; check the user and password in TEST_DATABASE_URL`)
	})
	t.Run("NoSuchDatabase", func(t *testing.T) {
		t.Parallel()
		url := strings.Replace(storetest.EmptyURL(t), "/testdb_", "/nosuch_", 1)
		err := connectFails(t, url)
		if got := store.ExplainFor(err, "DATABASE_URL").Error(); !strings.Contains(got, `: database "nosuch_`) ||
			!strings.HasSuffix(got, `" does not exist; check the database name in DATABASE_URL, or create it`) || strings.Contains(got, "\n") {
			t.Fatalf("%q", got)
		}
	})
	t.Run("NoSuchHost", func(t *testing.T) {
		t.Parallel()
		wantExplained(t, connectFails(t, "postgres://postgres@no-such-host.invalid:5432/x"), "DATABASE_URL",
			"cannot connect to Postgres at no-such-host.invalid:5432: no such host; check the host in DATABASE_URL")
	})
	t.Run("NoAnswer", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts (the backlog), never answers
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err = pgx.Connect(ctx, "postgres://postgres@"+ln.Addr().String()+"/x?sslmode=disable")
		wantExplained(t, err, "DATABASE_URL", "cannot connect to Postgres at "+ln.Addr().String()+
			": timed out; is the host reachable and Postgres listening on that port? (DATABASE_URL)")
	})
	t.Run("OtherCausesKeepTheLastAttemptWithoutTLSNoise", func(t *testing.T) {
		t.Parallel()
		addr := fakeServer(t, func(*pgproto3.Backend) {}) // hangs up after the startup message
		got := store.ExplainFor(connectFails(t, "postgres://postgres@"+addr+"/x?sslmode=prefer"), "DATABASE_URL").Error()
		if !strings.HasPrefix(got, "cannot connect to Postgres at "+addr+": ") || !strings.HasSuffix(got, " (DATABASE_URL)") ||
			strings.Contains(got, "TLS") || strings.Contains(got, "\n") || strings.Contains(got, "("+strings.Split(addr, ":")[0]+")") {
			t.Fatalf("%q", got)
		}
	})
	t.Run("OtherErrorsUnchanged", func(t *testing.T) {
		t.Parallel()
		in := errors.New("something else")
		if store.Explain(in) != in || store.Explain(nil) != nil {
			t.Fatal("changed")
		}
	})
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// fakeServer is a Postgres that refuses TLS, reads the startup message,
// lets answer say what it says, and hangs up.
func fakeServer(t *testing.T, answer func(*pgproto3.Backend)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// An SSLRequest (length 8, code 80877103) is refused with 'N'.
				var head [8]byte
				if _, err := io.ReadFull(c, head[:]); err != nil {
					return
				}
				if binary.BigEndian.Uint32(head[4:]) == 80877103 {
					if _, err := c.Write([]byte{'N'}); err != nil {
						return
					}
					if _, err := io.ReadFull(c, head[:]); err != nil {
						return
					}
				}
				rest := make([]byte, binary.BigEndian.Uint32(head[:4])-8)
				if _, err := io.ReadFull(c, rest); err != nil {
					return
				}
				be := pgproto3.NewBackend(c, c)
				answer(be)
				_ = be.Flush()
			}()
		}
	}()
	return ln.Addr().String()
}
