# golang:1.26-bookworm, built locally by deploy/base-images.sh (no registry):
# the debian:bookworm-slim it built with debootstrap, the packages the official
# image has for cgo and modules, and the host's Go toolchain. The build context
# is a temporary directory holding this file, that toolchain in go/ and host-ca/.
FROM debian:bookworm-slim

# gcc and libc6-dev: cgo (github.com/mattn/go-sqlite3); git: modules fetched
# direct; ca-certificates: HTTPS to the module proxy. The official image (on
# buildpack-deps:bookworm-scm) also has g++, make, pkg-config, curl.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      curl \
      git \
      gcc \
      g++ \
      libc6-dev \
      make \
      pkg-config \
 && rm -rf /var/lib/apt/lists/*

# The CA certificates this machine trusts beyond Debian's (host-ca/ is empty
# on most machines; see host_cas in base-images.sh), e.g. an intercepting
# proxy's, so that the build stage reaches the Go module proxy over HTTPS.
COPY host-ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates

ARG GO_VERSION
ARG GOARCH
COPY go /usr/local/go

# As the official image sets them.
ENV GOLANG_VERSION=${GO_VERSION} \
    GOTOOLCHAIN=local \
    GOPATH=/go \
    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN mkdir -p /go/src /go/bin && chmod -R 1777 /go \
 && go version | grep -q " go${GO_VERSION} linux/${GOARCH}\$"
WORKDIR /go
