//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setupTimeout bounds bwrap's setup, from start to the namespaces being
// ready, and Check's trial run: 10 s, times TAIKAI_TEST_TIME_SCALE where a
// test harness on a slow kernel sets it (user-mode Linux, deploy/uml: there
// a sandbox's start takes seconds).
var setupTimeout = func() time.Duration {
	f, err := strconv.ParseFloat(os.Getenv("TAIKAI_TEST_TIME_SCALE"), 64)
	if err != nil || f < 1 {
		f = 1
	}
	return time.Duration(f * float64(10*time.Second))
}()

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

	cfg     Config
	ctx     context.Context
	name    string
	args    []byte        // bwrap's arguments, NUL-separated, passed through a pipe
	group   *group        // nil without cgroups (polled) or before Start
	watched *group        // a copy of group for OverMemory, which teardown leaves alone
	started bool          //
	mu      sync.Mutex    // guards pidfd, peak and cpu
	pidfd   int           // the sandbox's init (pid 1 of its namespace); -1 if none
	peak    int64         // polled: the highest memory measured
	cpu     time.Duration // polled: the CPU time measured last
	overMem atomic.Bool
	ln      net.Listener

	exited chan struct{} // the engine's main process has exited; usage is final
	done   chan struct{} // and everything is gone and cleaned up
	err    error         // Wait's result, valid after exited
	usage  Report
	stop   sync.Once
}

var counter atomic.Int64

// notInName is what a sandbox's name (its cgroups') leaves out of
// Config.Name.
var notInName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Command prepares a sandbox that runs argv. argv[0] is looked up in the
// sandbox's PATH. The context kills the sandbox when done.
func Command(ctx context.Context, cfg Config, argv ...string) (*Sandbox, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if _, err := affinityFilter(); err != nil {
		return nil, err
	}
	bwrap, err := lookBwrap()
	if err != nil {
		return nil, errors.New("sandbox: bwrap not found: install bubblewrap (apt-get install bubblewrap)")
	}
	args, err := cfg.bwrapArgs()
	if err != nil {
		return nil, err
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
	s := &Sandbox{cfg: cfg, ctx: ctx, args: []byte(buf.String()), pidfd: -1, exited: make(chan struct{}), done: make(chan struct{})}
	s.name = fmt.Sprintf("%d-%d", os.Getpid(), counter.Add(1))
	if n := notInName.ReplaceAllString(cfg.Name, ""); n != "" {
		s.name += "-" + n
	}
	// The namespaces and --die-with-parent also come before --args: a
	// server killed before it has written the arguments leaves bwrap
	// reading end of file there, and bwrap would then go on with what its
	// command line says alone. With these, it could at worst start the
	// command in an empty root, where nothing can run.
	chain := append([]string{bwrap, "--unshare-all"}, bwrapFlags...)
	chain = append(chain, helperArgs(&cfg, argv)...)
	s.Cmd = exec.CommandContext(ctx, chain[0], chain[1:]...)
	s.Cmd.Env = []string{} // bwrap itself gets nothing either
	s.Cmd.Dir = "/"
	s.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 && (cfg.UID != 0 || cfg.GID != 0) {
		s.Cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID)}
	}
	s.Cmd.WaitDelay = 2 * time.Second
	return s, nil
}

// executable is the default helper: the running binary.
var executable = os.Executable

