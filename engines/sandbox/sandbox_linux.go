//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setupTimeout bounds bwrap's setup, from start to the namespaces being ready.
const setupTimeout = 10 * time.Second

// Paths of /etc hidden from engines where the engines' uid could read them
// (a root-owned 0600 file it cannot is left alone: each hidden path is a
// mount, about 0.2 ms of every start).
var defaultHide = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private",
	"/etc/security/opasswd", "/etc/credstore", "/etc/credstore.encrypted",
	"/etc/letsencrypt", "/etc/taikai", "/etc/docker", "/etc/machine-id",
}

// bwrapFlags follow the namespaces on every sandbox's bwrap command line
// (see command): --die-with-parent, then fd 3: --args, fd 4: --info-fd, fd
// 5: --block-fd.
var bwrapFlags = []string{"--die-with-parent", "--args", "3", "--info-fd", "4", "--block-fd", "5", "--"}

// Sandbox is one engine process in its sandbox.
type Sandbox struct {
	// Cmd runs bwrap. Before Start the caller may set Stdin, Stdout, Stderr
	// and WaitDelay, nothing else. Its Process is bwrap, not the engine.
	Cmd *exec.Cmd

	cfg   Config
	name  string
	args  []byte     // bwrap's arguments, NUL-separated, passed through a pipe
	group *group     // nil before Start
	mu    sync.Mutex // guards pidfd
	pidfd int        // the sandbox's init (pid 1 of its namespace); -1 if none
	ln    net.Listener
	oom   string // the cgroup file whose oom_kill counter says the limit was hit
	// setNoFile: the server sets the init's RLIMIT_NOFILE (prlimit(2))
	// rather than a prlimit(1) in the exec chain.
	setNoFile bool
	// waiting: made by Prepare, the waiter reads Exec's command from ctl
	// (the server's end of a socket pair), which Exec closes; streams are
	// the server's ends of the engine's standard streams until Exec hands
	// them over. Both under mu.
	waiting bool
	ctl     *os.File
	streams Streams
	handed  bool          // Exec handed the waiter its command; under mu
	cpuBase time.Duration // CPU time used before Exec (the waiter's); under mu
	// pooled: bwrap starts in a network namespace of the pool (netns), which
	// goes back once the sandbox has ended and its listener is closed.
	pooled bool
	netns  *netnsHold

	exited chan struct{} // the engine's main process has exited; usage is final
	done   chan struct{} // and everything is gone and cleaned up
	err    error         // Wait's result, valid after exited
	usage  Usage
	stop   sync.Once
}

var counter atomic.Int64

// notInName is what a sandbox's name (its cgroups') leaves out of
// Config.Name.
var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Command prepares a sandbox that runs argv. argv[0] is looked up in the
// sandbox's PATH by bwrap. The context kills the sandbox when done.
func Command(ctx context.Context, cfg Config, argv ...string) (*Sandbox, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	helper := ""
	if cfg.Port != 0 && cfg.Helper != "" {
		helper = cfg.Helper
		argv = helperArgs(cfg.Port, argv)
	}
	return command(ctx, cfg, helper, argv, false)
}

// lookBwrap finds bwrap in the server's PATH, once.
var lookBwrap = sync.OnceValues(func() (string, error) { return exec.LookPath("bwrap") })

