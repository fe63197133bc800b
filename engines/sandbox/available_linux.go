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
	"syscall"
	"time"
)

// Available says why sandboxes cannot be set up on this host, or nil if they
// can: it checks the requirements one by one, then runs true in a real
// sandbox. A server refuses non-built-in engines when it fails. It does not
// try a listener: see Check.
func Available() error {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return errors.New("sandbox: bwrap not found: install bubblewrap (apt-get install bubblewrap)")
	}
	if os.Geteuid() != 0 {
		return errors.New("sandbox: the server must run as root: it runs engines as another uid, enters their network namespaces and writes their cgroups")
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
	if s := hostCgroups(); s.detectErr != nil {
		return fmt.Errorf("sandbox: %w", s.detectErr)
	}
	g, err := newGroup(fmt.Sprintf("%d-probe", os.Getpid()), &Config{MemoryBytes: DefaultMemory, Pids: DefaultPids})
	if err != nil {
		err = fmt.Errorf("sandbox: cgroups not writable: %w", err)
		if errors.Is(err, syscall.EROFS) {
			err = fmt.Errorf("%w (in a container, mount /sys/fs/cgroup read-write: docker run -v /sys/fs/cgroup:/sys/fs/cgroup:rw)", err)
		}
		return err
	}
	if err := g.remove(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return Check(Config{})
}

// Check runs true in a sandbox of the given configuration, with its listener
// if cfg.Port is set, and says why that fails. A server calls it at start
// with the configuration its engines will have (e.g. Port and Helper set).
func Check(cfg Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sb, err := Command(ctx, cfg, "true")
	if err != nil {
		return err
	}
	var out bytes.Buffer
	sb.Cmd.Stdout, sb.Cmd.Stderr = &out, &out
	if err := sb.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) && cfg.Port != 0 && cfg.Helper == "" {
			err = fmt.Errorf("%w (entering a network namespace needs CAP_SYS_ADMIN and CAP_SYS_PTRACE; or set Config.Helper)", err)
		}
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