// lookBwrap finds bwrap in the server's PATH, once.
var lookBwrap = sync.OnceValues(func() (string, error) { return exec.LookPath("bwrap") })

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
	if cfg.CPUQuota == 0 {
		cfg.CPUQuota = DefaultCPUQuota
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
	if cfg.Port < 0 || cfg.Port > 65535 {
		return fmt.Errorf("sandbox: bad port %d", cfg.Port)
	}
	if cfg.Helper == "" {
		self, err := executable()
		if err != nil {
			return fmt.Errorf("sandbox: helper: %w", err)
		}
		cfg.Helper = self
	}
	if small := filepath.Join(filepath.Dir(cfg.Helper), HelperProgram); unix.Access(small, unix.X_OK) == nil {
		cfg.small = small
	}
	// What bwrap mounts it opens as the engine's uid: as the server's own
	// uid, anything the server reaches; as another (a root server's), only
	// what that uid may reach, and the rest is staged (see stage).
	for _, d := range []struct {
		path       *string
		what, name string
		write, own bool
	}{
		{&cfg.EngineDir, "engine dir", "engine", false, false},
		{&cfg.ScratchDir, "scratch dir", "scratch", true, true},
		{&cfg.FolderDir, "folder", "folder", true, true},
		{&cfg.Helper, "helper", "taikai", false, false},
		{&cfg.small, "small helper", "helper", false, false},
	} {
		if *d.path == "" {
			continue
		}
		abs, err := filepath.Abs(*d.path)
		if err != nil {
			return err
		}
		*d.path = abs
		if d.own && os.Geteuid() == 0 {
			if err := os.Chown(abs, cfg.UID, cfg.GID); err != nil {
				return fmt.Errorf("sandbox: %s: %w", d.what, err)
			}
		}
		if cfg.UID == os.Geteuid() {
			continue
		}
		if err := accessible(abs, cfg.UID, cfg.GID, d.write); err != nil {
			return fmt.Errorf("sandbox: %s: %w", d.what, err)
		}
		if !searchable(filepath.Dir(abs), cfg.UID, cfg.GID) {
			// A root server's file under a private directory (/root is
			// 0700): bwrap gets it at a staged path instead.
			cfg.staged = append(cfg.staged, [2]string{abs, d.name})
			*d.path = filepath.Join(stageDir, d.name)
		}
	}
	return nil
}

// accessible checks that uid/gid may use p itself (and write it if write):
// the engine uses it as that user.
func accessible(p string, uid, gid int, write bool) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	want := os.FileMode(5)
	switch {
	case write:
		want = 7
	case !st.IsDir():
		want = 1 // the helper: executable
	}
	if !allows(st, uid, gid, want) {
		return fmt.Errorf("%s is not accessible to uid %d (mode %v)", p, uid, st.Mode().Perm())
	}
	return nil
}

