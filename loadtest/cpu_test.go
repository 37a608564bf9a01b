package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/provider-ledger/adapter/internal/wait"
	"github.com/provider-ledger/adapter/store/storetest"
)

// TestProcCPU: the window counts the CPU of a postgres backend that was
// born after it began and ended before it closed.
func TestProcCPU(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	url := storetest.URL(t)
	ctx := context.Background()
	var p procCPU
	p.start()

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
	// Alive until a full scan of /proc (every 2 s) has found it, then gone
	// before the window closes.
	wait.Until(t, "the sampler to find the backend", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		_, seen := p.last[pid]
		return seen
	})
	var q procCPU
	q.first, q.last = map[int]float64{}, map[int]float64{}
	q.read(pid)
	backendCPU := q.last[pid] // seconds, as the backend's own /proc/<pid>/stat says
	conn.Close(ctx)
	// The backend exits on the closed connection: its CPU is all counted
	// once its /proc entry is gone.
	wait.Until(t, fmt.Sprintf("backend %d to exit after its connection closed", pid), func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return errors.Is(err, fs.ErrNotExist)
	})
	got := p.stop() / 1e6

	if backendCPU < 0.05 {
		t.Fatalf("the backend used %.3fs of CPU for 4 million rows: not a postgres process by its stat line?", backendCPU)
	}
	// The backend may have used a clock tick or two (idle work, its exit)
	// after the window's last sight of it.
	if got < backendCPU-2/clockTicks {
		t.Errorf("window counted %.3fs of postgres CPU, less than the %.3fs of the backend that came and went", got, backendCPU)
	}
}
