//go:build unix

package embedpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stop shuts the server down: a fast shutdown (SIGINT), escalating to an
// immediate shutdown (SIGQUIT) and then SIGKILL when it does not finish in
// time or ctx ends. On return no postgres process of the data directory is
// left. Stop is idempotent; later calls return the first call's result.
func (s *Instance) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.stopErr = s.terminate(ctx, s.proc, s.waitExited)
		s.unlock()
	})
	return s.stopErr
}

// clearLeftovers makes sure a postmaster.pid left by a crash cannot block the
// start: a stale one is removed, an orphaned server of this data directory is
// shut down.
func (s *Instance) clearLeftovers(ctx context.Context) error {
	pidFile := filepath.Join(s.pgDir, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("embedpg: reading %s: %w", pidFile, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	state := pidDead // unreadable: a postmaster that died while writing it
	if err == nil {
		pid = max(pid, -pid) // a standalone backend writes its PID negated
		state = inspectPID(pid, s.pgDir)
	}
	switch state {
	case pidDead, pidForeign:
		s.log.Warn("embedpg: removing stale postmaster.pid", "pid", pid, "process_alive", state == pidForeign)
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("embedpg: removing stale %s: %w", pidFile, err)
		}
	case pidOurs:
		s.log.Warn("embedpg: stopping orphaned postgres of this data directory", "pid", pid)
		p, err := os.FindProcess(pid)
		if err != nil {
			return fmt.Errorf("embedpg: orphaned postgres %d: %w", pid, err)
		}
		defer p.Release()
		if err := s.terminate(ctx, p, pollExited(pid)); err != nil {
			return fmt.Errorf("embedpg: stopping orphaned postgres %d: %w", pid, err)
		}
	case pidUnknown:
		// PostgreSQL's own lock-file check decides.
	}
	return nil
}

// terminate stops the postmaster p and then makes sure no postgres process of
// the data directory is left. gone waits up to d (or until ctx ends) for p to
// exit. Escalation steps after the first run even when ctx has ended: they are
// short, and a server must not outlive its Stop.
func (s *Instance) terminate(ctx context.Context, p *os.Process, gone func(context.Context, time.Duration) bool) error {
	steps := []struct {
		sig  syscall.Signal
		wait time.Duration
	}{
		{syscall.SIGINT, fastShutdownTimeout},
		{syscall.SIGQUIT, immediateShutdownTimeout},
		{syscall.SIGKILL, killTimeout},
	}
	exited := false
	for i, st := range steps {
		if i > 0 {
			s.log.Warn("embedpg: postgres did not shut down in time; escalating", "pid", p.Pid, "signal", st.sig.String())
			ctx = context.Background()
		}
		if err := p.Signal(st.sig); errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
			exited = true
			break
		}
		if gone(ctx, st.wait) {
			exited = true
			break
		}
	}
	// Backends exit with their postmaster, unless it was killed. Only while we
	// hold the lock is any postgres left in this directory ours to kill.
	deadline := time.Now().Add(killTimeout)
	for s.lock != nil {
		left := s.postgresProcs()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("embedpg: postgres processes %v of %s survived SIGKILL", left, s.pgDir)
		}
		for _, pid := range left {
			s.log.Warn("embedpg: killing leftover postgres process", "pid", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !exited {
		return fmt.Errorf("embedpg: postgres %d did not exit after SIGKILL", p.Pid)
	}
	return nil
}

// postgresProcs lists the live postgres processes running in s.pgDir.
func (s *Instance) postgresProcs() []int {
	var out []int
	for _, pid := range procsInDir(s.pgDir) {
		if inspectPID(pid, s.pgDir) == pidOurs {
			out = append(out, pid)
		}
	}
	return out
}

// waitExited waits for our own child to be reaped.
func (s *Instance) waitExited(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// pollExited waits for a process that is not our child (its parent reaps it).
func pollExited(pid int) func(context.Context, time.Duration) bool {
	return func(ctx context.Context, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for alive(pid) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	}
}
