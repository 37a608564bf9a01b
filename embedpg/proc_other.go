//go:build unix && !linux

package embedpg

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the child in its own process group and runs it as u when
// set. There is no parent-death signal outside Linux.
func sysProcAttr(u *osUser, _ syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if u != nil {
		a.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: u.groups}
	}
	return a
}

// inspectPID cannot tell whose process pid is without /proc; PostgreSQL's own
// lock-file check then decides (it discards a postmaster.pid of a dead PID).
func inspectPID(pid int, _ string) pidState {
	if pid <= 0 || !alive(pid) {
		return pidDead
	}
	return pidUnknown
}

func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func procsInDir(string) []int { return nil }
