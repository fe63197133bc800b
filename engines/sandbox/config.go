// Package sandbox runs one untrusted engine process inside a bubblewrap
// sandbox bounded by cgroups.
//
// What a sandboxed engine sees and may do:
//
//   - Files: the system's runtime files read-only (/usr, /bin, /sbin, /lib*,
//     /etc minus its secrets), its engine directory read-only at /engine (the
//     default working directory, so commands relative to the engine directory
//     keep working), a private writable scratch directory at /tmp (HOME and
//     TMPDIR), a fresh /proc of its own pid namespace and a minimal /dev.
//     Nothing else of the host: not the server's data, database, logs, other
//     engines, nor the server's processes or environment.
//   - Network: its own network namespace with only a loopback. If Config.Port
//     is set, the server gets a TCP listener on 127.0.0.1:Port inside that
//     namespace (Sandbox.Listener): the engine dials 127.0.0.1:Port as usual
//     and its connection is accepted directly by the server. Many engines can
//     use the same fixed port at once, each in its own namespace. The helper
//     (Config.Helper, the taikai binary at HelperPath) opens it inside the
//     sandbox, as the engine, and hands it over; then it limits open files
//     and processes and execs the engine.
//   - Processes: its own pid, ipc, uts, user and cgroup namespaces, a new
//     session (no TIOCSTI), all capabilities dropped, no nested user
//     namespace, and on a root server an unprivileged uid (65534) on the host.
//     A seccomp filter refuses sched_setaffinity and nothing else.
//   - Resources: memory (default 1 GiB, tmpfs scratch and socket buffers
//     included), processes and threads (default 256), open files (default
//     1024), optionally CPUs. Memory and processes are bounded by a cgroup
//     where the server has one (v1 as root, a delegated v2 subtree), else
//     memory is polled and processes bounded by RLIMIT_NPROC of the
//     sandbox's user namespace (HostGuarantees).
//
// Life cycle:
//
//	sb, err := sandbox.Command(ctx, cfg, "java", "Client.java", "127.0.0.1")
//	sb.Cmd.Stdout, sb.Cmd.Stderr = log, log // only these, Stdin and WaitDelay
//	err = sb.Start()         // cgroups, namespaces and the listener are ready
//	ln := sb.Listener()      // with Config.Port; the caller closes it
//	conn, err := ln.Accept()
//	...
//	sb.Stop(time.Second)     // grace, then every process of the sandbox dies
//	u := sb.Report()         // exit status, peak memory, CPU time, OOM kill
//
// When the engine's main process exits, or the server dies (even by SIGKILL),
// every process of the sandbox is killed: the sandbox's pid namespace dies
// with its init, which dies with bwrap, which dies with the server.
//
// No privilege is needed (bubblewrap uses unprivileged user namespaces);
// Available says precisely what is missing.
package sandbox

import "time"

// Defaults of Config.
const (
	DefaultMemory = 1 << 30 // bytes
	DefaultPids   = 256     // processes and threads
	DefaultNoFile = 1024    // open files
	// DefaultCPUQuota is the CPU time an engine's processes may use
	// together, in CPUs: one CPU's worth.
	DefaultCPUQuota = 1.0
	// DefaultUID is the host uid engines run as when the server is root.
	DefaultUID = 65534
	// EngineMount is where the engine directory appears inside the sandbox.
	EngineMount = "/engine"
	// ScratchMount is the writable scratch directory inside the sandbox.
	ScratchMount = "/tmp"
	// FolderMount is where Config.FolderDir appears inside the sandbox.
	FolderMount = "/folder"
)

