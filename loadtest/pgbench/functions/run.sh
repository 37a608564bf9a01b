#!/usr/bin/env bash
# Postgres CPU per callback of the ledger's functions, driven by pgbench,
# beside the naive reference scripts, in one run on one server
# (docs/benchmarks.md, "Postgres CPU per callback").
#
#   loadtest/pgbench/functions/run.sh NAME=LEDGERCTL [NAME=LEDGERCTL ...]
#
# Each NAME is a build: a scratch database perfsql_NAME is created, migrated
# by that build's ledgerctl, seeded with 1,000 funded accounts (seed.sql) and
# PREFILL held holds with some history (prefill.sql), and each function is
# called by pgbench (authorize.sql, capture.sql, release.sql, credit.sql:
# -M prepared, CLIENTS clients, DURATION s each); the naive reference
# scripts run on perfsql_naive. Each repetition recreates the databases and
# runs every script for every build, interleaved. CPU is utime+stime from
# /proc, of the pgbench backends and of the server's own processes
# (checkpointer, walwriter, ...), from WARMUP s after the start to 2 s
# before the end, divided by the transactions pgbench logged as completed
# in that window. The captures and releases of one repetition take the
# prefilled holds from either end: PREFILL must exceed both together (the
# check line after each repetition counts orphans, which should be 0, and
# every answer, which should be approved). Every database is a scratch one: it is dropped and made
# again (KEEP=1 keeps them at the end). Needs psql, pgbench and a server
# on PGHOST:PGPORT that user PGUSER may create databases on.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
CLIENTS=${CLIENTS:-16} DURATION=${DURATION:-20} WARMUP=${WARMUP:-4} REPS=${REPS:-3}
PREFILL=${PREFILL:-100000} SCRIPTS=${SCRIPTS:-"authorize capture release credit"}
NAIVE=${NAIVE:-"authorize capture"} NAIVEDIR=${NAIVEDIR:-$here/..}
ncpu=$(nproc); JOBS=$(( CLIENTS < ncpu ? CLIENTS : ncpu ))
OUT=${OUT:-$(mktemp -d /tmp/fnbench.XXXXXX)}
mkdir -p "$OUT/logs"
echo "results in $OUT" >&2

