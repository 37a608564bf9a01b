package loadtest

import "syscall"

// childAttr starts ledgerd in its own process group (a terminal's Ctrl-C
// reaches loadtest, which stops ledgerd in order) and has the kernel send
// it SIGTERM if loadtest dies first.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
