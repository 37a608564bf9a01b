#!/usr/bin/env bash
# Writes the secrets deploy/compose.yaml mounts into deploy/secrets/, each
# once: an existing file is kept, so running it again changes nothing (a new
# KEK would make the stored signing secrets unreadable). The directory is
# 0700; the files are 0644 because compose mounts them as they are and the
# containers run as other users (ledgerd 65532, Prometheus 65534, Grafana 472).
set -euo pipefail
dir="${1:-$(dirname "$0")/secrets}"
install -d -m 0700 "$dir"

# rand N: the Base64 of N random bytes, on one line, no newline.
rand() { head -c "$1" /dev/urandom | base64 | tr -d '\n'; }

# put NAME VALUE: write the file unless it exists.
put() {
  if [ -e "$dir/$1" ]; then
    echo "secrets: keeping $dir/$1"
    return
  fi
  (umask 022; printf '%s' "$2" > "$dir/$1.tmp")
  chmod 0644 "$dir/$1.tmp"
  mv "$dir/$1.tmp" "$dir/$1"
  echo "secrets: wrote $dir/$1"
}

# The database password twice: alone for the postgres image, and as a pgpass
# line for ledgerd's DATABASE_URL (passfile=). Base64 without '/', '+', '='
# needs no escaping in either.
# Postgres takes the password only when it creates its volume: keep the two in
# step with each other and with that first run.
if [ -e "$dir/postgres_password" ]; then
  pw="$(cat "$dir/postgres_password")"
elif [ -e "$dir/ledger_pgpass" ]; then
  pw="$(cut -d: -f5- "$dir/ledger_pgpass")"
else
  pw="$(rand 24 | tr -d '/+=')"
fi
put postgres_password "$pw"
put ledger_pgpass "*:*:*:ledger:$pw"
put ledger_kek "$(rand 32)"               # LEDGER_KEK_FILE: Base64 of 32 bytes
put ledger_admin_token "$(rand 32 | tr '+/' '-_' | tr -d '=')"
put ledger_signing_secret "$(rand 32)"    # LEDGER_SIGNING_SECRETS_FILE; give it to the service too
put grafana_admin_password "$(rand 18 | tr -d '/+=')"
