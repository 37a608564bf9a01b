# syntax=docker/dockerfile:1.12@sha256:db1ff77fb637a5955317c7a3a62540196396d565f3dd5742e76dddbb6d75c4c5
# The adapter's images, built from one Dockerfile:
#
#   ledgerd (the last stage, the default target): ledgerd, its entrypoint, and
#     ledgerctl, which the migration job runs (`ledgerctl migrate`) from the
#     same image so that the schema it applies is the one ledgerd expects;
#   tools (--target tools): ledgerctl, loadtest and servicesim, for operators
#     and load tests, never deployed beside the ledger.
#
# Not built on the project's CI machines, which run no container engine:
# deploy/deploy_test.go checks it statically (stages, pins, stamping, cache
# mounts, what each image holds, the health check). deploy/compose.yaml
# builds and runs it. Stamp a build with its release and revision:
#
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" .
#
# Images are pinned by digest (the tag is kept for the reader):
#   docker/dockerfile:1.12 (the syntax line): the digest cilium/cilium-cli's
#     Dockerfile pins (commit 01643514); cache mounts need 1.2 or later.
#   golang:1.26.8-bookworm: the index digest docker-library/repo-info records
#     for that tag (repos/golang/remote/1.26.8-bookworm.md, commit 38e78839);
#     Go 1.26.8 is the toolchain the project is tested with.
#   gcr.io/distroless/static-debian12:nonroot: a digest of that tag pinned in
#     three unrelated public repositories' Dockerfiles (the public code index).

FROM golang:1.26.8-bookworm@sha256:f4191582e1522dfc5980a6bdc0309a756f9697f3e7d0f199c7e26fc82ab324fd AS build
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches persist between builds (BuildKit cache
# mounts): a change to one package recompiles that package and what
# imports it, not the world.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# VERSION empty: the release the source says (buildinfo.Version, the
# CHANGELOG's). The context has no .git (.dockerignore), so the revision is
# stamped from REVISION rather than read by go build.
ARG VERSION=""
ARG REVISION=""
# Static binaries, so the runtime image needs no libc.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    ldflags="-s -w -X github.com/provider-ledger/adapter/internal/buildinfo.Revision=${REVISION}" \
    && if [ -n "${VERSION}" ]; then ldflags="${ldflags} -X github.com/provider-ledger/adapter/internal/buildinfo.Version=${VERSION}"; fi \
    && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="${ldflags}" -o /out/ ./cmd/... \
    && mkdir -p /out/data

# The tools: `docker build --target tools .`
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab AS tools
COPY --from=build /out/ledgerctl /out/loadtest /out/servicesim /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ledgerctl"]

# The production image. distroless: CA certificates and tzdata, no shell, no
# package manager; the health check is ledgerd's own subcommand.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab AS ledgerd
ARG VERSION=""
ARG REVISION=""
LABEL org.opencontainers.image.title="ledgerd" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/ledgerd /out/ledgerctl /usr/local/bin/
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
# Healthy while /readyz answers ready (database, keyring, signing secret): a
# replica with a wrong KEK shows unhealthy within a minute and a half of its
# start, not never. The check reads LEDGER_ADMIN_LISTEN as ledgerd does.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/usr/local/bin/ledgerd", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/ledgerd"]