// searchable tells whether uid/gid may search dir and every directory
// above it.
func searchable(dir string, uid, gid int) bool {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || !allows(st, uid, gid, 1) {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// onOwnThread runs f locked to an OS thread that ends with it (with what f
// changed of the thread: its mount namespace), never the main thread,
// which Go never ends.
func onOwnThread(f func()) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// While this goroutine holds the main thread, the next one cannot
		// get it.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			f()
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	f()
}

// stageDir is where a root server's sandbox finds, in a mount namespace of
// its own, what its engine's uid could not reach at its host path.
const stageDir = "/run/taikai-stage"

// stage is the way around bwrap resolving every path it mounts as the
// engine's uid (65534 for a root server; even --ro-bind-fd resolves its
// descriptor's path again): on the calling thread, which must be locked to
// it and start bwrap, it makes a mount namespace of its own (private: the
// host sees nothing of it), mounts a tmpfs on stageDir there and binds
// each staged path (opened as root, from any directory) into it, where
// bwrap finds it. bwrap's own mount namespace is made from this one, and
// both end with bwrap (its parent-death signal is this thread's).
func (cfg *Config) stage() error {
	if err := os.MkdirAll(stageDir, 0o755); err != nil {
		return err
	}
	if !searchable(stageDir, cfg.UID, cfg.GID) {
		return fmt.Errorf("%s is not searchable by uid %d", stageDir, cfg.UID)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare the mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", stageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", stageDir, err)
	}
	for _, p := range cfg.staged {
		host, at := p[0], filepath.Join(stageDir, p[1])
		st, err := os.Stat(host)
		if err != nil {
			return err
		}
		if st.IsDir() {
			err = os.Mkdir(at, 0o755)
		} else {
			err = os.WriteFile(at, nil, 0o755)
		}
		if err != nil {
			return err
		}
		if err := unix.Mount(host, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("stage %s: %w", host, err)
		}
	}
	return nil
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

// bwrapArgs builds bwrap's arguments.
func (cfg *Config) bwrapArgs() ([]string, error) {
	a := []string{
		// The network namespace is set on the command line (see Command).
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try", "--hostname", "engine",
		// No nested user namespaces: they are the usual door to kernel bugs
		// reachable without privilege (max_user_namespaces=0 inside).
		"--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		// sched_setaffinity and io_uring_setup refused (affinityFilter):
		// the engine stays on the CPUs it was started on (see startPinned).
		"--seccomp", strconv.Itoa(seccompFd),
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
	a = append(a, "--ro-bind", cfg.Helper, HelperPath, "--proc", "/proc", "--dev", "/dev")
	if cfg.small != "" {
		a = append(a, "--ro-bind", cfg.small, SmallHelperPath)
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
// cgroup, limits and (if Config.Port is set) listener are in place before
// the engine's first instruction.
func (s *Sandbox) Start() error {
	if s.started {
		return errors.New("sandbox: already started")
	}
	s.started = true
	if cg := hostCgroups(); cg.none == "" {
		g, err := newGroup(cg, s.name, &s.cfg)
		if err != nil {
			close(s.exited)
			close(s.done)
			return fmt.Errorf("sandbox: %w", err)
		}
		s.group = g
		s.watched = &group{v2: g.v2, dirs: maps.Clone(g.dirs)}
	}
	var init int
	var err error
	if len(s.cfg.staged) == 0 {
		init, err = s.start()
	} else {
		started := make(chan error)
		go onOwnThread(func() {
			err := s.cfg.stage()
			if err == nil {
				init, err = s.start()
			}
			started <- err
			if err == nil {
				<-s.exited
			}
		})
		err = <-started
	}
	if err != nil {
		s.abort()
		return fmt.Errorf("sandbox: %w", err)
	}
	if s.group == nil {
		go s.poll(init)
	}
	go s.wait()
	return nil
}

// start runs bwrap, which sets up the namespaces and blocks before running
// the helper until released; it returns the host pid of the sandbox's init.
func (s *Sandbox) start() (int, error) {
	// ours are the server's ends; theirs are bwrap's (fds 3, 4, 5, 6 and,
	// with a port, 7), closed here once bwrap has them.
	var ours, theirs []*os.File
	defer func() {
		for _, f := range append(ours, theirs...) {
			f.Close()
		}
	}()
	for range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			return 0, err
		}
		ours, theirs = append(ours, r, w), append(theirs, r, w)
	}
	argsR, argsW := ours[0], ours[1]
	infoR, infoW := ours[2], ours[3]
	blockR, blockW := ours[4], ours[5]
	// bwrap's --block-fd is the pipe reopened read-write: it never reads
	// end of file. bwrap's init has no parent-death signal until it has read
	// that byte, so a server killed during the setup (taking bwrap with it)
	// leaves the init orphaned; bwrap runs the command whatever the read
	// returned, and with a plain read end the orphan would run the engine
	// with nobody watching. As its own writer it waits for ever instead
	// (asleep, running nothing) until Sweep kills it at the next start.
	blockRW, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", blockR.Fd()), os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("reopen the block pipe: %w", err)
	}
	ours, theirs = []*os.File{argsW, infoR, blockW, blockR}, []*os.File{argsR, infoW, blockRW}
	filter, err := seccompPipe()
	if err != nil {
		return 0, err
	}
	theirs = append(theirs, filter) // seccompFd

	var seatR *os.File // the server's end of the helper's socket pair
	if s.cfg.Port != 0 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, err
		}
		// Non-blocking before NewFile, so that the file is pollable and
		// takes a read deadline.
		nbErr := unix.SetNonblock(fds[0], true)
		seatR = os.NewFile(uintptr(fds[0]), "seat")
		ours, theirs = append(ours, seatR), append(theirs, os.NewFile(uintptr(fds[1]), "seat"))
		if nbErr != nil {
			return 0, nbErr
		}
	}
	s.Cmd.ExtraFiles = theirs
	if s.group != nil && s.group.v2 && !noClone3.Load() {
		// bwrap is born in the sandbox's cgroup (clone3's CLONE_INTO_CGROUP).
		f, err := s.group.fd()
		if err != nil {
			return 0, err
		}
		defer f.Close()
		s.Cmd.SysProcAttr.UseCgroupFD, s.Cmd.SysProcAttr.CgroupFD = true, int(f.Fd())
	}
	closeOnExec()
	err = s.fork()
	if err != nil && s.Cmd.SysProcAttr.UseCgroupFD && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)) {
		// clone3 refused: Docker's default seccomp profile answers ENOSYS
		// (others EPERM) and Go does not fall back. bwrap is then moved
		// into its cgroup below, as on v1; an exec.Cmd starts only once.
		noClone3.Store(true)
		s.Cmd = s.recommand()
		s.Cmd.ExtraFiles = theirs
		err = s.fork()
	}
	for _, f := range theirs {
		f.Close()
	}
	theirs = nil
	if err != nil {
		return 0, err
	}
	// Without CLONE_INTO_CGROUP (v1, or clone3 refused), bwrap is moved into
	// its cgroups before it has its arguments (it reads them first thing),
	// so everything it clones is born in them.
	if s.group != nil && !s.Cmd.SysProcAttr.UseCgroupFD {
		if err := s.group.add(s.Cmd.Process.Pid); err != nil {
			return 0, err
		}
	}
	if _, err := argsW.Write(s.args); err != nil { // fits the pipe: see Command
		return 0, fmt.Errorf("pass bwrap its arguments: %w", err)
	}
	argsW.Close()
	// bwrap reports the host pid of the namespace's init once namespaces exist.
	_ = infoR.SetReadDeadline(time.Now().Add(setupTimeout))
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPid <= 0 {
		return 0, fmt.Errorf("bwrap did not set up the sandbox (see its output): %v", err)
	}
	pidfd, err := unix.PidfdOpen(info.ChildPid, 0)
	if err != nil {
		return 0, fmt.Errorf("pidfd_open: %w", err)
	}
	s.mu.Lock()
	s.pidfd = pidfd
	s.mu.Unlock()
	// The pidfd is bwrap's child, not a process that took a dead one's pid.
	if ppid, err := parentPid(info.ChildPid); err != nil || ppid != s.Cmd.Process.Pid {
		return 0, fmt.Errorf("bwrap's sandbox init %d is gone (see the output)", info.ChildPid)
	}
	if _, err := blockW.Write([]byte{1}); err != nil {
		return 0, fmt.Errorf("release the sandbox: %w", err)
	}
	if seatR != nil {
		ln, err := receiveListener(seatR, time.Now().Add(setupTimeout))
		if err != nil {
			return 0, err
		}
		s.ln = ln
	}
	return info.ChildPid, nil
}

