#!/usr/bin/env bash
# Run once by the compose files' runtime-role service, after migrate has
# succeeded: applies docs/runtime-role.sql again, as ledger_owner (password
# from its pgpass secret), at the conninfo of its one argument. The first
# application, when the database was created, came before any table: its
# revokes of UPDATE, DELETE and TRUNCATE on the append-only tables reach
# them only once the migration has created them. Idempotent.
set -euo pipefail
PGPASSWORD="$(cut -d: -f5- /run/secrets/ledger_owner_pgpass)" \
  psql -v ON_ERROR_STOP=1 -q "$1" -f /etc/ledger/runtime-role.sql
