#!/bin/sh
# deploy/uml/init.sh: PID 1 of the user-mode Linux that deploy/uml/run.sh
# boots (see there). The root file system is the host's own (hostfs): every
# file written outside the tmpfs mounts below is written on the host.
# It writes "<phase>-<suite> <exit status>" lines to $OUT/status, or
# "setup <message>" when the machine is not what the tests need, then powers
# off. It must never return: the kernel would panic (PID 1 exited).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
. "$TAIKAI_UML_ENV" || { echo "uml init: no $TAIKAI_UML_ENV" >/dev/console; poweroff -f; }
export PATH="$GOBIN_DIR:$PATH"

say() { echo "uml init: $*" >/dev/console; }
setup_failed() {
	say "$*"
	echo "setup $*" >>"$OUT/status"
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup || setup_failed "cannot mount cgroup2"
# /dev is the kernel's devtmpfs; /tmp and /run are the host's unless hidden.
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# What the tests need from under /tmp, /run or /mnt (a checkout or a cache
# there: CI may clone anywhere) is set aside before their tmpfs hides it, and
# bound back at its own path.
i=0
for p in "$ROOT" "$OUT" "$GOROOT" "$GOCACHE" "$GOMODCACHE"; do
	case "$p" in /tmp/* | /run/* | /mnt/*)
		i=$((i + 1))
		mkdir -p "/dev/.aside/$i"
		mount --bind "$p" "/dev/.aside/$i" || setup_failed "cannot set $p aside"
		echo "$i $p" >>/dev/.aside/list ;;
	esac
done
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=0755 tmpfs /mnt
if [ -f /dev/.aside/list ]; then
	while read -r i p; do
		mkdir -p "$p" && mount --bind "/dev/.aside/$i" "$p" || setup_failed "cannot bind $p back"
	done </dev/.aside/list
fi
ip link set lo up || setup_failed "cannot bring up lo"
# /etc and /home as overlays of the host's with a tmpfs on top: users made
# inside (useradd, the tests' own) and files an ordinary user creates there
# stay inside UML, with their owners (hostfs itself creates every file as the
# host user that runs UML).
insmod "/usr/lib/uml/modules/$(uname -r)/kernel/fs/overlayfs/overlay.ko" || setup_failed "cannot load overlayfs"
for d in /etc /home; do
	mkdir -p "/mnt/ov$d/up" "/mnt/ov$d/work"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=/mnt/ov$d/up,workdir=/mnt/ov$d/work" "$d" ||
		setup_failed "cannot mount an overlay on $d"
done
hostname taikai-uml

# cgroup v2 with the controllers the sandbox uses, enabled for the children
# of the root (the sandboxes of the root phase, the user's delegated group).
ctl="$(cat /sys/fs/cgroup/cgroup.controllers)"
say "cgroup2 controllers: $ctl"
for c in memory pids; do
	case " $ctl " in *" $c "*) ;; *) setup_failed "cgroup2 offers no $c controller (only: $ctl)" ;; esac
done
for c in $ctl; do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control || setup_failed "cannot enable $c in the root's cgroup.subtree_control"
done

export CI=true GOCACHE GOMODCACHE GOFLAGS GOTOOLCHAIN GOROOT CGO_ENABLED=1 GOPROXY=off
export HOME=/root TMPDIR=/tmp
# cmd/taikai's tests run this taikai binary, built on the host, rather than
# building their own with go build (minutes on UML's one CPU).
export TAIKAI_TEST_BINARY="$OUT/taikai"
# The hostile-engine suite's time bounds and waits, times this factor
# (cmd/taikai's timeScale): those of real hardware, for one slow CPU whose
# system calls and page faults are round trips to the host (touching 64 MiB
# takes 5-7 s here). Only the times are scaled: every game must still end
# by memory, every daemon die, every server serve.
export TAIKAI_TEST_TIME_SCALE="${TIME_SCALE:-10}"
# all_controllers DIR: enables in DIR's cgroup.subtree_control every
# controller DIR offers, as systemd does for a delegated unit's parent.
all_controllers() {
	for c in $(cat "$1/cgroup.controllers"); do
		echo "+$c" >"$1/cgroup.subtree_control" || setup_failed "cannot enable $c in $1/cgroup.subtree_control"
	done
}

# run PHASE SUITE DIR CMD...: runs a test binary from DIR, logs to
# $OUT/PHASE-SUITE.log, records its exit status.
run() {
	phase=$1 suite=$2 dir=$3
	shift 3
	# hostfs holds a host descriptor for every inode it has in cache: drop
	# them, or a long run ends in EMFILE (the host's limit, not UML's).
	sync
	echo 3 >/proc/sys/vm/drop_caches
	say "$phase-$suite: start ($(date -u +%T))"
	(cd "$dir" && "$@") >"$OUT/$phase-$suite.log" 2>&1
	rc=$?
	echo "$phase-$suite $rc" >>"$OUT/status"
	say "$phase-$suite: exit $rc ($(date -u +%T))"
}

for phase in $PHASES; do
	case $phase in
	root)
		for suite in $SUITES; do
			case $suite in
			sandbox) run root sandbox "$ROOT/engines/sandbox" "$OUT/sandbox.test" -test.v -test.count=1 -test.parallel=1 -test.timeout=15m -test.skip "$SKIP" ;;
			e2e)
				# The servers the suite runs as root keep the test's cgroup
				# (the root one: the whole tree); those it runs as its
				# ordinary user each start in a group of their own under
				# this one, delegated to the user (TAIKAI_TEST_DELEGATE).
				mkdir /sys/fs/cgroup/taikai-test-delegate || setup_failed "cannot create a cgroup to delegate from"
				all_controllers /sys/fs/cgroup/taikai-test-delegate
				# The ...OrdinaryUser twins run in the user phase, as a
				# real ordinary user, when it runs: not twice.
				skip="$SKIP"
				case " $PHASES " in *" user "*) skip="${SKIP:+$SKIP|}OrdinaryUser\$" ;; esac
				run root e2e "$ROOT/cmd/taikai" env TAIKAI_TEST_DELEGATE=/sys/fs/cgroup/taikai-test-delegate \
					"$OUT/taikai.test" -test.v -test.count=1 -test.parallel=1 -test.timeout=40m -test.run "$E2E" -test.skip "$skip" ;;
			*) setup_failed "unknown suite $suite" ;;
			esac
		done
		;;
	user)
		uid=4242
		# The user exists inside only (/etc is an overlay).
		echo "taikai-uml:x:$uid:$uid:taikai test user:$OUT/home:/bin/sh" >>/etc/passwd
		echo "taikai-uml:x:$uid:" >>/etc/group

		# The Go module cache at its own path (the build cache's keys
		# include a package's directory) and the build cache as an
		# overlay the user may add to, both set aside before a
		# non-searchable ancestor (root's 0700 /root) is hidden by a
		# tmpfs that leaves only them, and the sources, reachable.
		mkdir -p /mnt/aside/mod /mnt/aside/cache /mnt/aside/src
		mount --bind "$GOMODCACHE" /mnt/aside/mod
		mount --bind "$GOCACHE" /mnt/aside/cache
		mount --bind "$ROOT" /mnt/aside/src
		for p in "$GOMODCACHE" "$ROOT" "$GOROOT"; do
			d=/
			for part in $(echo "$p" | tr / ' '); do
				d="${d%/}/$part"
				mode="$(stat -c %A "$d")"
				case "$mode" in ?????????[xt]) ;; *)
					say "hiding $d ($mode) from the user behind a tmpfs"
					mount -t tmpfs -o mode=0755 tmpfs "$d"
					break ;;
				esac
			done
		done
		mkdir -p "$GOMODCACHE" "$ROOT"
		mount --bind /mnt/aside/mod "$GOMODCACHE"
		mount --bind /mnt/aside/src "$ROOT"
		[ -r "$GOROOT/bin/go" ] || setup_failed "GOROOT $GOROOT not readable by others"

		# The home: 0700, its own tmpfs.
		mount -t tmpfs -o mode=0700,uid=$uid,gid=$uid tmpfs "$OUT/home"
		home="$OUT/home"
		mkdir -p /mnt/gc-up /mnt/gc-work "$home/.cache/go-build" "$home/tmp" "$home/bin"
		mount -t overlay overlay -o "lowerdir=/mnt/aside/cache,upperdir=/mnt/gc-up,workdir=/mnt/gc-work" "$home/.cache/go-build" ||
			setup_failed "cannot mount the build cache's overlay"
		chown $uid:$uid "$home/.cache/go-build" "$home/.cache/go-build"/*/
		cp "$OUT/sandbox.test" "$OUT/taikai.test" "$OUT/taikai" "$home/bin/"
		# Not chown -R on the overlay: that copies every cached file up.
		chown $uid:$uid "$home/.cache"
		chown -R $uid:$uid "$home/tmp" "$home/bin"

		# The delegated subtree, as systemd gives one (Delegate=yes): the
		# controllers enabled for it by its parent, the directory and
		# its three delegation files the user's, the user's process in
		# it; enabling controllers below it is the user's business. One
		# per suite, as systemd gives each scope its own: once the server
		# has enabled controllers in it, no process may join it again.
		delegate() {
			cg=/sys/fs/cgroup/taikai-user-$1
			mkdir "$cg" || setup_failed "cannot create $cg"
			chown $uid:$uid "$cg" "$cg/cgroup.procs" "$cg/cgroup.subtree_control" "$cg/cgroup.threads"
			say "delegated $cg: $(cat "$cg/cgroup.controllers")"
		}

		for suite in $SUITES; do
			delegate $suite
			if [ $suite = sandbox ]; then
				# The sandbox's tests are the server: they find themselves
				# alone in the delegated group and move into a leaf of it.
				dir="$ROOT/engines/sandbox"
				set -- "$home/bin/sandbox.test" -test.v -test.count=1 -test.parallel=1 -test.timeout=15m -test.skip "$SKIP"
			else
				# The suite starts its servers, each in a group of its own
				# under the delegated one (TAIKAI_TEST_DELEGATE), as
				# systemd-run --scope would: the test leaves the delegated
				# group for a leaf of it, and the group enables its
				# controllers for its children, as the user may.
				mkdir "$cg/test" && chown $uid:$uid "$cg/test" "$cg/test/cgroup.procs" || setup_failed "cannot create $cg/test"
				all_controllers "$cg"
				cg="$cg/test"
				dir="$ROOT/cmd/taikai"
				# As an ordinary user the plain tests are their
				# ...OrdinaryUser twins but for the Java client (serve
				# runs as the test's own user either way): run once.
				skip="^(TestSandboxHostileEngines|TestSandboxDaemonDiesWithServer)\$"
				[ -n "$SKIP" ] && skip="$SKIP|$skip"
				set -- env TAIKAI_TEST_DELEGATE="${cg%/test}" "$home/bin/taikai.test" -test.v -test.count=1 -test.parallel=1 -test.timeout=40m -test.run "$E2E" -test.skip "$skip"
			fi
			# The shell moves itself into the delegated group, then
			# becomes the user (no capability left) and runs the test.
			run user $suite "$dir" sh -c 'echo $$ >"$0/cgroup.procs" && u=$1 && shift && exec setpriv --reuid="$u" --regid="$u" --clear-groups --inh-caps=-all "$@"' "$cg" $uid \
				env -i PATH="$PATH" HOME="$home" USER=taikai-uml LOGNAME=taikai-uml TMPDIR="$home/tmp" CI=true \
				GOCACHE="$home/.cache/go-build" GOMODCACHE="$GOMODCACHE" GOFLAGS="$GOFLAGS" GOTOOLCHAIN="$GOTOOLCHAIN" \
				GOPROXY=off CGO_ENABLED=1 GOENV=off TAIKAI_TEST_BINARY="$home/bin/taikai" TAIKAI_TEST_TIME_SCALE="$TAIKAI_TEST_TIME_SCALE" "$@"
		done
		;;
	*) setup_failed "unknown phase $phase" ;;
	esac
done
say "done"
sync
echo 3 >/proc/sys/vm/drop_caches
poweroff -f
