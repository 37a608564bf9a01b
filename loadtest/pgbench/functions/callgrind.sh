#!/usr/bin/env bash
# User-space instructions per call of the ledger's callback functions, under
# callgrind, in a single-user backend (docs/benchmarks.md, "Postgres CPU per
# callback"): steadier than CPU time on a shared machine.
#
#   loadtest/pgbench/functions/callgrind.sh NAME=LEDGERCTL [NAME=LEDGERCTL ...]
#
# For each NAME (a build): a scratch cluster in $OUT/NAME (initdb, fsync=off),
# started on PORT, migrated by that build's ledgerctl, seeded (seed.sql) and
# prefilled (prefill.sql, PREFILL held holds) as run.sh prepares its
# databases, and stopped. Then, for each of SCRIPTS (the pgbench scripts of
# this directory), a single-user backend (postgres --single) under valgrind
# --tool=callgrind --dump-before=pg_sleep prepares the script's statement
# (PREPARE, as pgbench -M prepared does), runs WARM calls (EXECUTE, the
# script's \set variables drawn from a fixed seed, so that every build gets
# the same calls), SELECT pg_sleep(0), CALLS calls and SELECT pg_sleep(0)
# again: the second dump divided by CALLS is the user-space instructions of
# one call. Each call is a transaction of its own; the captures and
# releases take the prefilled holds from either end, so WARM + CALLS must
# stay under PREFILL / 2. It prints a line when a call was not approved.
# The profiles stay in $OUT (callgrind_annotate --inclusive=yes
# $OUT/NAME/SCRIPT.callgrind.2 reads one). Needs valgrind, and postgres,
# initdb and pg_ctl of the server's major version on PATH or in PGBIN; run
# as root, the clusters belong to PGOWNER (default postgres).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SCRIPTS=${SCRIPTS:-"authorize capture release credit"}
WARM=${WARM:-30} CALLS=${CALLS:-300} PREFILL=${PREFILL:-50000} PORT=${PORT:-5499}
PGBIN=${PGBIN:-$(dirname "$(command -v postgres)")}
OUT=${OUT:-$(mktemp -d /tmp/fncallgrind.XXXXXX)}
mkdir -p "$OUT"
echo "results in $OUT" >&2

as_owner() { # runs a command as the clusters' owner
    if [[ $(id -u) == 0 ]]; then runuser -u "${PGOWNER:-postgres}" -- "$@"; else "$@"; fi
}
[[ $(id -u) != 0 ]] || chown "${PGOWNER:-postgres}" "$OUT"

prepare() { # name ledgerctl: a migrated, seeded and prefilled cluster in $OUT/name, stopped
    local data=$OUT/$1/data url=postgres://postgres@127.0.0.1:$PORT/perfsql
    as_owner mkdir -p "$OUT/$1"
    as_owner "$PGBIN/initdb" -A trust -U postgres -D "$data" >/dev/null
    as_owner "$PGBIN/pg_ctl" -D "$data" -l "$OUT/$1/server.log" -w \
        -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$OUT/$1 -c fsync=off" start >/dev/null
    createdb -h 127.0.0.1 -p "$PORT" -U postgres perfsql
    "$2" migrate --database-url "$url" >/dev/null 2>&1
    psql -qX -v ON_ERROR_STOP=1 -f "$here/seed.sql" "$url" >/dev/null
    psql -qX -v ON_ERROR_STOP=1 -v nholds="$PREFILL" -f "$here/prefill.sql" "$url" >/dev/null
    as_owner "$PGBIN/pg_ctl" -D "$data" -w stop >/dev/null
}

calls() { # script n: the script prepared, and n executions, one a line (as pgbench -M prepared
    # sends them), its \set variables drawn from a fixed seed
    awk -v n="$2" '
        /^\\set / {split($0, f, /[ (,)]+/); name[++nv] = f[2]; lo[nv] = f[4]; hi[nv] = f[5]; next}
        /^--/ || /^\\/ {next}
        {body = body " " $0}
        END {for (v = 1; v <= nv; v++) for (w = v + 1; w <= nv; w++) if (length(name[w]) > length(name[v])) {
                 t = name[v]; name[v] = name[w]; name[w] = t; t = lo[v]; lo[v] = lo[w]; lo[w] = t; t = hi[v]; hi[v] = hi[w]; hi[w] = t}
             # (longest name first, so that :a does not replace the start of :amt)
             for (v = 1; v <= nv; v++) gsub(":" name[v], "$" v, body)
             sub(/;[ \t]*$/, "", body)
             print "PREPARE q AS" body
             srand(1); for (i = 0; i < n; i++) {s = ""
                 for (v = 1; v <= nv; v++) s = s (v > 1 ? ", " : "") "\x27" (lo[v] + int(rand() * (hi[v] - lo[v] + 1))) "\x27"
                 print "EXECUTE q" (nv ? "(" s ")" : "")}}' "$1"
}

profile() { # name script: instructions per call
    local data=$OUT/$1/data file=$OUT/$1/$2.callgrind
    { calls "$here/$2.sql" $((WARM + CALLS)) | sed "$((WARM + 2))i SELECT pg_sleep(0)"; echo "SELECT pg_sleep(0)"; } >"$OUT/$1/$2.calls.sql"
    as_owner valgrind --tool=callgrind --dump-before=pg_sleep --callgrind-out-file="$file" \
        "$PGBIN/postgres" --single -D "$data" -c fsync=off -c port="$PORT" perfsql \
        <"$OUT/$1/$2.calls.sql" >"$OUT/$1/$2.single.log" 2>"$OUT/$1/$2.valgrind.log"
    if grep -q 'ERROR' "$OUT/$1/$2.single.log"; then
        echo "errors in $OUT/$1/$2.single.log" >&2; return 1
    fi
    local total
    total=$(awk '/^(summary|totals):/ {print $2; exit}' "$file.2")
    awk -v n="$1" -v s="$2" -v t="$total" -v c="$CALLS" 'BEGIN {printf "%-8s %-10s %10.0f instructions per call\n", n, s, t / c}' |
        tee -a "$OUT/results.txt"
    grep -c "approved" "$OUT/$1/$2.single.log" | awk -v n="$1" -v s="$2" -v w=$((WARM + CALLS)) \
        '{if ($1 != w) printf "%s %s: %d approved answers of %d calls\n", n, s, $1, w}' | tee -a "$OUT/results.txt"
}

stop_all() { # stops the clusters still running (a step failed)
    local d
    for d in "$OUT"/*/data; do
        [[ -f $d/postmaster.pid ]] && as_owner "$PGBIN/pg_ctl" -D "$d" -w stop >/dev/null 2>&1
    done
    return 0
}
trap stop_all EXIT

names=()
declare -A bin
for a in "$@"; do names+=("${a%%=*}"); bin[${a%%=*}]=${a#*=}; done
for v in "${names[@]}"; do prepare "$v" "${bin[$v]}"; done
for s in $SCRIPTS; do
    for v in "${names[@]}"; do profile "$v" "$s"; done
done
