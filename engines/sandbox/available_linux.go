//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Available says why sandboxes cannot be set up on this host, or nil if they
// can: Check with the running binary as the helper and a seat's listener.
// It needs no privilege: bubblewrap makes the namespaces in an unprivileged
// user namespace; HostGuarantees says which limits hold.
func Available() error { return Check(Config{Port: 46000}) }

// prerequisites checks the host's requirements one by one.
func prerequisites() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return errors.New("sandbox: bwrap not found: install bubblewrap (apt-get install bubblewrap)")
	}
	if v := readSysctl("/proc/sys/user/max_user_namespaces"); v == "0" {
		return errors.New("sandbox: user namespaces are disabled (sysctl user.max_user_namespaces=0); set it to e.g. 10000")
	}
	if v := readSysctl("/proc/sys/kernel/unprivileged_userns_clone"); v == "0" {
		return errors.New("sandbox: unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=1 enables them)")
	}
	if v := readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); v == "1" {
		return errors.New("sandbox: AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile allowing userns for /usr/bin/bwrap)")
	}
	return nil
}

// HostGuarantees says which guarantees sandboxes get on this host.
func HostGuarantees() Guarantees {
	g := Guarantees{Isolation: "namespaces", Memory: "cgroup", Processes: "cgroup", CPUs: "affinity"}
	s := hostCgroups()
	if s.cpuset {
		g.CPUs = "cpuset"
	}
	switch {
	case s.none != "":
		g.Memory, g.Processes, g.Reason = "polling", "rlimit", s.none
		g.Stronger = "systemd-run --user --scope -p Delegate=yes taikai serve (cgroup v2), or run the server as root"
	case s.v2:
		g.Cgroup = "v2"
	default:
		g.Cgroup = "v1"
	}
	return g
}

// Check checks the host's requirements, then runs true in a sandbox of the
// given configuration, with its listener if cfg.Port is set, and says why
// that fails. A server calls it at start with the configuration its engines
// will have, and refuses non-built-in engines when it fails.
func Check(cfg Config) error {
	if err := prerequisites(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	sb, err := Command(ctx, cfg, "true")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	sb.Cmd.Stdout, sb.Cmd.Stderr = &out, &out
	if err := sb.Start(); err != nil {
		msg := strings.TrimSpace(out.String())
		return fmt.Errorf("%w: %s%s", err, msg, containerHint(msg))
	}
	if ln := sb.Listener(); ln != nil {
		defer ln.Close()
	}
	if err := sb.Wait(); err != nil {
		msg := strings.TrimSpace(out.String())
		return fmt.Errorf("sandbox: a trial run of true failed: %v: %s%s", err, msg, containerHint(msg))
	}
	return nil
}

// containerHint says how to fix the bwrap errors a container's defaults
// cause (docs/SANDBOX.md, "What the server needs").
func containerHint(bwrapOutput string) string {
	switch {
	case strings.Contains(bwrapOutput, "Can't mount proc"):
		return " (in Docker, /proc is masked: run the container with --security-opt systempaths=unconfined; Compose v2 takes it under security_opt, Compose v1 cannot set it)"
	case strings.Contains(bwrapOutput, "No permissions to create new namespace"), strings.Contains(bwrapOutput, "Creating new namespace failed"):
		return " (in Docker, the default seccomp profile forbids user namespaces: run the container with --security-opt seccomp=unconfined)"
	}
	return ""
}

func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
