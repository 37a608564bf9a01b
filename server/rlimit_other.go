//go:build !(linux || darwin)

package server

// raiseFileLimit does nothing here: the limit is unknown (0), and the
// connection cap takes its default.
func raiseFileLimit() (soft, hard uint64, err error) { return 0, 0, nil }