declare -A bin
names=()
for a in "$@"; do names+=("${a%%=*}"); bin[${a%%=*}]=${a#*=}; done

ticks() { # "pid ticks" (utime+stime, clock ticks) of each of the given pids still alive
    local p l f
    for p in "$@"; do
        read -r l 2>/dev/null </proc/$p/stat || continue
        l=${l##*) }; read -r -a f <<<"$l"
        echo "$p $(( f[11] + f[12] ))"
    done
}
delta() { # ticks used between two ticks outputs, by the pids in both
    awk 'NR == FNR {a[$1] = $2; next} ($1 in a) {s += $2 - a[$1]} END {print s + 0}' <(echo "$1") <(echo "$2")
}
servers() { # the server's own processes (checkpointer, walwriter, ...): not backends
    psql -AtX -c "SELECT pid FROM pg_stat_activity WHERE backend_type <> 'client backend'" postgres
}
hz=$(getconf CLK_TCK)
SERVERS=$(servers | tr '\n' ' ')
echo "server processes: $SERVERS" >&2

setup_version() { # name
    local db=perfsql_$1
    dropdb --if-exists -f "$db" >/dev/null; createdb "$db"
    "${bin[$1]}" migrate --database-url "postgres://$PGUSER@$PGHOST:$PGPORT/$db" >/dev/null
    psql -qX -v ON_ERROR_STOP=1 -f "$here/seed.sql" "$db" >/dev/null
    psql -qX -v ON_ERROR_STOP=1 -v nholds="$PREFILL" -f "$here/prefill.sql" "$db" >/dev/null
    psql -qX -c "ALTER DATABASE $db SET track_functions = 'all'" "$db"
}
setup_naive() {
    dropdb --if-exists -f perfsql_naive >/dev/null; createdb perfsql_naive
    psql -qX -v naccounts=1000 -v nholds="$PREFILL" -v hold_acct_max=1000 -f "$NAIVEDIR/setup.sql" perfsql_naive >/dev/null
}

run_one() { # db script label
    local db=$1 script=$2 label=$3
    psql -qX -c "VACUUM ANALYZE" -c "SELECT pg_stat_reset()" "$db" >/dev/null
    pgbench -n -M prepared -c "$CLIENTS" -j "$JOBS" -T "$DURATION" -D amin=1 -D amax=1000 \
        -l --log-prefix="$OUT/logs/$label" -f "$script" "$db" >"$OUT/$label.out" 2>&1 &
    local pb=$!
    sleep "$WARMUP"
    local bp ap t0 t1 b0 b1 a0 a1
    bp=$(psql -AtX -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db' AND application_name = 'pgbench'" postgres)
    ap=$SERVERS
    t0=$(date +%s.%N); b0=$(ticks $bp); a0=$(ticks $ap)
    sleep $((DURATION - WARMUP - 2))
    t1=$(date +%s.%N); b1=$(ticks $bp); a1=$(ticks $ap)
    wait $pb || { echo "pgbench failed: $label" >&2; cat "$OUT/$label.out" >&2; return 1; }
    local n tps
    n=$(cat "$OUT/logs/$label".* | awk -v t0="$t0" -v t1="$t1" '{t = $5 + $6 / 1e6; if (t >= t0 && t <= t1) n++} END {print n + 0}')
    rm -f "$OUT/logs/$label".*
    tps=$(awk '/^tps/ {print $3; exit}' "$OUT/$label.out")
    sleep 1
    if [[ $db != perfsql_naive ]]; then
        psql -AtX -F' ' -c "SELECT funcname, calls, round(total_time::numeric, 1), round(self_time::numeric, 1) FROM pg_stat_user_functions ORDER BY 1" "$db" >"$OUT/$label.functions"
    fi
    awk -v lab="$label" -v n="$n" -v tps="$tps" -v b="$(delta "$b0" "$b1")" -v a="$(delta "$a0" "$a1")" -v hz="$hz" -v s="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" \
        'BEGIN {printf "%-22s tps %8.1f  window %5.2fs tx %7d  backends %6.1f us/tx  +server processes %6.1f us/tx\n", lab, tps, s, n, b / hz * 1e6 / n, (a + b) / hz * 1e6 / n}' | tee -a "$OUT/results.txt"
}

for rep in $(seq 1 "$REPS"); do
    echo "== rep $rep" | tee -a "$OUT/results.txt"
    for v in "${names[@]}"; do setup_version "$v"; done
    setup_naive
    for s in $SCRIPTS; do
        for v in "${names[@]}"; do run_one "perfsql_$v" "$here/$s.sql" "$s.$v.$rep"; done
        if [[ " $NAIVE " == *" $s "* ]]; then run_one perfsql_naive "$NAIVEDIR/$s.sql" "$s.naive.$rep"; fi
    done
    for v in "${names[@]}"; do
        psql -AtX -v v="$v" -f - "perfsql_$v" <<'SQL' | tee -a "$OUT/results.txt"
SELECT 'check ' || :'v' || ': orphans ' || (SELECT count(*) FROM orphans) || '; answers ' || string_agg(x, ', ')
FROM (SELECT e || ' ' || outcome || ' ' || count(*) AS x
      FROM (SELECT 'authorize' AS e, outcome FROM callback_authorize UNION ALL SELECT 'capture', outcome FROM callback_capture
            UNION ALL SELECT 'release', outcome FROM callback_release UNION ALL SELECT 'credit', outcome FROM callback_credit) a
      GROUP BY e, outcome ORDER BY e, outcome) o
SQL
    done
done
if [[ ${KEEP:-} == "" ]]; then
    for v in "${names[@]}"; do dropdb --if-exists -f "perfsql_$v"; done
    dropdb --if-exists -f perfsql_naive
fi
echo "== medians over $REPS runs (min-max): CPU us per transaction of the backends, and with the server processes; tps" | tee -a "$OUT/results.txt"
awk '$2 == "tps" {split($1, part, "."); key = part[1] "." part[2]; us[key] = us[key] " " $9; srv[key] = srv[key] " " $13; tps[key] = tps[key] " " $3}
function med(list,   a, n, i, j, t) {n = split(list, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) {t = a[i]; a[i] = a[j]; a[j] = t}
    return sprintf("%7.1f (%s-%s)", (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n])}
END {for (k in us) printf "%-16s backends %s  +server %s us/tx  tps %s\n", k, med(us[k]), med(srv[k]), med(tps[k])}' "$OUT/results.txt" | sort | tee -a "$OUT/summary.txt"
