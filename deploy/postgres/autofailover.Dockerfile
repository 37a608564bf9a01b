# The compose formation's image (compose.autofailover.yaml): the Postgres
# image compose.yaml pins, with Debian's pg_auto_failover 2.0 (the monitor's
# extension and pg_autoctl), the packages server's TestAutoFailover runs.
FROM postgres:15.19-bookworm@sha256:539ceaaae49b3a7c8a04467cf00cc6788d8e3f1675df41860d86eebc4c40524f
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      postgresql-15-auto-failover pg-auto-failover-cli \
 && rm -rf /var/lib/apt/lists/*
USER postgres
