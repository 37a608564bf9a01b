// Package walkthrough holds no code: it is the home of the test that runs
// the README's "The first hour" as a reader would, command block by command
// block, so that the walkthrough stays true on a fresh clone.
//
// The test reads the section's ```sh blocks in order. The block that is
// just `bin/ledgerd` is started in the background (the reader's first
// terminal) and waited for until /readyz answers; every other block runs in
// bash (-e, -u, -o pipefail) at the root of the source tree (the reader's
// second terminal), and must succeed. The commands are not edited: the test
// points them at its own ledgerd through the environment they read,
// LEDGER_LISTEN and LEDGER_ADMIN_LISTEN (free loopback ports),
// LEDGER_DATA_DIR (a scratch directory), LEDGER_ADMIN_URL and
// LEDGER_CALLBACKS_URL. It then checks what a reader would see: the account
// listed with its balance, the sandbox's "ok", a clean reconciliation, the
// callback counters in /metrics, a log of one line per event without a
// warning, and a clean stop on Ctrl-C (SIGINT).
package walkthrough
