//go:build linux || darwin

package server

import "syscall"

// raiseFileLimit raises the soft limit of open files (RLIMIT_NOFILE) to the
// hard limit, so that connections do not run out of descriptors before the
// connection cap says so, and returns the limits in effect. (Go raises it
// too when the os package starts; doing it here makes the figure known and
// logged, and holds whatever happened since.)
func raiseFileLimit() (soft, hard uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = raised.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return lim.Cur, lim.Max, err
		}
		lim = raised
	}
	return lim.Cur, lim.Max, nil
}