// command is Command with the host path of the helper to mount ("" for
// none) and cfg's defaults applied. With waiter, the command is a prepared
// sandbox's waiter (see Prepare): it limits its own open files, and is the
// sandbox's init (pid 1, bwrap's --as-pid-1), which runs the engine as its
// child and exits with it; bwrap's own init would be one process more, a
// fork of bwrap (about 0.6 ms of CPU a sandbox here).
func command(ctx context.Context, cfg Config, helper string, argv []string, waiter bool) (*Sandbox, error) {
	bwrap, err := lookBwrap()
	if err != nil {
		return nil, errors.New("sandbox: bwrap not found: install bubblewrap (apt-get install bubblewrap)")
	}
	// A pooled network namespace where the server can make them (see
	// netns_linux.go), else bwrap's own. With a helper the server cannot.
	pooled := cfg.Helper == "" && pooledNetns()
	args, err := cfg.bwrapArgs(helper, pooled && leanMounts() != nil)
	if err != nil {
		return nil, err
	}
	if waiter {
		args = append([]string{"--as-pid-1"}, args...)
	}
	var buf strings.Builder
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: argument %q contains NUL", a)
		}
		buf.WriteString(a)
		buf.WriteByte(0)
	}
	// The options go through a pipe (--args) so that they (the environment,
	// host paths) do not show in /proc/1/cmdline inside the sandbox, and must
	// fit its buffer. bwrap takes the command itself only on its command line.
	if buf.Len() > 60<<10 {
		return nil, fmt.Errorf("sandbox: command and environment too long (%d bytes)", buf.Len())
	}
	s := &Sandbox{cfg: cfg, args: []byte(buf.String()), pidfd: -1, pooled: pooled, exited: make(chan struct{}), done: make(chan struct{})}
	s.name = fmt.Sprintf("%d-%d", os.Getpid(), counter.Add(1))
	if n := notInName.ReplaceAllString(cfg.Name, ""); n != "" {
		s.name += "-" + n
	}
	// The namespaces and --die-with-parent also come before --args: a
	// server killed before it has written the arguments leaves bwrap
	// reading end of file there, and bwrap would then go on with what its
	// command line says alone (seen: a bwrap orphaned in its setup, outside
	// the sandbox's cgroups). With these, it could at worst start the
	// command in an empty root, where nothing can run.
	chain := []string{bwrap, "--unshare-all"}
	if pooled {
		chain = append(chain, "--share-net") // the namespace bwrap starts in
	}
	chain = append(chain, bwrapFlags...)
	if len(cfg.CPUs) > 0 {
		// taskset(1) pins itself, then execs: the whole sandbox inherits the
		// affinity (no privilege needed, but an engine may widen it again; a
		// cpuset cgroup, where the server may use one, cannot be widened).
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return nil, errors.New("sandbox: taskset not found: install util-linux")
		}
		cpus := make([]string, len(cfg.CPUs))
		for i, c := range cfg.CPUs {
			cpus[i] = strconv.Itoa(c)
		}
		chain = append([]string{taskset, "-c", strings.Join(cpus, ",")}, chain...)
	}
	// RLIMIT_NOFILE: a server that can (see canSetRlimits) sets it on the
	// sandbox's init with prlimit(2) while the init waits on --block-fd (see
	// start); one that cannot (a container's non-root user) has prlimit(1),
	// running as the engine's uid, lower its own limit and exec the rest (one
	// more exec, about 1 ms). A prepared sandbox's waiter in the system's sh
	// sets it itself (ulimit); in klibc's sh, the server does (waiterShell).
	s.setNoFile = canSetRlimits() && (!waiter || waiterShell() != "")
	if !s.setNoFile && !waiter {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			return nil, errors.New("sandbox: prlimit not found: install util-linux")
		}
		chain = append([]string{prlimit, fmt.Sprintf("--nofile=%d:%d", cfg.NoFile, cfg.NoFile), "--"}, chain...)
	}
	s.Cmd = exec.CommandContext(ctx, chain[0], append(chain[1:], argv...)...)
	s.Cmd.Env = []string{} // bwrap itself gets nothing either
	s.Cmd.Dir = "/"
	s.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 && (cfg.UID != 0 || cfg.GID != 0) {
		s.Cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID)}
	}
	s.Cmd.WaitDelay = 2 * time.Second
	return s, nil
}

