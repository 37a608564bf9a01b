// Package schema holds the adapter's database schema, embedded in the
// binary, and applies it. schema/README.md is the policy: where each thing
// lives, how each changes, what is never edited once released.
//
//   - migrations/NNN_name.sql: the numbered migrations. Tables, types,
//     indexes, constraints, triggers and the signatures of the functions
//     are created and changed here, and only here.
//   - functions/<name>.sql: one file per server-side function, its current
//     definition (CREATE OR REPLACE FUNCTION <name>, the function's body
//     and attributes). A body changes by editing its file.
//   - schema.sql: the schema the two produce, as pg_dump prints it,
//     normalised; TestSnapshot keeps it so.
//
// up applies what is pending under tern's session-level advisory lock, so
// that replicas starting together apply each migration and each function
// file once (it waits for the lock at most UpOptions.LockTimeout, saying so
// in the log). First the numbered migrations, in order, each in its own
// transaction (jackc/tern; the version is in the table schema_version).
// Then, in one transaction, every function file whose SHA-256 is not the
// one recorded in the table schema_functions, in the order of their names:
// Flyway's repeatable migrations. A function file changes a body and
// nothing else: its function must be declared by a migration with the
// signature the file gives, or up refuses the file and applies none.
//
// ledgerd applies them at start unless LEDGER_MIGRATE=off, in which case
// it refuses to start while anything is pending, naming `ledgerctl
// migrate`. `ledgerctl migrate` applies them on demand; `ledgerctl migrate
// status` and `up --dry-run` show what is pending (readStatus, which takes
// no lock and needs no right to change the schema). A database migrated
// by a newer build (a later version, or a function body that replaced this
// build's) is refused with ErrNewer; one migrated by a development build
// from before 001_baseline.sql, with ErrPreBaseline.
//
// The functions run under READ COMMITTED and never commit: they compose
// into the caller's transaction.
package schema
