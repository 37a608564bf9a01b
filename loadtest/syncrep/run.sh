#!/usr/bin/env bash
# Group commit under synchronous replication, measured on one machine: a
# primary and a synchronous streaming standby of the script's own (as
# server.TestFailover sets them up), ledgerd on the primary, and for each
# LEDGER_GROUP_COMMIT value given:
#   1. loadtest bench at each client count, with the pgbench ceiling on the
#      same primary (its commits wait for the standby too): the ratio;
#   2. loadtest storm in an open loop at half the peak rate of step 1 (two
#      callbacks per cycle): the p99 there.
# Usage: loadtest/syncrep/run.sh [group commit values, default "0 4"]
# Settings (environment): CLIENTS (16,64), DURATION (20s), STORM (30s), RATE
# (the storm's requests/s for every value; default half of each one's peak),
# FSYNC (off, as in the failover test; on for a durable disk's figures),
# WORK (a new temporary directory), LEDGERD and LOADTEST (binaries; default:
# built from this checkout into WORK).
set -euo pipefail
cd "$(dirname "$0")/../.."
groups="${*:-0 4}"
clients="${CLIENTS:-16,64}"
duration="${DURATION:-20s}"
storm="${STORM:-30s}"
fsync="${FSYNC:-off}"
work="${WORK:-$(mktemp -d)}"
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
export PATH="$pgbin:$PATH"
ledgerd="${LEDGERD:-$work/ledgerd}"
loadtest="${LOADTEST:-$work/loadtest}"
[ -x "$ledgerd" ] || go build -o "$ledgerd" ./cmd/ledgerd
[ -x "$loadtest" ] || go build -o "$loadtest" ./cmd/loadtest

# The server programs refuse to run as root: as root, they run as postgres.
pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" != 0 ] || chown postgres "$work"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pport=$(free_port); sport=$(free_port)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pg pg_ctl -D "$work/standby" -m immediate stop >/dev/null 2>&1 || true
  pg pg_ctl -D "$work/primary" -m immediate stop >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] || rm -rf "$work/primary" "$work/standby"
}
trap cleanup EXIT

pg initdb -D "$work/primary" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
pg tee -a "$work/primary/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
port = $pport
wal_level = replica
max_wal_senders = 4
synchronous_standby_names = 'standby1'
synchronous_commit = on
fsync = $fsync
max_connections = 200
EOF
pg pg_ctl -D "$work/primary" -l "$work/primary.log" -w start >/dev/null
pg pg_basebackup -d "host=127.0.0.1 port=$pport user=postgres application_name=standby1" -D "$work/standby" -R -X stream -c fast --no-sync
printf "\nport = %s\nhot_standby = on\nsynchronous_standby_names = ''\n" "$sport" | pg tee -a "$work/standby/postgresql.conf" >/dev/null
pg pg_ctl -D "$work/standby" -l "$work/standby.log" -w start >/dev/null
for _ in $(seq 1 60); do
  state=$(psql -h 127.0.0.1 -p "$pport" -U postgres -Atc "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'" postgres)
  [ "$state" = sync ] && break; sleep 0.5
done
echo "primary :$pport, synchronous standby :$sport (sync_state $state), fsync $fsync; work $work"

pg="postgres://postgres@127.0.0.1:$pport"
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
cbport=$(free_port); adport=$(free_port)
for g in $groups; do
  psql -q "$pg/postgres" -c "DROP DATABASE IF EXISTS ledger" -c "CREATE DATABASE ledger" >/dev/null
  DATABASE_URL="$pg/ledger?sslmode=disable" LEDGER_PROVIDER_ID=local LEDGER_ADMIN_TOKEN="$token" \
    LEDGER_LISTEN="127.0.0.1:$cbport" LEDGER_ADMIN_LISTEN="127.0.0.1:$adport" LEDGER_RECONCILE_EVERY=0 LEDGER_KEK="$(head -c32 /dev/urandom | base64)" \
    LEDGER_GROUP_COMMIT="$g" "$ledgerd" >"$work/ledgerd-$g.log" 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$adport/healthz" >/dev/null && break; sleep 0.5; done
  echo "== LEDGER_GROUP_COMMIT=$g: bench"
  "$loadtest" bench --admin "http://127.0.0.1:$adport" --admin-token "$token" --callbacks "http://127.0.0.1:$cbport/ledger" \
    --ceiling-db "$pg/ceiling" --clients "$clients" --duration "$duration" --report "$work/bench-$g.json"
  # Half the peak: the best cycles/s of the client counts, two callbacks a
  # cycle (RATE: one rate for every value, to compare at the same load).
  rate=${RATE:-}
  [ -n "$rate" ] || rate=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(max(x["adapter"]["cyclesPerSec"] for x in r["runs"])))' "$work/bench-$g.json")
  echo "== LEDGER_GROUP_COMMIT=$g: storm at $rate requests/s (half of $rate cycles/s, two requests each) for $storm"
  "$loadtest" storm --admin "http://127.0.0.1:$adport" --admin-token "$token" --callbacks "http://127.0.0.1:$cbport/ledger" \
    --rate "$rate" --duration "$storm" --progress 0 --report "$work/storm-$g.json" | grep -v '^loadtest storm:' 
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