func (cfg *Config) defaults() error {
	if cfg.MemoryBytes <= 0 {
		cfg.MemoryBytes = DefaultMemory
	}
	if cfg.Pids <= 0 {
		cfg.Pids = DefaultPids
	}
	if cfg.NoFile <= 0 {
		cfg.NoFile = DefaultNoFile
	}
	if cfg.UID == 0 && cfg.GID == 0 {
		if os.Geteuid() == 0 {
			cfg.UID, cfg.GID = DefaultUID, DefaultUID
		} else {
			cfg.UID, cfg.GID = os.Geteuid(), os.Getegid()
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = EngineMount
	}
	if cfg.EngineDir != "" {
		abs, err := filepath.Abs(cfg.EngineDir)
		if err != nil {
			return err
		}
		cfg.EngineDir = abs
		if err := searchable(abs, cfg.UID, cfg.GID, false); err != nil {
			return fmt.Errorf("sandbox: engine dir: %w", err)
		}
	}
	if cfg.ScratchDir != "" {
		abs, err := filepath.Abs(cfg.ScratchDir)
		if err != nil {
			return err
		}
		cfg.ScratchDir = abs
		if os.Geteuid() == 0 {
			if err := os.Chown(abs, cfg.UID, cfg.GID); err != nil {
				return fmt.Errorf("sandbox: scratch dir: %w", err)
			}
		}
		if err := searchable(abs, cfg.UID, cfg.GID, true); err != nil {
			return fmt.Errorf("sandbox: scratch dir: %w", err)
		}
	}
	if cfg.FolderDir != "" {
		abs, err := filepath.Abs(cfg.FolderDir)
		if err != nil {
			return err
		}
		cfg.FolderDir = abs
		if os.Geteuid() == 0 {
			if err := os.Chown(abs, cfg.UID, cfg.GID); err != nil {
				return fmt.Errorf("sandbox: folder: %w", err)
			}
		}
		if err := searchable(abs, cfg.UID, cfg.GID, true); err != nil {
			return fmt.Errorf("sandbox: folder: %w", err)
		}
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return fmt.Errorf("sandbox: bad port %d", cfg.Port)
	}
	if cfg.Helper != "" && cfg.Port != 0 {
		abs, err := filepath.Abs(cfg.Helper)
		if err != nil {
			return err
		}
		cfg.Helper = abs
		if err := searchable(filepath.Dir(abs), cfg.UID, cfg.GID, false); err != nil {
			return fmt.Errorf("sandbox: helper: %w", err)
		}
	}
	return nil
}

// searchable checks that uid/gid can reach dir (and write it if write): bwrap
// mounts it as that user, and the engine uses it as that user.
func searchable(dir string, uid, gid int, write bool) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	want := os.FileMode(5)
	if write {
		want = 7
	}
	if !allows(st, uid, gid, want) {
		return fmt.Errorf("%s is not accessible to uid %d (mode %v)", dir, uid, st.Mode().Perm())
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !allows(st, uid, gid, 1) {
			return fmt.Errorf("%s is not searchable by uid %d (mode %v; chmod o+x)", p, uid, st.Mode().Perm())
		}
		if p == "/" {
			return nil
		}
	}
}

// allows tells whether the mode of st gives uid/gid all of bits (4 read,
// 2 write, 1 search).
func allows(st os.FileInfo, uid, gid int, bits os.FileMode) bool {
	sys := st.Sys().(*syscall.Stat_t)
	m := st.Mode().Perm()
	switch {
	case int(sys.Uid) == uid:
		return m&(bits<<6) == bits<<6
	case int(sys.Gid) == gid:
		return m&(bits<<3) == bits<<3
	}
	return m&bits == bits
}

// exposed tells whether uid/gid could read the file, or search or list the
// directory, at p; a file with an ACL counts as exposed.
func exposed(p string, st os.FileInfo, uid, gid int) bool {
	if n, err := unix.Lgetxattr(p, "system.posix_acl_access", nil); err == nil && n > 0 {
		return true
	}
	if st.IsDir() {
		return allows(st, uid, gid, 4) || allows(st, uid, gid, 1)
	}
	return allows(st, uid, gid, 4)
}

