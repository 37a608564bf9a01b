// Package embedpg runs a private PostgreSQL cluster for ledgerd when
// DATABASE_URL is unset, so that `go run ./cmd/ledgerd` works on a fresh
// machine with nothing configured.
//
// It does not bundle PostgreSQL: it uses the server binaries already installed
// on the machine (see [FindBinaries]). When none are found, [FindBinaries] and
// [Start] return an error whose message says how to install PostgreSQL or
// point DATABASE_URL at an existing database.
//
// # Layout of the data directory
//
// Everything lives under [Config.DataDir] (ledgerd's LEDGER_DATA_DIR):
//
//	DataDir/             0700 (0701 when running as root, see below)
//	DataDir/pg/          the cluster (PGDATA), created by initdb
//	DataDir/pg-password  0600, the superuser's generated password
//	DataDir/pgpass       0600, a libpq password file for that password,
//	                     rewritten at every start (see [Instance.PassfileURL])
//	DataDir/postgres.log 0600, initdb and server output, appended
//	DataDir/embedpg.lock 0600, held (flock) while an Instance runs
//
// The first [Start] runs initdb into DataDir/pg.init and renames it to
// DataDir/pg only when initdb succeeded, so an existing DataDir/pg is always a
// complete cluster and a crash during initdb is simply redone. Later starts
// reuse the cluster: data persists across restarts.
//
// # Security
//
// The cluster listens on 127.0.0.1 only, on a free port picked at each start,
// with no Unix socket. Every connection authenticates with SCRAM-SHA-256 as
// the superuser "postgres" using the generated password, so other local users
// cannot connect; there is no "trust" line in pg_hba.conf. [Instance.URL]
// carries the password.
//
// # Running as root
//
// PostgreSQL refuses to run as root. When the caller's effective UID is 0,
// initdb and postgres run as the "postgres" OS user (an error if there is none)
// and DataDir/pg is owned by it. That user must be able to search every
// ancestor directory of DataDir/pg; where an ancestor grants it no search
// permission, Start adds only the other-execute bit (o+x: search, not list)
// and logs a warning naming the directory. An ancestor whose owner or group
// class denies search to that user cannot be fixed that way and is an error.
// Access control lists are not consulted.
//
// # Process lifetime
//
// The server runs in its own process group, so a terminal's Ctrl-C reaches
// only ledgerd, which then calls [Instance.Stop] (a fast shutdown, escalating to
// an immediate shutdown and then SIGKILL after timeouts). On Linux the server
// is also given SIGINT as its parent-death signal, so it shuts down when the
// process that started it dies, even by SIGKILL.
//
// An Instance holds an exclusive lock on DataDir/embedpg.lock for its lifetime: a
// second Start on the same DataDir while one is running fails, without
// disturbing it, with an error saying the data directory is in use and naming
// the lock file. The kernel drops the lock when its holder dies,
// so if a postgres of this data directory is still running at Start (an
// orphan of a killed owner), Start shuts it down before starting its own, and
// a postmaster.pid naming a dead process, or a live process that is not a
// postgres of this data directory, is removed. A leftover postmaster.pid never
// blocks the next start. The orphan and stale-PID checks read /proc and are
// Linux-only; elsewhere they are left to PostgreSQL's own lock-file handling.
package embedpg
