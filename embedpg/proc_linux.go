//go:build linux

package embedpg

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr puts the child in its own process group (a terminal's Ctrl-C to
// ledgerd does not reach it too), runs it as u when set, and has the kernel
// send it deathSig when the thread that started it dies. Go applies Pdeathsig
// after switching credentials, so the switch does not clear it.
func sysProcAttr(u *osUser, deathSig syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
	if u != nil {
		a.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: u.groups}
	}
	return a
}

// inspectPID classifies the process named by a postmaster.pid of pgDir.
// pgDir must be a cleaned absolute path without symlinks. The postmaster
// changes its working directory to its data directory, so a postgres
// executable whose cwd is pgDir is a server of this cluster.
func inspectPID(pid int, pgDir string) pidState {
	if pid <= 0 || !alive(pid) {
		return pidDead
	}
	cwd, err := os.Readlink(procPath(pid, "cwd"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return pidDead
		}
		// Not inspectable: another user's process, which a server we started
		// (as ourselves or as the postgres user when root) would not be.
		return pidForeign
	}
	if cwd != pgDir {
		return pidForeign
	}
	names := []string{}
	if exe, err := os.Readlink(procPath(pid, "exe")); err == nil {
		names = append(names, filepath.Base(exe)) // may end in " (deleted)" after an upgrade
	}
	if cmdline, err := os.ReadFile(procPath(pid, "cmdline")); err == nil {
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		names = append(names, filepath.Base(string(argv0)))
	}
	for _, n := range names {
		if strings.HasPrefix(n, "postgres") || strings.HasPrefix(n, "postmaster") {
			return pidOurs
		}
	}
	return pidForeign
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// Format: "pid (comm) S ...", comm may contain ')'.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		switch stat[i+2] {
		case 'Z', 'X':
			return false
		}
	}
	return true
}

// procsInDir lists live processes whose working directory is dir: a
// postmaster and its backends all run in their data directory.
func procsInDir(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(procPath(pid, "cwd")); err == nil && cwd == dir && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func procPath(pid int, name string) string {
	return "/proc/" + strconv.Itoa(pid) + "/" + name
}