// bwrapArgs builds bwrap's arguments; lean: bwrap starts in the lean mount
// namespace, whose /dev is the sandboxes' (see devTemplate).
func (cfg *Config) bwrapArgs(helper string, lean bool) ([]string, error) {
	a := []string{
		// The network namespace is set on the command line (see command).
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--hostname", "engine",
		// No nested user namespaces: they are the usual door to kernel bugs
		// reachable without privilege (max_user_namespaces=0 inside).
		"--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
	}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			a = append(a, "--symlink", target, d)
		case st.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--ro-bind", "/etc", "/etc")
	for i, p := range append(append([]string{}, defaultHide...), cfg.Hide...) {
		st, err := os.Lstat(p)
		switch {
		case err != nil:
		case i < len(defaultHide) && !exposed(p, st, cfg.UID, cfg.GID):
			// The engine cannot read it anyway (Config.Hide is hidden always).
		case st.IsDir():
			a = append(a, "--tmpfs", p, "--remount-ro", p)
		default:
			a = append(a, "--ro-bind", "/dev/null", p)
		}
	}
	if helper != "" {
		a = append(a, "--ro-bind", helper, helperMount)
	}
	a = append(a, "--proc", "/proc")
	if lean {
		// The /dev made once (read-only), and a /dev/shm of the sandbox's.
		a = append(a, "--dev-bind", "/dev", "/dev", "--size", strconv.FormatInt(cfg.MemoryBytes, 10), "--perms", "1777", "--tmpfs", "/dev/shm")
	} else {
		a = append(a, "--dev", "/dev")
	}
	if cfg.ScratchDir != "" {
		a = append(a, "--bind", cfg.ScratchDir, ScratchMount)
	} else {
		a = append(a, "--size", strconv.FormatInt(cfg.MemoryBytes, 10), "--perms", "1777", "--tmpfs", ScratchMount)
	}
	if cfg.FolderDir != "" {
		a = append(a, "--bind", cfg.FolderDir, FolderMount)
	}
	if cfg.EngineDir != "" {
		a = append(a, "--ro-bind", cfg.EngineDir, EngineMount)
	} else {
		a = append(a, "--dir", EngineMount)
	}
	// After the scratch tmpfs, so that a path under /tmp (a binary in a
	// temporary directory) is not hidden by it.
	for _, p := range cfg.ReadOnly {
		a = append(a, "--ro-bind", p, p)
	}
	// The root is bwrap's tmpfs: read-only, so that all writes go to /tmp.
	a = append(a, "--remount-ro", "/", "--chdir", cfg.Dir, "--clearenv")
	env := map[string]bool{}
	for _, kv := range cfg.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("sandbox: bad environment entry %q", kv)
		}
		env[k] = true
		a = append(a, "--setenv", k, v)
	}
	for _, kv := range [][2]string{{"HOME", ScratchMount}, {"TMPDIR", ScratchMount}, {"PATH", "/usr/local/bin:/usr/bin:/bin"}} {
		if !env[kv[0]] {
			a = append(a, "--setenv", kv[0], kv[1])
		}
	}
	return a, nil
}

// Start starts the sandbox and returns once the engine is about to run: its
// cgroups, limits and (if Config.Port is set) listener are in place before
// the engine's first instruction.
func (s *Sandbox) Start() error {
	if s.group != nil {
		return errors.New("sandbox: already started")
	}
	g, err := newGroup(s.name, &s.cfg)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	s.group = g
	s.oom = g.oomFile()
	if err := s.start(); err != nil {
		s.abort()
		return fmt.Errorf("sandbox: %w", err)
	}
	go s.wait()
	return nil
}

