# taikai: the tournament server and the runtimes the engines it launches need.
#
#   docker compose up -d            (see docker-compose.yml and README.md)
#   docker build -t taikai:latest . && docker run -p 8080:8080 -v taikai-data:/data taikai:latest
#
# The base images are the official golang:1.26-bookworm and debian:bookworm-slim.
# Without access to a registry, deploy/base-images.sh builds both locally (from
# the Debian mirror and this machine's Go toolchain); the build itself then needs
# only the Go module proxy (go mod download) and the Debian mirror (apt-get),
# through Docker's default bridge network. (The golang image that script builds
# also trusts the CA certificates the host added to its own, such as an
# intercepting HTTPS proxy's.)
# deploy/compose_test.go (go test -tags docker ./deploy/) builds this file with
# docker-compose.yml, plays games in the container and checks that the volume
# keeps them across `down`/`up`.

# ---- build stage: the cgo binary (github.com/mattn/go-sqlite3 needs gcc, which
# this image has).
FROM golang:1.26-bookworm AS build
WORKDIR /src

# Module downloads first, in their own layer: it is rebuilt only when
# go.mod/go.sum change. GOPROXY: the image's default (proxy.golang.org, then
# direct) unless given, e.g. --build-arg GOPROXY=https://goproxy.example.
ARG GOPROXY
COPY go.mod go.sum ./
RUN go mod download
# Compiling SQLite's C amalgamation is the slowest part of the build; do it here,
# with the same flags as the real build, so that the Go build cache in this
# layer keeps it across source changes (no BuildKit cache mount needed).
RUN CGO_ENABLED=1 go build -trimpath github.com/mattn/go-sqlite3

COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" -o /out/taikai ./cmd/taikai
# The small program that runs first in every engine sandbox, beside taikai:
# without it the 41 MB taikai binary does that job, tens of ms slower.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/taikai-sandbox-helper ./cmd/taikai-sandbox-helper

# ---- runtime stage: same Debian release as the builder, so the same glibc the
# binary was linked against.
FROM debian:bookworm-slim AS runtime

# Runtimes for the engines taikai launches (classroom clients in Java, Python,
# Ruby and C/C++), plus:
#   tini     PID 1: reaps engine grandchildren orphaned when an engine's process
#            group is killed (they would stay zombies under a plain PID 1) and
#            forwards SIGTERM/SIGINT to taikai.
#   curl     the HEALTHCHECK below (exec form, no shell): taikai has no
#            health-probe subcommand, and curl -f fails on any non-2xx status.
#   sqlite3  the CLI, for consistent online backups of the WAL database
#            (README: "Deploy with docker compose").
#   bubblewrap  the engine sandbox (docs/SANDBOX.md): every engine runs in
#            namespaces of its own, made by the server as the user taikai
#            (user namespaces; docker-compose.yml has the settings).
# Java: the JDK (openjdk-17-jdk-headless), not just the JRE. The classroom
# client runs as `java OthelloClient.java`, the single-file source launcher,
# which needs the jdk.compiler module. In Debian that module is already inside
# openjdk-17-jre-headless's lib/modules image, so the JRE alone would run it;
# but uploaded engines made of several .java files need `javac` (and `jar`),
# which only the JDK package ships, and CI tests the clients with the same JDK
# package. It costs about 77 MB more than the JRE.
# /usr/share/man/man1: update-alternatives in some OpenJDK postinst scripts
# fails on -slim images without it.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      openjdk-17-jdk-headless \
      python3 \
      ruby \
      gcc \
      g++ \
      make \
      libc6-dev \
      tini \
      curl \
      sqlite3 \
      bubblewrap \
 && rm -rf /var/lib/apt/lists/*

# A fixed uid/gid so that volume ownership stays the same across rebuilds. /data
# is created and owned here, before VOLUME, so that a new named volume starts
# out owned by taikai (Docker copies the image's /data into it). The server
# runs as taikai (USER below, and docker-compose.yml), so /data can be 0700:
# each engine's own directory is mounted into its sandbox, no engine passes
# through /data.
RUN groupadd --gid 10001 taikai \
 && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/taikai \
      --shell /usr/sbin/nologin taikai \
 && install -d -o taikai -g taikai -m 0700 /data

# Listen on all interfaces inside the container; only this port is published.
# The engines' game ports (per game, and fixed ones such as 46000) are on
# 127.0.0.1 inside the container and are never exposed.
ENV TAIKAI_ADDR=0.0.0.0:8080 \
    TAIKAI_DB=/data/taikai.db \
    TAIKAI_DATA=/data

USER taikai
WORKDIR /data
VOLUME /data
EXPOSE 8080

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "--max-time", "4", "http://127.0.0.1:8080/healthz"]

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/taikai"]
CMD ["serve"]

# The binary last: a source change rebuilds only this layer of the runtime
# stage, the settings above stay cached. Owned by root (COPY ignores USER).
COPY --from=build /out/taikai /out/taikai-sandbox-helper /usr/local/bin/
