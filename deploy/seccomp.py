#!/usr/bin/env python3
"""Derives deploy/seccomp.json, the seccomp profile of docker-compose.yml,
from Docker's default profile (moby's profiles/seccomp/default.json, vendored
in moby as vendor/github.com/moby/profiles/seccomp/default.json):

    python3 deploy/seccomp.py path/to/default.json > deploy/seccomp.json

The result is that profile with one rule more, which allows the system calls
bubblewrap makes to build each engine's sandbox and that Docker's profile
allows only to a container with CAP_SYS_ADMIN (which the server's container
does not have). The default's own rules for those calls (clone allowed
without namespace flags, clone3 refused with ENOSYS) are taken out, since
seccomp cannot hold two actions for one call. Everything else is the
default's, unchanged.
"""
import json
import sys

# What bubblewrap calls (the sandbox's bwrap command line, engines/sandbox),
# each with what bwrap 0.8 says without it (measured in a container of this
# image, as its user taikai, with this profile less that one call):
#   clone       the new namespaces (CLONE_NEW*): "No permissions to create
#               new namespace"
#   unshare     --disable-userns's nested user namespace: "unshare user ns:
#               Operation not permitted"
#   mount       the sandbox's own root, /proc, /dev, tmpfs and bind mounts:
#               "Failed to make / slave: Operation not permitted"
#   pivot_root  into that root: "pivot_root: Operation not permitted"
#   umount2     the old root: "unmount old root: Operation not permitted"
#   sethostname --hostname engine: "Can't set hostname to engine: Operation
#               not permitted"
#   clone3      not bwrap's: Go's SysProcAttr.UseCgroupFD (CLONE_INTO_CGROUP,
#               which only clone3 has) starts bwrap inside its cgroup where
#               the server has a writable cgroup v2; without it every start
#               there fails with ENOSYS. It can do nothing clone cannot.
# Not added, since Docker's default allows them to every container: prctl,
# with which bwrap 0.8 loads each sandbox's seccomp filter (--seccomp:
# PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with SECCOMP_MODE_FILTER, seen
# with strace; a filter nested in the container's needs no privilege once
# no_new_privs is set), and sched_setaffinity, with which the server starts
# bwrap on its engine's CPUs (engines/sandbox).
ADDED = ["clone", "clone3", "mount", "pivot_root", "sethostname", "umount2", "unshare"]


def derive(default):
    out = dict(default)
    rules = []
    for rule in default["syscalls"]:
        caps = rule.get("includes", {}).get("caps")
        names = rule["names"]
        if not caps:
            # A rule that applies without a capability: the added calls
            # leave it (their own rule below decides them).
            names = [n for n in names if n not in ADDED]
            if not names:
                continue
        rules.append(dict(rule, names=names))
    rules.append({
        "names": ADDED,
        "action": "SCMP_ACT_ALLOW",
        "comment": "taikai: bubblewrap's engine sandboxes (deploy/seccomp.py)",
    })
    out["syscalls"] = rules
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: seccomp.py DEFAULT.json > deploy/seccomp.json")
    with open(sys.argv[1]) as f:
        default = json.load(f)
    json.dump(derive(default), sys.stdout, indent="\t")
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
