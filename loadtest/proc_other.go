//go:build !linux

package loadtest

import "syscall"

// childAttr starts ledgerd in its own process group (a terminal's Ctrl-C
// reaches loadtest, which stops ledgerd in order).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
