#!/usr/bin/env bash
# Run once by compose.autofailover.yaml's formation-init service, as
# postgres: sets the monitor's health-check settings
# (docs/high-availability.md), waits for the formation's primary, and there
# creates ledgerd's roles with the passwords of their pgpass secrets, hands
# the ledger database (created by pg_autoctl) to ledger_owner and applies
# the runtime role's rights (docs/runtime-role.sql) as the owner. Idempotent.
set -euo pipefail
monitor="postgres://postgres@monitor:25430/pg_auto_failover?sslmode=disable&connect_timeout=1"
primary="postgres://postgres@node1:25431,node2:25432/ledger?sslmode=disable&target_session_attrs=read-write&connect_timeout=1"
until psql -qAt "$monitor" -c 'SELECT 1' >/dev/null 2>&1; do sleep 1; done
psql -v ON_ERROR_STOP=1 -q "$monitor" <<'SQL'
ALTER SYSTEM SET pgautofailover.health_check_period = 1000;
ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000;
ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1;
ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500;
ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 2000;
ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 5000;
SELECT pg_reload_conf();
SQL
until psql -qAt "$primary" -c 'SELECT 1' >/dev/null 2>&1; do sleep 1; done
owner_pw="$(cut -d: -f5- /run/secrets/ledger_owner_pgpass)"
runtime_pw="$(cut -d: -f5- /run/secrets/ledger_runtime_pgpass)"
psql -v ON_ERROR_STOP=1 -q "$primary" -v owner_pw="$owner_pw" -v runtime_pw="$runtime_pw" <<'SQL'
SELECT format('CREATE ROLE ledger_owner LOGIN PASSWORD %L', :'owner_pw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_owner') \gexec
SELECT format('CREATE ROLE ledger_runtime LOGIN PASSWORD %L', :'runtime_pw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ledger_runtime') \gexec
ALTER DATABASE ledger OWNER TO ledger_owner;
ALTER SCHEMA public OWNER TO ledger_owner;
SQL
psql -v ON_ERROR_STOP=1 -q "$primary" -c 'SET ROLE ledger_owner' -f /etc/ledger/runtime-role.sql
