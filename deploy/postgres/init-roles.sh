#!/usr/bin/env bash
# Run by the postgres image once, when its data volume is created
# (/docker-entrypoint-initdb.d), as the superuser over the local socket:
# creates the owner and runtime roles with the passwords of their pgpass
# secrets, the ledger database owned by the owner, and the runtime role's
# rights (docs/runtime-role.sql, applied as the owner). deploy/compose.yaml
# mounts it; the migrate service then migrates as ledger_owner.
set -euo pipefail
owner_pw="$(cut -d: -f5- /run/secrets/ledger_owner_pgpass)"
runtime_pw="$(cut -d: -f5- /run/secrets/ledger_runtime_pgpass)"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner_pw="$owner_pw" -v runtime_pw="$runtime_pw" <<'SQL'
CREATE ROLE ledger_owner LOGIN PASSWORD :'owner_pw';
CREATE ROLE ledger_runtime LOGIN PASSWORD :'runtime_pw';
CREATE DATABASE ledger OWNER ledger_owner;
SQL
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname ledger \
  -c 'SET ROLE ledger_owner' -f /etc/ledger/runtime-role.sql