// start runs bwrap, which sets up the namespaces and blocks before exec'ing
// the engine; meanwhile its init is put into the cgroups and limited.
func (s *Sandbox) start() error {
	// ours are the server's ends; theirs are bwrap's (fds 3, 4, 5 and, with
	// a helper, 6), closed here once bwrap has them.
	var ours, theirs []*os.File
	defer func() {
		for _, f := range append(ours, theirs...) {
			f.Close()
		}
	}()
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		ours, theirs = append(ours, r, w), append(theirs, r, w)
	}
	argsR, argsW := ours[0], ours[1]
	infoR, infoW := ours[2], ours[3]
	blockR, blockW := ours[4], ours[5]
	// bwrap's --block-fd is the pipe reopened read-write: it never reads
	// end of file. bwrap's init has no parent-death signal until it has read
	// that byte and forked the engine (--die-with-parent is applied there),
	// so a server killed during the setup (taking bwrap with it) leaves the
	// init orphaned; bwrap runs the engine whatever the read returned, and
	// with a plain read end the orphan would read end of file and run the
	// engine with nobody watching. As its own writer it waits for ever
	// instead (asleep, running nothing; Sweep kills it at the next start if
	// it is in the cgroups).
	//
	// A prepared sandbox (Prepare) gets the plain read end: what it runs
	// is the waiter, which waits for its command from the server and exits
	// at once if the server is gone, taking the orphaned init along.
	ours, theirs = []*os.File{argsW, infoR, blockW}, []*os.File{argsR, infoW, blockR}
	if !s.waiting {
		blockRW, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", blockR.Fd()), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("reopen the block pipe: %w", err)
		}
		ours, theirs = append(ours, blockR), []*os.File{argsR, infoW, blockRW}
	}
	var seatR *os.File // the server's end of the helper's socket pair
	helperListens := s.cfg.Port != 0 && s.cfg.Helper != ""
	if helperListens || s.waiting {
		// A stream: the waiter's sh reads Exec's command line from it.
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		// Non-blocking before NewFile, so that the file is pollable and
		// takes a read deadline.
		nbErr := unix.SetNonblock(fds[0], true)
		seatR = os.NewFile(uintptr(fds[0]), "seat")
		ours, theirs = append(ours, seatR), append(theirs, os.NewFile(uintptr(fds[1]), "seat"))
		if nbErr != nil {
			return nbErr
		}
	}
	s.Cmd.ExtraFiles = theirs
	closeOnExec()
	mv := s.group.selfMove()
	defer mv.close()
	var err error
	if s.pooled {
		// bwrap starts in the namespace, and the seat's listener is made
		// there first.
		ns, nerr := getNetns()
		if nerr != nil {
			return nerr
		}
		s.netns = &netnsHold{ns: ns}
		s.netns.holds.Store(1)
		err = inNetns(int(ns.Fd()), leanMounts(), func() error {
			if s.cfg.Port != 0 {
				ln, err := listen(s.cfg.Port)
				if err != nil {
					return err
				}
				s.netns.holds.Add(1)
				s.ln = &seatListener{TCPListener: ln.(*net.TCPListener), hold: s.netns}
			}
			return mv.start(s.Cmd.Start)
		})
	} else if mv != nil {
		err = onLockedThread(func() error { return mv.start(s.Cmd.Start) })
	} else {
		err = s.Cmd.Start()
	}
	for _, f := range theirs {
		f.Close()
	}
	theirs = nil
	if err != nil {
		return err
	}
	// bwrap is in the cgroups before it has its arguments (it reads them
	// from --args first thing): born in them (see selfMove), else moved. So
	// the init it clones is born in them: an init orphaned by a server killed
	// during the setup (see blockRW) is in cgroups that Sweep empties at the
	// next start. bwrap counts for one process and its own few pages in the
	// limits.
	if mv == nil || !s.group.holds(s.Cmd.Process.Pid) {
		if err := s.group.add(s.Cmd.Process.Pid); err != nil {
			return err
		}
	}
	if _, err := argsW.Write(s.args); err != nil { // fits the pipe: see Command
		return fmt.Errorf("pass bwrap its arguments: %w", err)
	}
	argsW.Close()
	// bwrap reports the host pid of the namespace's init once namespaces exist.
	_ = infoR.SetReadDeadline(time.Now().Add(setupTimeout))
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPid <= 0 {
		return fmt.Errorf("bwrap did not set up the sandbox (see its output): %v", err)
	}
	pidfd, err := unix.PidfdOpen(info.ChildPid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	s.mu.Lock()
	s.pidfd = pidfd
	s.mu.Unlock()
	// The pidfd is bwrap's child, not a process that took a dead one's pid.
	if ppid, err := parentPid(info.ChildPid); err != nil || ppid != s.Cmd.Process.Pid {
		return fmt.Errorf("bwrap's sandbox init %d is gone (see the output)", info.ChildPid)
	}
	// The init is blocked on --block-fd before it forks the engine: whatever
	// it becomes is inside the cgroups and under the limits. It was born in
	// them (see above); moving a process takes a global lock of the
	// kernel's, slow under load, so it is moved only if it somehow is not.
	if !s.group.holds(info.ChildPid) {
		if err := s.group.add(info.ChildPid); err != nil {
			return err
		}
	}
	if s.setNoFile {
		n := uint64(s.cfg.NoFile)
		if err := setRlimit(info.ChildPid, s.cfg.UID, s.cfg.GID, unix.RLIMIT_NOFILE, n); err != nil {
			return fmt.Errorf("limit open files: %w", err)
		}
	}
	if s.cfg.Port != 0 && !helperListens && !s.pooled {
		var ln net.Listener
		err := inNetns(s.pidfd, nil, func() (err error) {
			ln, err = listen(s.cfg.Port)
			return err
		})
		if err != nil {
			return fmt.Errorf("sandbox %d: %w", info.ChildPid, err)
		}
		s.ln = ln
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		return fmt.Errorf("release the sandbox: %w", err)
	}
	if helperListens {
		ln, err := receiveListener(seatR, time.Now().Add(setupTimeout))
		if err != nil {
			return err
		}
		s.ln = ln
	}
	if s.waiting {
		ours = slices.DeleteFunc(ours, func(f *os.File) bool { return f == seatR })
		s.ctl = seatR
	}
	return nil
}

// canSetRlimits tells whether the server may set the resource limits of a
// sandbox's init, which runs as another uid: with CAP_SYS_RESOURCE, or as
// root with CAP_SETUID and CAP_SETGID (see setRlimit).
var canSetRlimits = sync.OnceValue(func() bool {
	return hasSysResource() || os.Geteuid() == 0 && hasCap(unix.CAP_SETUID) && hasCap(unix.CAP_SETGID)
})