// seccompPipe is a pipe holding the seccomp filter, written and closed:
// bwrap reads it to its end.
func seccompPipe() (*os.File, error) {
	filter, err := affinityFilter()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(filter) // a few hundred bytes: it fits the pipe
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("write the seccomp filter: %w", err)
	}
	return r, nil
}

// forkThread is one OS thread, locked for the life of the process, on
// which ForkStart starts processes that have a parent-death signal. Linux
// sends that signal when the thread that forked the child ends, not the
// process. Go ends a thread when a goroutine locked to it returns: a
// sandbox's stage thread (onOwnThread) is one. Its goroutine locks
// whatever thread it starts on, and that thread may already have forked
// other engines. When that sandbox ended, those engines were killed: an
// unsandboxed engine of a match lost by "disconnect" while a root
// process's staged sandboxes came and went. No other goroutine runs on
// this thread, and its goroutine never returns.
var forkThread struct {
	once sync.Once
	jobs chan func()
}

// ForkStart starts cmd, with the CPU affinity cpus (unchanged if empty), on
// the fork thread, so that its parent-death signal comes only when the
// process dies. Every process started with one (Pdeathsig) must start here,
// except the bwrap of a staged sandbox, which starts on its stage thread.
func ForkStart(cmd *exec.Cmd, cpus []int) error {
	forkThread.once.Do(func() {
		forkThread.jobs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: this goroutine never returns
			for job := range forkThread.jobs {
				job()
			}
		}()
	})
	errc := make(chan error, 1)
	forkThread.jobs <- func() { errc <- startPinned(cmd, cpus) }
	return <-errc
}

// fork starts bwrap: on the stage thread of a staged sandbox (bwrap takes
// its mount namespace, and its parent-death signal ends with it), on the
// fork thread otherwise.
func (s *Sandbox) fork() error {
	if len(s.cfg.staged) > 0 {
		return startPinned(s.Cmd, s.cfg.CPUs)
	}
	return ForkStart(s.Cmd, s.cfg.CPUs)
}

// startPinned starts cmd with the CPU affinity cpus (unchanged if empty):
// bwrap, and all it forks, inherits the affinity of the thread that forks
// it, set for that moment (the seccomp filter keeps the engine from
// changing it). Go makes no new thread from a locked one, so no other
// thread gets it.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	restore, err := PinThread(cpus)
	if err != nil {
		return &PinError{CPUs: cpus, Err: err}
	}
	defer restore()
	return cmd.Start()
}

// PinError is a start that failed before the fork: the forking thread's
// CPU affinity could not be set. It does not unwrap to the errno, which
// start must not take for clone3's refusal.
type PinError struct {
	CPUs []int
	Err  error
}

