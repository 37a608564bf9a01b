#!/usr/bin/env bash
# A node of compose.autofailover.yaml's formation: creates it on first start
# (pg_autoctl create postgres: the first node becomes the primary, the next
# its standby, cloned from it), lets the formation's network reach the
# ledger database (the roles' passwords are ledgerd's pgpass secrets'; the
# formation runs --auth trust on its internal network), then runs the
# keeper in the foreground. Arguments: the node's name and port.
set -euo pipefail
name="$1" port="$2"
pgdata="/var/lib/postgresql/data/$name"
pg_autoctl create postgres --pgdata "$pgdata" --pgport "$port" --hostname "$name" --name "$name" \
  --dbname ledger --monitor "postgres://autoctl_node@monitor:25430/pg_auto_failover?sslmode=disable" \
  --auth trust --no-ssl
rule="host ledger all samenet trust"
grep -qxF "$rule" "$pgdata/pg_hba.conf" || echo "$rule" >>"$pgdata/pg_hba.conf"
exec pg_autoctl run --pgdata "$pgdata"