var hasSysResource = sync.OnceValue(func() bool { return hasCap(unix.CAP_SYS_RESOURCE) })

// setRlimit sets the soft and hard limit of resource for pid, whose uid and
// gid are uid and gid. Without CAP_SYS_RESOURCE (a VM's or a container's
// root may lack it), the kernel still lets a caller whose real uid and gid
// are the target's set its limits: a locked thread takes them as its real
// ids for the call and then takes back the server's (its effective ids stay
// 0, so its capabilities stay). The raw system calls change that thread
// alone, where Go's Setresuid would change every thread of the server.
// For those microseconds a process of that uid outside the sandboxes could
// signal that one thread (tgkill; a sandboxed one cannot name the server's
// threads in its pid namespace), as it could the engine.
func setRlimit(pid, uid, gid, resource int, n uint64) error {
	lim := &unix.Rlimit{Cur: n, Max: n}
	if hasSysResource() {
		return unix.Prlimit(pid, resource, lim, nil)
	}
	return onLockedThread(func() error {
		ruid, rgid := os.Getuid(), os.Getgid()
		keep := ^uintptr(0) // -1: unchanged
		set := func(nr uintptr, id int) error {
			if _, _, e := unix.RawSyscall(nr, uintptr(id), keep, keep); e != 0 {
				return e
			}
			return nil
		}
		err := set(unix.SYS_SETRESGID, gid)
		if err == nil {
			if err = set(unix.SYS_SETRESUID, uid); err == nil {
				err = unix.Prlimit(pid, resource, lim, nil)
				if berr := set(unix.SYS_SETRESUID, ruid); berr != nil {
					return errors.Join(err, fmt.Errorf("%w: take back the real uid: %v", errThreadStuck, berr))
				}
			}
		}
		if berr := set(unix.SYS_SETRESGID, rgid); berr != nil {
			return errors.Join(err, fmt.Errorf("%w: take back the real gid: %v", errThreadStuck, berr))
		}
		return err
	})
}

// parentPid reads the parent of pid from /proc.
func parentPid(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("bad stat")
	}
	f := strings.Fields(string(b[i+1:])) // state, ppid, ...
	if len(f) < 2 {
		return 0, errors.New("bad stat")
	}
	return strconv.Atoi(f[1])
}

// closeOnExec marks every descriptor of the server from 3 up close-on-exec.
// Go opens its own that way, but a descriptor the server inherited without
// the flag (from a shell, a supervisor) would otherwise pass through prlimit
// and bwrap into the engine. os/exec's ExtraFiles and Stdin/Stdout/Stderr are
// dup'ed into the child and unaffected.
func closeOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, _ := os.ReadDir("/proc/self/fd") // kernels before 5.11
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// killInit kills the sandbox's init, and with it every process of its pid
// namespace. The pidfd makes this immune to pid reuse.
func (s *Sandbox) killInit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pidfd >= 0 {
		_ = unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
	}
}

// abort undoes a failed start.
func (s *Sandbox) abort() {
	if s.ln != nil {
		s.ln.Close() // the caller never saw it
	}
	if s.netns != nil {
		// A bwrap killed before it had its arguments may have cloned
		// before it died, outside the cgroups (see command).
		s.netns.bad.Store(true)
	}
	s.killInit()
	if s.Cmd.Process != nil {
		_ = s.Cmd.Process.Kill()
		_ = s.Cmd.Wait()
	}
	s.teardown()
	close(s.exited)
	close(s.done)
}

// wait reaps bwrap, then makes sure nothing of the sandbox is left.
func (s *Sandbox) wait() {
	s.err = s.Cmd.Wait()
	s.usage.Exited = true
	if ps := s.Cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			s.usage.Signal = int(ws.Signal())
			s.usage.ExitCode = 128 + s.usage.Signal
		} else {
			s.usage.ExitCode = ps.ExitCode()
			if c := s.usage.ExitCode; c > 128 && c < 128+65 {
				s.usage.Signal = c - 128
			}
		}
	}
	// The engine's main process has exited (bwrap reports that at once):
	// the rest of the sandbox is killed, and what it used is final. The
	// kernel's teardown of its namespaces and the removal of its cgroups,
	// a few ms, go on after Wait and Stop have returned; Done says when
	// everything is gone.
	s.killInit()
	s.group.usage(&s.usage)
	s.mu.Lock()
	s.usage.CPUTime = max(0, s.usage.CPUTime-s.cpuBase)
	s.mu.Unlock()
	close(s.exited)
	s.teardown()
	// A prepared sandbox that never ran its engine (on a failed start,
	// Prepare closes them): nobody has its streams or its listener.
	s.mu.Lock()
	s.streams.close()
	s.streams = Streams{}
	unused := s.waiting && !s.handed
	s.mu.Unlock()
	if unused && s.ln != nil {
		s.ln.Close()
	}
	close(s.done)
}

