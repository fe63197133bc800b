# taikai-nats: the NATS server (with JetStream) that docker-compose.yml's `nats`
# service runs, the queue between `taikai serve --nats` and the `taikai worker`
# containers.
#
# It stands in for the official image (nats:2.15-linux), which needs a
# registry: this builds the same nats-server release from its official source,
# github.com/nats-io/nats-server/v2 at the version taikai's go.mod names, through
# the Go module proxy (checked against the Go checksum database as any module
# is), on the base images deploy/base-images.sh builds without a registry. With
# a registry at hand, the service can take `image: nats:2.15` instead and the
# same command line (see deploy/nats/entrypoint.sh for what it adds).
#
# No secret is in this image: the token comes from TAIKAI_NATS_TOKEN in the
# container's environment (docker-compose.yml: env_file), at start.

# ---- build stage: a static nats-server (no cgo).
FROM golang:1.26-bookworm AS build
ARG GOPROXY
ARG NATS_SERVER_VERSION=v2.15.2
RUN CGO_ENABLED=0 GOBIN=/out go install -trimpath -ldflags "-s -w" \
      github.com/nats-io/nats-server/v2@${NATS_SERVER_VERSION} \
 && /out/nats-server --version

# ---- runtime stage: no package added to debian:bookworm-slim (the healthcheck
# in docker-compose.yml uses bash's /dev/tcp, not curl).
FROM debian:bookworm-slim AS runtime

# A fixed uid/gid of its own (not taikai's 10001): the store in /data is owned
# by it. /data is created before VOLUME so that a new named volume starts out
# owned by nats.
RUN groupadd --gid 10002 nats \
 && useradd --uid 10002 --gid 10002 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin nats \
 && install -d -o nats -g nats -m 0700 /data

COPY --from=build /out/nats-server /usr/local/bin/nats-server
COPY nats/nats-server.conf /etc/nats/nats-server.conf
COPY nats/entrypoint.sh /usr/local/bin/nats-entrypoint

USER nats
WORKDIR /data
VOLUME /data
# 4222: clients (taikai serve and the workers); 8222: monitoring (/healthz,
# /varz, /jsz), for the healthcheck and `docker compose exec`. Neither is
# published by docker-compose.yml.
EXPOSE 4222 8222

ENTRYPOINT ["/usr/local/bin/nats-entrypoint"]