func (e *PinError) Error() string { return fmt.Sprintf("pin to CPUs %s: %v", cpuList(e.CPUs), e.Err) }

// PinThread locks the calling goroutine to its OS thread and sets that
// thread's CPU affinity to cpus; restore puts the affinity back and unlocks
// the thread. A process forked meanwhile inherits the affinity (how engines
// are started on their CPUs). The thread lives on after restore, not ended:
// a child's parent-death signal is the thread's. Should the affinity not
// come back, the thread runs on with fewer CPUs, which is only slower.
func PinThread(cpus []int) (restore func(), err error) {
	var set, old unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// noClone3 is set once clone3 was refused (see start); tests set it to
// take that path.
var noClone3 atomic.Bool

// recommand is a fresh copy of s.Cmd, not started, without
// CLONE_INTO_CGROUP.
func (s *Sandbox) recommand() *exec.Cmd {
	c := exec.CommandContext(s.ctx, s.Cmd.Path, s.Cmd.Args[1:]...)
	c.Env, c.Dir, c.WaitDelay = s.Cmd.Env, s.Cmd.Dir, s.Cmd.WaitDelay
	c.Stdin, c.Stdout, c.Stderr = s.Cmd.Stdin, s.Cmd.Stdout, s.Cmd.Stderr
	attr := *s.Cmd.SysProcAttr
	attr.UseCgroupFD, attr.CgroupFD = false, 0
	c.SysProcAttr = &attr
	return c
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
	ps := s.Cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s.usage.Signal = int(ws.Signal())
		s.usage.ExitCode = 128 + s.usage.Signal
	} else {
		s.usage.ExitCode = ps.ExitCode()
		if c := s.usage.ExitCode; c > 128 && c < 128+65 {
			s.usage.Signal = c - 128
		}
	}
	// The engine's main process has exited (bwrap reports that at once):
	// the rest of the sandbox is killed, and what it used is final. The
	// kernel's teardown of its namespaces and the removal of its cgroup,
	// a few ms, go on after Wait and Stop have returned; Done says when
	// everything is gone.
	s.killInit()
	if s.group != nil {
		s.group.usage(&s.usage)
		s.usage.OOMKilled = s.usage.OOMKilled || s.overMem.Load()
	} else {
		s.mu.Lock()
		s.usage.CPUTime = s.cpu
		s.usage.PeakMemory = s.peak
		s.mu.Unlock()
		s.usage.OOMKilled = s.overMem.Load()
	}
	close(s.exited)
	s.teardown()
	close(s.done)
}

// teardown kills what is left and removes the cgroup.
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
	if s.group != nil {
		_ = s.group.kill(time.Now().Add(5 * time.Second))
		_ = s.group.removeWithin(2 * time.Second)
	}
	s.mu.Lock()
	if s.pidfd >= 0 {
		unix.Close(s.pidfd)
		s.pidfd = -1
	}
	s.mu.Unlock()
}

// Listener is the server's listener on 127.0.0.1:Config.Port inside the
// sandbox (nil without a port). The caller owns it and must close it: it
// stays open after the sandbox has ended, so that the connection of an engine
// that connected, wrote and exited can still be accepted.
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
	if !s.started {
		return errors.New("sandbox: not started")
	}
	<-s.exited
	return s.err
}

// Stop gives the engine grace to exit by itself, then kills every process of
// the sandbox and waits for the end. It is safe to call more than once and
// concurrently with Wait.
func (s *Sandbox) Stop(grace time.Duration) {
	if !s.started {
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

// OverMemory reports whether the sandbox went over its memory limit while it
// runs (Report().OOMKilled after): the kernel killed one of its processes
// (cgroup), or polling found it over and killed it. On cgroup v1 the kernel
// kills only the biggest process, which may be a child of the engine: a
// caller that polls this can end the game at once.
func (s *Sandbox) OverMemory() bool {
	select {
	case <-s.exited:
		return s.usage.OOMKilled
	default:
	}
	if s.watched != nil && s.watched.overMemory() {
		s.overMem.Store(true) // v1's socket buffers are gone once it is killed
	}
	return s.overMem.Load()
}

// Report reports how the sandbox ended; Exited is false until it has.
func (s *Sandbox) Report() Report {
	select {
	case <-s.exited:
		return s.usage
	default:
		return Report{}
	}
}
