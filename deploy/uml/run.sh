#!/usr/bin/env bash
# deploy/uml/run.sh: the engine sandbox's tests on cgroup v2, inside user-mode
# Linux (Debian's user-mode-linux package: a 6.1 kernel run as a process,
# whose root file system is this machine's own, through hostfs).
#
# It builds the test binaries here (engines/sandbox, cmd/taikai), boots UML
# with deploy/uml/init.sh as its init, which mounts cgroup2 at /sys/fs/cgroup
# and runs them twice:
#   root  as root, with the whole cgroup2 tree;
#   user  as an ordinary user (uid 4242) from a 0700 home, inside a cgroup
#         subtree delegated to it as systemd's Delegate=yes does (the
#         directory and its cgroup.procs, cgroup.subtree_control and
#         cgroup.threads chowned to it; the user's shell already inside).
# cmd/taikai runs only the tests of cmd/taikai/sandbox_test.go (the
# hostile-engine suite), with CI=true inside, so that no sandbox test skips
# for want of a sandbox; each server it runs as an ordinary user starts alone
# in a cgroup delegated to that user (TAIKAI_TEST_DELEGATE) and must limit
# its engines by cgroup v2, as root's servers with the whole tree must.
#
# Exit status: 0 when UML booted, cgroup2 offered memory and pids, and every
# test binary passed in both phases; otherwise 1, saying which. Logs: the
# directory it prints (TAIKAI_UML_OUT to choose it). TAIKAI_UML_PHASES
# ("root user" by default) runs fewer phases, TAIKAI_UML_SUITES ("sandbox
# e2e" by default) fewer suites, TAIKAI_UML_E2E (names separated by |)
# fewer tests of cmd/taikai/sandbox_test.go; TAIKAI_UML_SKIP is a -test.skip pattern for
# every suite; TAIKAI_UML_TIMEOUT (seconds, default 4800) bounds the whole
# boot; TAIKAI_UML_TIME_SCALE (default 10) multiplies the hostile-engine
# suite's time bounds and waits (TAIKAI_TEST_TIME_SCALE inside).
#
# Everything inside UML runs on one CPU, a few times slower than here: its
# times mean nothing (docs/DECISIONS.md, "cgroup v2 in CI through user-mode Linux").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

fail() { echo "uml: $*" >&2; exit 1; }

uml="$(command -v linux.uml || true)"
[ -n "$uml" ] || fail "linux.uml not found (apt-get install user-mode-linux)"
command -v insmod >/dev/null || fail "insmod not found (apt-get install kmod): UML loads overlayfs with it"
command -v go >/dev/null || fail "go not found"
command -v gcc >/dev/null || fail "gcc not found: it builds deploy/uml/xstate.c"

out="${TAIKAI_UML_OUT:-$(mktemp -d /var/tmp/taikai-uml.XXXXXX)}"
mkdir -p "$out"
# The ordinary user inside reaches its home ($out/home) through $out.
chmod 0755 "$out"
rm -f "$out"/status "$out"/*.log
mkdir -p "$out/home"
echo "uml: logs in $out"

# The test binaries, built here (one CPU under UML would take minutes). No
# -race: under UML it would multiply the suite's time again.
export CGO_ENABLED=1
go test -c -o "$out/sandbox.test" ./engines/sandbox
go test -c -o "$out/taikai.test" ./cmd/taikai
# The taikai binary cmd/taikai's tests run (TAIKAI_TEST_BINARY inside), built
# with the README's command.
go build -o "$out/taikai" ./cmd/taikai

# UML 6.1 writes a process's FPU state back with less than the host's whole
# XSAVE area, which a host with AVX-512 or AMX refuses ("ptrace set fp regs
# failed, errno = 14", then init dies): xstate.so, preloaded into linux.uml,
# completes each write with the rest of that thread's own state
# (deploy/uml/xstate.c).
gcc -O2 -shared -fPIC -o "$out/xstate.so" deploy/uml/xstate.c -ldl

# The hostile-engine suite: every test of cmd/taikai/sandbox_test.go.
# TAIKAI_UML_E2E names fewer (their names, separated by |).
e2e="${TAIKAI_UML_E2E:-$(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' cmd/taikai/sandbox_test.go | paste -sd'|')}"
[ -n "$e2e" ] || fail "no tests found in cmd/taikai/sandbox_test.go"

# What init.sh needs, as shell assignments: the kernel passes init only a
# bare environment.
{
  printf 'ROOT=%q\n' "$root"
  printf 'OUT=%q\n' "$out"
  printf 'E2E=%q\n' "^($e2e)\$"
  printf 'PHASES=%q\n' "${TAIKAI_UML_PHASES:-root user}"
  printf 'SUITES=%q\n' "${TAIKAI_UML_SUITES:-sandbox e2e}"
  printf 'SKIP=%q\n' "${TAIKAI_UML_SKIP:-}"
  printf 'TIME_SCALE=%q\n' "${TAIKAI_UML_TIME_SCALE:-10}"
  printf 'GOBIN_DIR=%q\n' "$(dirname "$(command -v go)")"
  for v in GOROOT GOCACHE GOMODCACHE GOFLAGS GOTOOLCHAIN; do
    printf '%s=%q\n' "$v" "$(go env "$v")"
  done
} >"$out/env"

# hostfs keeps a host descriptor open for each file it has in cache: the UML
# process gets as many as it may have.
ulimit -Hn 1048576 2>/dev/null || true
ulimit -n "$(ulimit -Hn)"
limit="${TAIKAI_UML_TIMEOUT:-4800}"
start=$(date +%s)
# mem=4G: the memory tests allocate 2.5 GiB against smaller limits. The
# kernel's own messages and init's progress go to console.log.
set +e
timeout --kill-after=10 "$limit" env LD_PRELOAD="$out/xstate.so" "$uml" mem=4G rootfstype=hostfs rootflags=/ rw \
  init="$root/deploy/uml/init.sh" TAIKAI_UML_ENV="$out/env" \
  </dev/null >"$out/console.log" 2>&1
rc=$?
set -e
echo "uml: linux.uml exited $rc after $(( $(date +%s) - start )) s"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || { tail -20 "$out/console.log"; fail "UML did not finish within ${limit} s"; }

# The outcome: init.sh writes "<phase>-<suite> <exit status>" per test binary.
[ -s "$out/status" ] || { tail -40 "$out/console.log"; fail "UML wrote no status: it did not boot or init.sh failed early (console.log above)"; }
cat "$out/status"
bad=0
if grep -q '^setup ' "$out/status"; then
  bad=1
fi
for phase in ${TAIKAI_UML_PHASES:-root user}; do
  for suite in ${TAIKAI_UML_SUITES:-sandbox e2e}; do
    st="$(sed -n "s/^$phase-$suite //p" "$out/status")"
    log="$out/$phase-$suite.log"
    if [ -f "$log" ]; then
      echo "uml: $phase-$suite: $(grep -c -- '^--- PASS' "$log") passed, $(grep -c -- '^--- FAIL' "$log") failed, $(grep -c -- '^--- SKIP' "$log") skipped (top-level tests)"
      grep -- '^--- \(FAIL\|SKIP\)' "$log" | sed 's/^/uml:   /' || true
    fi
    if [ "$st" != 0 ]; then
      echo "uml: $phase-$suite: exit status '${st:-none}' (log: $log)"
      [ -f "$log" ] && tail -30 "$log"
      bad=1
    fi
  done
done
[ $bad -eq 0 ] || fail "the sandbox's tests failed on cgroup v2 (logs in $out)"
echo "uml: all passed"
