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

# The superuser's password, for the postgres image's first start only; then
# a pgpass line for each of the two roles: ledger_owner (the migrate service)
# and ledger_runtime (ledgerd's DATABASE_URL, passfile=). deploy/postgres/
# init-roles.sh creates the roles with these passwords. Base64 without '/',
# '+', '=' needs no escaping in either form.
# Postgres takes them only when it creates its volume: keep them with it.
put postgres_password "$(rand 24 | tr -d '/+=')"
put ledger_owner_pgpass "*:*:*:ledger_owner:$(rand 24 | tr -d '/+=')"
put ledger_runtime_pgpass "*:*:*:ledger_runtime:$(rand 24 | tr -d '/+=')"
put ledger_kek "$(rand 32)"               # LEDGER_KEK_FILE: Base64 of 32 bytes
put ledger_admin_token "$(rand 32 | tr '+/' '-_' | tr -d '=')"
put ledger_signing_secret "$(rand 32)"    # LEDGER_SIGNING_SECRETS_FILE; give it to the service too
put grafana_admin_password "$(rand 18 | tr -d '/+=')"
