package loadtest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/pgtest"
)

// TestProcCPU: the window counts the CPU of a postgres backend that was
// born after it began and ended before it closed.
func TestProcCPU(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	url := pgtest.URL(t)
	ctx := context.Background()
	var p procCPU
	p.start()
	began := time.Now()

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT count(*) FROM generate_series(1, 4000000)`); err != nil {
		t.Fatal(err)
	}
	// Alive past a full scan of /proc, then gone before the window closes.
	time.Sleep(time.Until(began.Add(2500 * time.Millisecond)))
	var q procCPU
	q.first, q.last = map[int]float64{}, map[int]float64{}
	q.read(pid)
	backendCPU := q.last[pid] // seconds, as the backend's own /proc/<pid>/stat says
	conn.Close(ctx)
	time.Sleep(300 * time.Millisecond)
	got := p.stop() / 1e6

	if backendCPU < 0.05 {
		t.Fatalf("the backend used %.3fs of CPU for 4 million rows: not a postgres process by its stat line?", backendCPU)
	}
	if got < backendCPU {
		t.Errorf("window counted %.3fs of postgres CPU, less than the %.3fs of the backend that came and went", got, backendCPU)
	}
}
