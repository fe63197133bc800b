#!/usr/bin/env bash
# Builds, locally and without any image registry, the two base images the
# Dockerfile names:
#
#   debian:bookworm-slim   `debootstrap --variant=minbase bookworm` from the
#                          Debian mirror, piped into `docker import`
#   golang:1.26-bookworm   that image + gcc, libc6-dev, ca-certificates, git
#                          (apt, same mirror) + this machine's Go toolchain
#                          (the one `go` on PATH, or /usr/local/go), which must
#                          be the Go 1.26 release go.mod asks for
#
# An image that already exists is kept (the script is idempotent); --force
# rebuilds both. Run as root (debootstrap needs it) on Debian/Ubuntu with
# Docker; debootstrap is installed with apt-get if missing.
#
#   deploy/base-images.sh [--force]
#
# Environment: DEBIAN_MIRROR (default: the first deb.debian.org-style URI of
# this machine's apt sources, else http://deb.debian.org/debian).
set -euo pipefail

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "base-images: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
debian_image="debian:bookworm-slim"
golang_image="golang:1.26-bookworm"
want_go="go1.26" # the Dockerfile's image tag names the minor release only

log() { echo "base-images: $*" >&2; }
die() { log "error: $*"; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }
# Bounds every step that talks to the network or builds: a hung mirror must not
# hang CI. timeout(1) is in coreutils.
bounded() { local secs="$1"; shift; timeout --kill-after=30 "$secs" "$@"; }
root_bounded() { local secs="$1"; shift; as_root timeout --kill-after=30 "$secs" "$@"; }

# Temporary directories, removed on any exit (the rootfs belongs to root).
tmp_dirs=()
cleanup() {
  local d
  for d in "${tmp_dirs[@]+"${tmp_dirs[@]}"}"; do
    as_root rm -rf --one-file-system "$d" "$d.log" || true
  done
}
trap cleanup EXIT

command -v docker >/dev/null 2>&1 || die "docker is not installed"
bounded 60 docker info >/dev/null 2>&1 || die "the Docker engine does not answer (docker info)"

# The Debian mirror: the one apt already uses here, so that a machine with a
# local mirror or proxy in its sources keeps using it.
mirror="${DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(grep -rhoE '^(URIs:|deb)[[:space:]]+https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
              /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
            | awk '{print $2}' | grep -v -- '-security' | head -n1 || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

# ---------------------------------------------------------------- debian:bookworm-slim

build_debian() {
  if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
    log "installing debootstrap"
    root_bounded 600 apt-get update -qq
    root_bounded 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  fi
  local root; root="$(mktemp -d /tmp/taikai-bookworm.XXXXXX)"
  tmp_dirs+=("$root")
  log "debootstrap --variant=minbase bookworm from $mirror (a few minutes)"
  local t0=$SECONDS
  if ! root_bounded 1800 env PATH="/usr/sbin:/sbin:$PATH" debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1; then
    tail -n 30 "$root.log" >&2
    die "debootstrap failed"
  fi
  # What the official slim image leaves out: apt lists and caches, docs and
  # man pages (the runtime stage runs apt-get update itself), logs.
  as_root rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/doc/* "$root"/usr/share/man/* \
    "$root"/usr/share/info/* "$root"/var/log/*.log "$root"/var/log/apt/* \
    "$root"/tmp/* "$root"/root/.bash_history
  # The official images' sources: one deb822 file for bookworm, its updates and
  # its security archive, from the mirror used here.
  local sec="${mirror%/debian}/debian-security"
  [ "$sec" != "${mirror}-security" ] || sec="http://deb.debian.org/debian-security"
  as_root rm -f "$root/etc/apt/sources.list"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" "$sec" | as_root tee "$root/etc/apt/sources.list.d/debian.sources" >/dev/null
  # Like the official image: no recommends pulled in by accident, and apt keeps
  # no downloaded packages.
  printf 'APT::Install-Recommends "false";\n' | as_root tee "$root/etc/apt/apt.conf.d/docker-no-recommends" >/dev/null
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };\n' \
    | as_root tee "$root/etc/apt/apt.conf.d/docker-clean" >/dev/null
  log "docker import -> $debian_image"
  as_root tar -C "$root" --numeric-owner -c . \
    | bounded 900 docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["bash"]' \
        --message "debootstrap --variant=minbase bookworm $mirror (taikai deploy/base-images.sh)" \
        - "$debian_image" >/dev/null
  log "$debian_image built in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "$debian_image" | awk '{printf "%d MB", $1/1e6}'))"
}

# ---------------------------------------------------------------- golang:1.26-bookworm

# host_cas DIR writes to DIR the certificates this machine trusts beyond
# Debian's ca-certificates: those in its bundle that no file of
# /usr/share/ca-certificates holds (added under /usr/local/share/ca-certificates
# or appended to the bundle). A machine whose HTTPS goes through an
# intercepting proxy trusts that proxy's CA so; without it `go mod download`
# in the build stage fails ("x509: certificate signed by unknown authority").
# On a machine without such certificates DIR stays empty.
host_cas() {
  local dir="$1" bundle=/etc/ssl/certs/ca-certificates.crt
  mkdir -p "$dir"
  [ -r "$bundle" ] || return 0
  local known=(/usr/share/ca-certificates/*/*.crt)
  [ -e "${known[0]}" ] || known=()
  local n
  n="$(awk -v bundle="$bundle" -v dir="$dir" '
    FILENAME != bundle { if (/-----BEGIN/) c = ""; c = c $0 "\n"; if (/-----END/) known[c] = 1; next }
    /-----BEGIN/ { c = "" }
    { c = c $0 "\n" }
    /-----END/ && !(c in known) { n++; f = dir "/host-" n ".crt"; printf "%s", c > f; close(f) }
    END { print n + 0 }' "${known[@]+"${known[@]}"}" "$bundle")"
  if [ "$n" -gt 0 ]; then
    log "adding $n CA certificate(s) this machine trusts beyond Debian's ca-certificates"
  fi
}