// Config describes one sandboxed engine. Zero values take the defaults.
type Config struct {
	// EngineDir is the host directory of the engine, mounted read-only at
	// /engine. It must be readable by UID; its parents need not be.
	EngineDir string
	// Dir is the working directory inside the sandbox; default /engine.
	Dir string
	// ScratchDir, if set, is a host directory mounted writable at /tmp; it is
	// chowned to UID when the server is root. If empty, /tmp is a tmpfs of at
	// most MemoryBytes (its pages count against the memory limit).
	ScratchDir string
	// FolderDir, if set, is a host directory mounted writable at
	// FolderMount: the engine's persistent folder (pbrain's INFO folder),
	// chowned to UID when the server is root.
	FolderDir string
	// Env is the engine's whole environment (the server's is never passed).
	// HOME=/tmp, TMPDIR=/tmp and a PATH are added when missing.
	Env []string
	// MemoryBytes bounds the memory of all processes together; default 1 GiB.
	MemoryBytes int64
	// Pids bounds the number of processes and threads; default 256.
	Pids int
	// NoFile is RLIMIT_NOFILE (soft and hard) of the engine; default 1024.
	NoFile int
	// CPUs, if set, are the only CPUs the engine may run on: its cgroup's
	// cpuset where the sandbox has one (HostGuarantees' CPUs "cpuset"),
	// else the affinity bwrap starts with; either way the engine cannot
	// leave them (every sandbox's seccomp filter refuses sched_setaffinity).
	CPUs []int
	// CPUQuota bounds the CPU time of all its processes together, in CPUs
	// (1.5: one and a half CPUs' worth of every 100 ms), where the sandbox
	// has a cpu cgroup (cpu.max on v2, cpu.cfs_quota_us on v1); default
	// DefaultCPUQuota, negative for none. It keeps an engine without CPUs
	// of its own to that much of the machine.
	CPUQuota float64
	// Port, if not 0, is the TCP port of 127.0.0.1 inside the sandbox's
	// network namespace on which Sandbox.Listener accepts the engine.
	Port int
	// Helper is the host path of a binary whose main calls MaybeHelper
	// first (the taikai binary); default os.Executable(). It is mounted at
	// HelperPath. The helper that runs first in every sandbox (see
	// MaybeHelper) is HelperProgram if it sits beside Helper (mounted at
	// SmallHelperPath), else Helper itself.
	Helper string
	small  string      // HelperProgram beside Helper, if any
	staged [][2]string // host path, name under stageDir (see stage)
	// UID and GID the engine runs as on the host. Default: 65534 when the
	// server is root, else the server's own.
	UID, GID int
	// ReadOnly lists extra host paths mounted read-only at the same path
	// (e.g. /opt/jdk-21).
	ReadOnly []string
	// Hide lists extra paths under the mounted system directories to hide
	// (e.g. /etc/taikai), in addition to the known secrets of /etc.
	Hide []string
	// Name prefixes the sandbox's cgroup name (letters, digits, - and _ kept).
	Name string
}

// Report is what a finished sandbox reports.
type Report struct {
	// Exited is true once the sandbox has finished; the other fields are
	// valid only then.
	Exited bool
	// ExitCode is the engine's exit status. bwrap reports an engine killed by
	// signal n as 128+n (like a shell); such codes set Signal to n.
	ExitCode int
	// Signal, if not 0, is the signal that killed the engine's main process.
	Signal int
	// OOMKilled is true if the kernel killed a process of the sandbox because
	// it reached the memory limit: the caller scores this as reason "memory".
	OOMKilled bool
	// PeakMemory is the highest memory use of the sandbox in bytes (0 if the
	// kernel does not report it).
	PeakMemory int64
	// CPUTime is the CPU time (user + system) of all processes of the sandbox.
	CPUTime time.Duration
}

// HelperPath is where Config.Helper (the taikai binary) appears inside every
// sandbox: built-in engines run it from there.
const HelperPath = "/.taikai/taikai"

// Guarantees says which of the sandbox's guarantees hold on this host.
type Guarantees struct {
	// Isolation is always "namespaces": own pid, network, ipc, uts, user
	// and mount namespaces, only the engine's own directories.
	Isolation string `json:"isolation"`
	// Memory is how the memory limit holds: "cgroup" (the kernel's, exact)
	// or "polling" (measured every 100 ms, the sandbox killed over it).
	Memory string `json:"memory"`
	// Processes is how the process limit holds: "cgroup" (pids.max and
	// RLIMIT_NPROC) or "rlimit" (RLIMIT_NPROC of its user namespace).
	Processes string `json:"processes"`
	// CPUs is how an engine is kept on its CPUs (Config.CPUs): "cpuset"
	// (its cgroup's) or "affinity" (set when it starts). The engine cannot
	// leave them either way: the sandbox's seccomp filter answers
	// sched_setaffinity with EPERM in every ABI.
	CPUs string `json:"cpus"`
	// Cgroup is "v1", "v2" or "" (none).
	Cgroup string `json:"cgroup,omitempty"`
	// Why no cgroup, and the command that gives one ("" with a cgroup).
	Reason   string `json:"reason,omitempty"`
	Stronger string `json:"stronger,omitempty"`
}