// teardown kills what is left and removes the cgroups.
func (s *Sandbox) teardown() {
	s.killInit()
	// The init exits once every other process of its namespace is gone. Only
	// teardown closes the pidfd, so it stays valid here without the lock.
	s.mu.Lock()
	pidfd := s.pidfd
	s.mu.Unlock()
	if pidfd >= 0 {
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, 5000); err != unix.EINTR {
				break
			}
		}
	}
	gone := true
	if s.group != nil {
		gone = s.group.kill(time.Now().Add(5*time.Second)) == nil
		// A cgroup whose last process is exiting may refuse rmdir for a moment.
		deadline := time.Now().Add(2 * time.Second)
		for s.group.remove() != nil && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	if s.netns != nil {
		// Reused only if nothing of this sandbox can be left in it.
		if !gone || (s.Cmd.ProcessState == nil && s.Cmd.Process != nil) {
			s.netns.bad.Store(true)
		}
		s.netns.release()
		s.netns = nil
	}
	s.mu.Lock()
	if s.pidfd >= 0 {
		unix.Close(s.pidfd)
		s.pidfd = -1
	}
	if s.ctl != nil {
		s.ctl.Close()
		s.ctl = nil
	}
	s.mu.Unlock()
}

// Listener is the server's listener on 127.0.0.1:Config.Port inside the
// sandbox (nil without a port). The caller owns it and must close it: it
// stays open after the sandbox has ended, so that the connection of an engine
// that connected, wrote and exited can still be accepted (a prepared sandbox
// that ends before Exec closes its own). It has SetDeadline(time.Time)
// error, as a *net.TCPListener (which it may not be).
func (s *Sandbox) Listener() net.Listener { return s.ln }

// Pid is the host pid of bwrap (not of the engine).
func (s *Sandbox) Pid() int {
	if s.Cmd.Process == nil {
		return 0
	}
	return s.Cmd.Process.Pid
}

// Done is closed once the sandbox has ended and everything is cleaned up:
// every process gone, the cgroups removed (a few ms after Wait returns).
func (s *Sandbox) Done() <-chan struct{} { return s.done }

// Wait waits until the engine's main process has exited and every other
// process of the sandbox has been killed (Done says when they are gone),
// and returns bwrap's exit error (which carries the engine's exit status).
func (s *Sandbox) Wait() error {
	if s.group == nil {
		return errors.New("sandbox: not started")
	}
	<-s.exited
	return s.err
}

// Stop gives the engine grace to exit by itself, then kills every process of
// the sandbox and waits for the end. It is safe to call more than once and
// concurrently with Wait.
func (s *Sandbox) Stop(grace time.Duration) {
	if s.group == nil {
		return // never started
	}
	s.stop.Do(func() {
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-s.exited:
			case <-t.C:
			}
			t.Stop()
		}
		select {
		case <-s.exited:
		default:
			// The init's death kills the namespace; bwrap then exits by itself,
			// but kill it too in case it is stuck.
			s.killInit()
			_ = s.Cmd.Process.Kill()
		}
	})
	<-s.exited
}

// OverMemory reports whether the kernel has killed a process of the sandbox
// for reaching the memory limit, while it runs (Usage().OOMKilled after).
// On cgroup v1 the kernel kills only the biggest process, which may be a
// child of the engine: a caller that polls this can end the game at once.
func (s *Sandbox) OverMemory() bool {
	select {
	case <-s.exited:
		return s.usage.OOMKilled
	default:
	}
	if s.oom == "" {
		return false
	}
	n, ok := keyed(s.oom, "oom_kill")
	return ok && n > 0
}

// Usage reports how the sandbox ended; Exited is false until it has.
func (s *Sandbox) Usage() Usage {
	select {
	case <-s.exited:
		return s.usage
	default:
		return Usage{}
	}
}
