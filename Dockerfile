# syntax=docker/dockerfile:1
# The adapter's binaries in one small image; ledgerd is the entrypoint, the
# others (ledgerctl, servicesim, loadtest) are beside it in /usr/local/bin.
# Not built on the project's CI machines, which run no container engine: see
# the README's Deploy section. deploy/compose.yaml builds and runs it.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static binaries, so the runtime image needs no libc. No VCS stamping: the
# build context has no .git (.dockerignore).
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/ ./cmd/... \
    && mkdir -p /out/data

# distroless: CA certificates and tzdata, no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ledgerd /out/ledgerctl /out/servicesim /out/loadtest /usr/local/bin/
# Generated material (a KEK when LEDGER_KEK is not given) goes here, never into
# the image's root. With DATABASE_URL unset ledgerd would try to run its own
# Postgres, which this image does not have: set DATABASE_URL.
COPY --from=build --chown=65532:65532 /out/data /var/lib/ledgerd
ENV LEDGER_DATA_DIR=/var/lib/ledgerd
# The nonroot user of the distroless image, by number so that orchestrators
# can check runAsNonRoot.
USER 65532:65532
# 8080: callbacks (LEDGER_LISTEN); 8081: admin API, /metrics, /healthz,
# /readyz (LEDGER_ADMIN_LISTEN, loopback by default: set it to 0.0.0.0:8081
# together with an admin token to reach it from outside the container).
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/ledgerd"]