build_golang() {
  # The toolchain to copy: GOROOT of the go on PATH, else /usr/local/go.
  local goroot=""
  if command -v go >/dev/null 2>&1; then goroot="$(go env GOROOT)"; fi
  [ -n "$goroot" ] && [ -x "$goroot/bin/go" ] || goroot=/usr/local/go
  [ -x "$goroot/bin/go" ] || die "no Go toolchain found (go on PATH or /usr/local/go)"
  local ver; ver="$(GOTOOLCHAIN=local "$goroot/bin/go" env GOVERSION)"
  case "$ver" in
    "$want_go"|"$want_go".*) ;;
    *) die "$goroot is $ver; $golang_image needs $want_go.x" ;;
  esac
  # go.mod's go line (and toolchain line, if any) must be satisfied by it, or
  # the build inside the image would try to download another toolchain.
  local need; need="$(awk '$1=="toolchain"{print $2; exit} $1=="go"{g="go"$2} END{if(g!="")print g}' "$repo/go.mod" | head -n1)"
  if [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$ver" | sort -V | head -n1)" != "$need" ]; then
    die "go.mod needs $need, $goroot is $ver"
  fi
  local arch; arch="$("$goroot/bin/go" env GOHOSTARCH)"

  # The build context: deploy/golang.Dockerfile, a copy of GOROOT in go/
  # (without pkg/obj, build leftovers) and the host's extra CAs in host-ca/.
  local ctx; ctx="$(mktemp -d /tmp/taikai-golang.XXXXXX)"
  tmp_dirs+=("$ctx")
  log "copying $goroot ($ver) into the build context"
  cp "$here/golang.Dockerfile" "$ctx/Dockerfile"
  mkdir "$ctx/go"
  tar -C "$goroot" --exclude=./pkg/obj --exclude=./.git -cf - . | tar -C "$ctx/go" -xf -
  host_cas "$ctx/host-ca"
  log "docker build -> $golang_image (apt-get: gcc libc6-dev ca-certificates git)"
  local t0=$SECONDS
  bounded 1800 docker build --network=host --pull=false \
    --build-arg "GO_VERSION=${ver#go}" --build-arg "GOARCH=$arch" \
    -t "$golang_image" "$ctx" >&2
  log "$golang_image built in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "$golang_image" | awk '{printf "%d MB", $1/1e6}'))"
}

t_all=$SECONDS
# With --force, the images replaced are removed at the end if nothing uses them
# (the golang image first: it is a child of the debian one).
old_ids=()
for img in "$golang_image" "$debian_image"; do
  id="$(docker image inspect -f '{{.Id}}' "$img" 2>/dev/null || true)"
  [ -z "$id" ] || old_ids+=("$id")
done
if [ "$force" -eq 0 ] && have_image "$debian_image"; then
  log "$debian_image exists, kept (--force rebuilds it)"
else
  build_debian
  force=1 # golang:1.26-bookworm is built on it: rebuild that too
fi
if [ "$force" -eq 0 ] && have_image "$golang_image"; then
  log "$golang_image exists, kept (--force rebuilds it)"
else
  build_golang
fi
for id in "${old_ids[@]+"${old_ids[@]}"}"; do
  for img in "$golang_image" "$debian_image"; do
    [ "$(docker image inspect -f '{{.Id}}' "$img")" != "$id" ] || continue 2
  done
  docker rmi "$id" >/dev/null 2>&1 && log "removed the replaced image ${id#sha256:}" || true
done
log "done in $((SECONDS - t_all)) s"
