#!/bin/sh
# Entry point of the taikai-nats image (deploy/nats.Dockerfile): runs
# nats-server with /etc/nats/nats-server.conf (JetStream, store in /data) and,
# when TAIKAI_NATS_TOKEN is set, token authentication with it.
#
# The token goes into a config file written here (mode 0600, in the
# container's /tmp), not on the command line as `--auth TOKEN` would put it:
# every user of the host could read it there with ps. It must be made of
# letters, digits and . _ ~ + / = - (hex or base64, as `openssl rand -hex 32`
# prints), so that it needs no quoting in the file.
set -eu

conf=/etc/nats/nats-server.conf
if [ -n "${TAIKAI_NATS_TOKEN:-}" ]; then
  case "$TAIKAI_NATS_TOKEN" in
    *[!A-Za-z0-9._~+/=-]*)
      echo "taikai-nats: TAIKAI_NATS_TOKEN has a character other than letters, digits and . _ ~ + / = -; use e.g. openssl rand -hex 32" >&2
      exit 2 ;;
  esac
  umask 077
  auth="$(mktemp /tmp/nats-auth.XXXXXX)"
  { cat "$conf"; printf '\nauthorization {\n  token: "%s"\n}\n' "$TAIKAI_NATS_TOKEN"; } >"$auth"
  conf="$auth"
else
  echo "taikai-nats: TAIKAI_NATS_TOKEN is not set: any container on this network can use the queue (set it in taikai.env)" >&2
fi
# The server needs no other variable of the environment (env_file may hold
# TAIKAI_ADMIN_TOKEN): start it without them.
exec env -i PATH=/usr/local/bin:/usr/bin:/bin nats-server --config "$conf" "$@"
