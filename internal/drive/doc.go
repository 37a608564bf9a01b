// Package drive plays the payments service against a running ledgerd, the
// way the service would: it seeds a funded sender and a recipient through
// the admin API, runs payout lifecycles (authorize, then capture or release)
// and paid requests (credit-account) as sealed callbacks, delivers some of
// them again under their keys, and then reads both accounts back to check
// the balances the lifecycles imply. It is the work of `servicesim drive`;
// the command only maps flags and environment variables onto a Config and
// errors onto exit codes.
//
// Like the service, a run retries 408, 429, 5xx and transport errors with
// the same idempotency key (5 attempts, backoff from 50ms, Retry-After
// honoured up to 2s) and stops at any other non-200. Every ID a run creates
// starts with a prefix unique to the run, so runs against one ledgerd never
// collide, whatever their seed.
//
// Errors name the flags of `servicesim drive` (--secret-file, --provider-id,
// --admin) where a person can fix the cause with one. An error before any
// lifecycle ran (the configuration's secret file, seeding through the admin
// API) is a SetupError.
package drive
