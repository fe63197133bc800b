package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
	"github.com/taikai-dev/taikai/web"
)

const serveUsage = `usage: taikai serve [flags]

Runs the server: the REST API, the round-robin scheduler, the referee (engines
connect to it on 127.0.0.1) and the live dashboard. Every flag can also be set
from the environment; a flag given on the command line wins.

Environment:
  TAIKAI_ADDR         same as --addr
  TAIKAI_DB           same as --db
  TAIKAI_DATA         same as --data
  TAIKAI_DEMO         1 or true: same as --demo
  TAIKAI_ADMIN_TOKEN  the admin token for write API calls; if unset, one is
                      generated, stored in the database and printed once
  TAIKAI_LOG_FORMAT   same as --log-format
  TAIKAI_AFFINITY     1 or true: same as --affinity
  TAIKAI_SANDBOX      same as --sandbox
  TAIKAI_ENGINE_CPUS  same as --engine-cpus
  TAIKAI_NATS         same as --nats
  TAIKAI_NATS_EMBEDDED same as --nats-embedded
  TAIKAI_NATS_TOKEN   the token of the NATS server (embedded: the one it
                      requires); never a flag, so that ps does not show it
  TAIKAI_WORKER_JOIN_TOKEN with --nats-embedded: workers enroll with it for
                      credentials of their own (taikai worker --enroll), and
                      the embedded NATS takes nothing else
  TAIKAI_WORKER_TIMEOUT same as --worker-timeout
  TAIKAI_MAX_CONNS, TAIKAI_MAX_CONNS_PER_ADDR  same as --max-conns, --max-conns-per-addr
  TAIKAI_PARTICIPANT_MAX_MEMORY_MB, TAIKAI_PARTICIPANT_MAX_PROCS,
  TAIKAI_PARTICIPANT_MAX_CONNECT  same as --participant-max-memory-mb, -procs, -connect

With --nats or --nats-embedded the games are played by 'taikai worker'
processes (on this machine or others) that take them from a NATS JetStream
work queue; without, the server plays them itself.

Flags:
`

// serveConfig is what `taikai serve` is told.
type serveConfig struct {
	addr      string
	db        string
	data      string
	demo      bool
	logFormat string
	token     string
	affinity  bool
	sandbox   string // auto, on or off
	// engineCPUs is the CPU time each sandboxed engine may use, in CPUs
	// (0: no quota).
	engineCPUs float64

	nats          string        // NATS URL: games go to workers
	natsEmbedded  string        // address of the embedded NATS server to start
	workerTimeout time.Duration // how long a silent worker keeps its game

	limits web.ParticipantLimits // the most a participant may give their engine
	play   web.PlayOptions       // who may play engines in the browser (issue 39)

	maxConns, maxConnsPerAddr int    // HTTP connections kept open; 0: from the descriptor limit
	publicURL                 string // the address students reach the server at, for invitation links
}

// affinityUsage is the help of --affinity, in serve and match.
const affinityUsage = "start both engines of each game on one CPU, taking the CPUs in turn (Linux; the affinity is set when an engine starts, as fastchess's -use-affinity; not for engines that think with several threads)"

// envBool reads a boolean environment variable, def if it is unset.
func envBool(key string, def bool) (bool, error) {
	v, err := strconv.ParseBool(envOr(key, strconv.FormatBool(def)))
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1, true, 0 or false", key, os.Getenv(key))
	}
	return v, nil
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func parseServe(args []string, stderr io.Writer) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage); fs.PrintDefaults() }
	demo, err := envBool("TAIKAI_DEMO", false)
	if err != nil {
		return nil, err
	}
	fs.StringVar(&c.addr, "addr", envOr("TAIKAI_ADDR", "127.0.0.1:8080"), "HTTP listen `address`")
	fs.StringVar(&c.publicURL, "public-url", envOr("TAIKAI_PUBLIC_URL", ""), "the `URL` participants reach this server at (https://taikai.example.ac.jp): invitation links start with it (default: the host the admin's browser used)")
	fs.StringVar(&c.db, "db", envOr("TAIKAI_DB", "taikai.db"), "SQLite database `file`")
	fs.StringVar(&c.data, "data", envOr("TAIKAI_DATA", "./data"), "`directory` for uploaded engines and engine logs")
	fs.BoolVar(&c.demo, "demo", demo, "register the built-in engines and start a demo round robin per game")
	affinity, err := envBool("TAIKAI_AFFINITY", false)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&c.affinity, "affinity", affinity, affinityUsage)
	fs.StringVar(&c.logFormat, "log-format", envOr("TAIKAI_LOG_FORMAT", "text"), "log `format`: text or json")
	fs.StringVar(&c.sandbox, "sandbox", envOr("TAIKAI_SANDBOX", "auto"), "engine `sandbox`: auto or on (every engine runs in a sandbox; if this host cannot, only the built-in engines run, and the reason is logged and shown), or off (engines run with the server's rights: only for programs you trust)")
	engineCPUs, cerr := strconv.ParseFloat(envOr("TAIKAI_ENGINE_CPUS", "1"), 64)
	if cerr != nil {
		return nil, fmt.Errorf("TAIKAI_ENGINE_CPUS=%q: want a number of CPUs", os.Getenv("TAIKAI_ENGINE_CPUS"))
	}
	fs.Float64Var(&c.engineCPUs, "engine-cpus", engineCPUs, "the CPU time each sandboxed engine may use, in `CPUs` (1.5: one and a half CPUs' worth), all its processes together, where the sandbox has a cgroup; 0: no quota")
	fs.StringVar(&c.nats, "nats", envOr("TAIKAI_NATS", ""), "NATS `URL` (nats://host:4222): queue the games for 'taikai worker' processes instead of playing them here")
	fs.StringVar(&c.natsEmbedded, "nats-embedded", envOr("TAIKAI_NATS_EMBEDDED", ""), "start a NATS server with JetStream inside this process, listening on `address` (host:port, 0.0.0.0:4222 for other machines), its data under --data/nats, and queue the games for workers on it")
	workerTimeout, err := time.ParseDuration(envOr("TAIKAI_WORKER_TIMEOUT", "30s"))
	if err != nil {
		return nil, fmt.Errorf("TAIKAI_WORKER_TIMEOUT: %w", err)
	}
	fs.DurationVar(&c.workerTimeout, "worker-timeout", workerTimeout, "a worker silent this `long` (dead, or cut off) loses its game, which another worker plays again from the start")
	envInt := func(key string, def int) int {
		if err != nil {
			return def
		}
		v, perr := strconv.Atoi(envOr(key, strconv.Itoa(def)))
		if perr != nil {
			err = fmt.Errorf("%s=%q: want a whole number", key, os.Getenv(key))
		}
		return v
	}
	fs.IntVar(&c.maxConns, "max-conns", envInt("TAIKAI_MAX_CONNS", 0), "HTTP connections kept open at once, `n` in all (0: a quarter of the open-files limit, at most 10000; the rest is kept for the games)")
	fs.IntVar(&c.maxConnsPerAddr, "max-conns-per-addr", envInt("TAIKAI_MAX_CONNS_PER_ADDR", 0), "HTTP connections kept open from one client address (0: a quarter of --max-conns, at least 8)")
	d := web.DefaultParticipantLimits
	fs.IntVar(&c.limits.MemoryMB, "participant-max-memory-mb", envInt("TAIKAI_PARTICIPANT_MAX_MEMORY_MB", d.MemoryMB), "the most memory (`MiB`) a participant may give their own engine (memory_mb)")
	fs.IntVar(&c.limits.Engines, "max-engines-per-participant", envInt("TAIKAI_MAX_ENGINES_PER_PARTICIPANT", d.Engines), "the most engines (`n`) a participant may have registered at once; a new version of one does not count")
	fs.IntVar(&c.limits.MaxProcs, "participant-max-procs", envInt("TAIKAI_PARTICIPANT_MAX_PROCS", d.MaxProcs), "the most processes and threads (`n`) a participant may give their own engine (max_procs)")
	defConnect, cerr := time.ParseDuration(envOr("TAIKAI_PARTICIPANT_MAX_CONNECT", (time.Duration(d.ConnectTimeoutMS) * time.Millisecond).String()))
	if cerr != nil && err == nil {
		err = fmt.Errorf("TAIKAI_PARTICIPANT_MAX_CONNECT: %w", cerr)
	}
	if err != nil {
		return nil, err
	}
	maxConnect := fs.Duration("participant-max-connect", defConnect, "the longest connect `time` a participant may give their own engine (connect_timeout_ms)")
	if err := playFlags(fs, &c.play); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := checkPlay(c.play); err != nil {
		return nil, err
	}
	c.limits.ConnectTimeoutMS = maxConnect.Milliseconds()
	if c.maxConns < 0 || c.maxConnsPerAddr < 0 {
		return nil, fmt.Errorf("--max-conns %d, --max-conns-per-addr %d: want 0 (automatic) or more", c.maxConns, c.maxConnsPerAddr)
	}
	if c.limits.MemoryMB < engines.MinMemoryMB || c.limits.MemoryMB > engines.MaxMemoryMB {
		return nil, fmt.Errorf("--participant-max-memory-mb %d: want %d-%d", c.limits.MemoryMB, engines.MinMemoryMB, engines.MaxMemoryMB)
	}
	if c.limits.MaxProcs < engines.MinProcs || c.limits.MaxProcs > engines.MaxProcs {
		return nil, fmt.Errorf("--participant-max-procs %d: want %d-%d", c.limits.MaxProcs, engines.MinProcs, engines.MaxProcs)
	}
	if c.limits.ConnectTimeoutMS < 1000 || c.limits.ConnectTimeoutMS > engines.MaxConnectTimeoutMS {
		return nil, fmt.Errorf("--participant-max-connect %v: want 1s-%v", *maxConnect, time.Duration(engines.MaxConnectTimeoutMS)*time.Millisecond)
	}
	if c.engineCPUs < 0 || c.engineCPUs > 1024 {
		return nil, fmt.Errorf("--engine-cpus %g: want 0 (no quota) to 1024", c.engineCPUs)
	}
	if c.limits.Engines < 1 {
		return nil, fmt.Errorf("--max-engines-per-participant %d: want at least 1", c.limits.Engines)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.nats != "" && c.natsEmbedded != "" {
		return nil, errors.New("--nats and --nats-embedded: give one (the embedded server is the one the workers dial)")
	}
	join := os.Getenv(fleet.JoinTokenEnv)
	if join != "" && c.natsEmbedded == "" {
		return nil, fmt.Errorf("%s needs --nats-embedded: workers enroll on the server's own NATS server (an external one, --nats, keeps its own users)", fleet.JoinTokenEnv)
	}
	if join != "" && len(join) < cluster.MinJoinToken {
		return nil, fmt.Errorf("%s: %d characters, want at least %d (it makes new workers: openssl rand -hex 32)", fleet.JoinTokenEnv, len(join), cluster.MinJoinToken)
	}
	if c.natsEmbedded != "" && os.Getenv(cluster.TokenEnv) == "" && join == "" && !loopbackAddr(c.natsEmbedded) {
		return nil, fmt.Errorf("--nats-embedded %s listens beyond this machine: set %s (workers enroll with it for credentials of their own) or %s (the same on every worker), or anyone who reaches the port can hand in results and queue commands for the workers", c.natsEmbedded, fleet.JoinTokenEnv, cluster.TokenEnv)
	}
	if c.workerTimeout < time.Second {
		return nil, fmt.Errorf("--worker-timeout %v: want at least 1s", c.workerTimeout)
	}
	if !slices.Contains(sandboxModes, c.sandbox) {
		return nil, fmt.Errorf("--sandbox (or TAIKAI_SANDBOX) %q: want auto, on or off", c.sandbox)
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return nil, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
	}
	if c.publicURL != "" {
		u, err := url.Parse(c.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("--public-url (or TAIKAI_PUBLIC_URL) %q: want http:// or https:// and a host, like https://taikai.example.ac.jp", c.publicURL)
		}
		c.publicURL = strings.TrimSuffix(u.String(), "/")
	}
	c.token = os.Getenv("TAIKAI_ADMIN_TOKEN")
	return c, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseServe(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "taikai serve:", err)
		return 2
	}
	app := &server{cfg: cfg, stderr: stderr}
	if err := app.Open(ctx); err != nil {
		fmt.Fprintln(stderr, "taikai serve:", err)
		app.Close()
		return 1
	}
	err = app.Run(ctx)
	app.Close()
	if err != nil {
		fmt.Fprintln(stderr, "taikai serve:", err)
		return 1
	}
	return 0
}

// server is a running `taikai serve`; tests run it in-process.
type server struct {
	cfg        *serveConfig
	stderr     io.Writer
	log        *slog.Logger
	enginesDir string // absolute: uploaded engines' directories

	db     *storage.DB
	dbLock *os.File // the database's lock file, held while the server runs
	live   *web.Live
	web    *web.Server       // stopped first: its checks play games
	nats   *cluster.Embedded // the embedded NATS server, nil if none
	// workerCreds are the workers' own NATS users (embedded NATS only).
	workerCreds *cluster.Credentials
	nc          *nats.Conn
	cluster     *cluster.Server // the workers' queue, nil when the server plays
	service     *tournament.Service
	// launcher starts the engines; Close waits for their sandboxes' teardown.
	launcher *engines.Launcher
	ln       net.Listener
	http     *http.Server
}

// Open opens the database, recovers from a crash, and starts listening.
func (a *server) Open(ctx context.Context) error {
	var h slog.Handler = slog.NewTextHandler(a.stderr, nil)
	if a.cfg.logFormat == "json" {
		h = slog.NewJSONHandler(a.stderr, nil)
	}
	a.log = slog.New(h)
	// No core dumps, no ptrace or /proc/<pid>/environ|mem by other users'
	// processes: the server holds the admin token and the database.
	if err := nonDumpable(); err != nil {
		a.log.Warn("cannot make the server non-dumpable", "err", err)
	}
	data, err := filepath.Abs(a.cfg.data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// One live server per database (issue 37: two compose projects on one
	// volume): a second one is refused, naming the first.
	if a.dbLock, err = lockDatabase(a.cfg.db); err != nil {
		return err
	}
	if a.db, err = storage.Open(ctx, a.cfg.db); err != nil {
		return err
	}
	n, err := a.db.Recover(ctx)
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	if n > 0 {
		a.log.Warn("games were running when the server stopped; they will be played again", "games", n)
	}
	token, err := a.adminToken(ctx)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	launcher := &engines.Launcher{Self: self, Log: a.log, FoldersDir: filepath.Join(data, "folders"), CPUQuota: a.cfg.engineCPUs}
	if a.cfg.engineCPUs == 0 {
		launcher.CPUQuota = -1 // none
	}
	a.enginesDir = filepath.Join(data, "engines") // web/upload.go puts uploads there
	if err := os.MkdirAll(a.enginesDir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := web.RemoveUploadLeftovers(a.enginesDir); err != nil {
		a.log.Warn("cannot remove what killed uploads left", "err", err)
	}
	a.sandbox(launcher)
	a.launcher = launcher
	runner := &tournament.Runner{Launcher: launcher, DataDir: data, Log: a.log, Affinity: a.cfg.affinity, People: &tournament.People{}}
	metrics := web.NewMetrics()
	a.live = web.NewLive(a.db, a.log)
	a.service = &tournament.Service{
		Store:   a.db,
		Runner:  runner,
		Sink:    sinks{a.live, metrics},
		DataDir: data,
		Log:     a.log,
	}
	if err := a.openCluster(ctx, data); err != nil {
		return err
	}
	srv := &web.Server{DB: a.db, Service: a.service, Live: a.live, TokenHash: token, DataDir: data, Log: a.log, Metrics: metrics,
		Allow: launcher.Allowed, Sandbox: launcher.SandboxState(), ParticipantLimits: a.cfg.limits,
		PublicURL: a.cfg.publicURL, Play: a.cfg.play}
	if launcher.SandboxState() == "on" {
		g := sandbox.HostGuarantees()
		srv.SandboxLimits = &g
	}
	// Only when set: a nil pointer in an interface is not a nil interface.
	if a.cluster != nil {
		srv.Workers = a.cluster
		metrics.WatchWorkers(a.cluster)
	}
	if a.workerCreds != nil {
		srv.WorkerCredentials = a.workerCreds
	}
	if launcher.SandboxErr != nil {
		srv.SandboxError = launcher.SandboxErr.Error()
	}
	a.web = srv
	if err := a.db.AbandonChecks(ctx); err != nil {
		a.log.Warn("cannot mark the checks a stopped server left", "err", err)
	}
	handler, err := srv.Handler()
	if err != nil {
		return fmt.Errorf("dashboard templates: %w", err)
	}
	a.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // uploads of up to 64 MiB on slow links
		// Idle keep-alive connections hold descriptors the games need.
		IdleTimeout: 30 * time.Second,
	}
	ln, err := net.Listen("tcp", a.cfg.addr)
	if err != nil {
		return err
	}
	total, perAddr := connCaps(noFileLimit(a.log), a.cfg.maxConns, a.cfg.maxConnsPerAddr)
	a.log.Info("HTTP connections capped", "total", total, "per_address", perAddr)
	a.ln = web.LimitListener(ln, total, perAddr)
	return nil
}

// noFileLimit raises the server's open-files soft limit to its hard limit
// (the Go runtime does so too, on Linux; this says it, and covers the rest)
// and returns it.
func noFileLimit(log *slog.Logger) uint64 {
	cur, hard, err := raiseNoFile()
	if err != nil {
		log.Warn("open-files limit not raised", "soft", cur, "hard", hard, "err", err)
	}
	log.Info("open-files limit", "limit", cur)
	return cur
}

// connCaps are the HTTP connection caps for a descriptor limit: unless set,
// a quarter of the descriptors (at most 10,000), so that three quarters stay
// for the games, the database and the logs; a quarter of that per address.
func connCaps(nofile uint64, total, perAddr int) (int, int) {
	if total == 0 {
		total = int(min(max(nofile/4, 16), 10000))
	}
	if perAddr == 0 {
		perAddr = max(total/4, 8)
	}
	return total, min(perAddr, total)
}

// loopbackAddr reports whether a host:port listens on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openCluster connects to NATS (or starts the embedded server) when told to,
// and hands the games to the workers.
func (a *server) openCluster(ctx context.Context, data string) error {
	url := a.cfg.nats
	if a.cfg.natsEmbedded != "" {
		var err error
		if a.nats, err = cluster.StartEmbedded(a.cfg.natsEmbedded, filepath.Join(data, "nats")); err != nil {
			return err
		}
		url = a.nats.URL()
		a.log.Info("embedded nats started", "addr", a.cfg.natsEmbedded, "url", url)
	}
	if url == "" {
		return nil
	}
	var (
		err  error
		auth []nats.Option
	)
	if a.nats != nil {
		auth = append(auth, a.nats.ServerAuth())
	}
	if a.nc, err = cluster.Connect(url, "taikai-serve", a.log, auth...); err != nil {
		return err
	}
	if a.cluster, err = cluster.NewServer(ctx, a.nc, a.cfg.workerTimeout, data, a.log); err != nil {
		return err
	}
	if a.nats != nil {
		// The workers' own credentials (issue 36): issued and revoked by
		// the admin (POST/DELETE /api/workers/credentials).
		creds, err := cluster.OpenCredentials(filepath.Join(data, "nats-workers.json"), a.nats)
		if err != nil {
			return err
		}
		a.cluster.UseCredentials(creds)
		a.workerCreds = creds
		if n := len(creds.Names()); n > 0 || os.Getenv(fleet.JoinTokenEnv) != "" {
			a.log.Info("workers play with their own nats credentials; the shared token is refused", "workers", n, "enrollment", os.Getenv(fleet.JoinTokenEnv) != "")
		}
	}
	a.service.Dispatch = a.cluster
	a.log.Info("games are played by workers", "nats", url, "worker_timeout", a.cfg.workerTimeout)
	return nil
}

// sinks fans tournament events out to several sinks.
type sinks []tournament.Sink

func (s sinks) Publish(ev tournament.Event) {
	for _, x := range s {
		x.Publish(ev)
	}
}

// sandbox sets up the engine sandbox as --sandbox says, and logs its state.
func (a *server) sandbox(l *engines.Launcher) {
	engineSandbox(a.cfg.sandbox, l, a.enginesDir, a.log)
}

// engineSandbox sets up the engine sandbox of serve or worker as mode
// (--sandbox) says, and logs its state. enginesDir holds the engines'
// directories (see setupSandbox).
func engineSandbox(mode string, l *engines.Launcher, enginesDir string, log *slog.Logger) {
	if mode == "off" {
		log.Warn("engines run WITHOUT a sandbox (--sandbox=off): any engine can read the server's files and disturb other engines and the server; run only programs you trust")
		return
	}
	if err := sandbox.Sweep(); err != nil {
		log.Debug("sandbox: sweep of old cgroups", "err", err)
	}
	if err := setupSandbox(l, enginesDir); err != nil {
		l.SandboxErr = err
		level := slog.LevelWarn
		if mode == "on" {
			level = slog.LevelError
		}
		log.Log(context.Background(), level, "engine sandbox unavailable: only built-in engines will run (unsandboxed: they are taikai's own code); other engines are refused until this is fixed, or taikai is started with --sandbox=off", "err", err)
		return
	}
	g := sandbox.HostGuarantees()
	if g.Memory == "cgroup" {
		log.Info("engines run in a sandbox", "isolation", g.Isolation, "memory_limit", g.Memory, "process_limit", g.Processes, "cpus", g.CPUs, "cgroup", g.Cgroup)
		return
	}
	log.Warn("engines run in a sandbox without a cgroup: memory is measured every 100 ms and an engine over its limit is killed; for the kernel's exact limits, start the server with a delegated cgroup",
		"isolation", g.Isolation, "memory_limit", g.Memory, "process_limit", g.Processes, "cpus", g.CPUs, "why", g.Reason, "stronger", g.Stronger)
}

// Settings keys of the admin token: its hash, and the plain token that
// servers before hashing stored (migrated to the hash at start).
const (
	tokenHashKey  = "admin_token_sha256"
	plainTokenKey = "admin_token"
)

// adminToken returns the hex SHA-256 of the admin token: of
// TAIKAI_ADMIN_TOKEN (not stored), or the stored hash, or of a new token
// whose hash is stored and which is printed once. A plain token stored by an
// older server is replaced by its hash, and keeps working.
func (a *server) adminToken(ctx context.Context) (string, error) {
	if a.cfg.token != "" {
		return web.HashToken(a.cfg.token), nil
	}
	if plain, err := a.db.Setting(ctx, plainTokenKey); err != nil {
		return "", err
	} else if plain != "" {
		if err := a.db.SetSetting(ctx, tokenHashKey, web.HashToken(plain)); err != nil {
			return "", err
		}
		if err := a.db.DeleteSetting(ctx, plainTokenKey); err != nil {
			return "", err
		}
		a.log.Info("the stored admin token is now kept as a hash; it is unchanged")
	}
	h, err := a.db.Setting(ctx, tokenHashKey)
	if err != nil || h != "" {
		return h, err
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b[:])
	h = web.HashToken(t)
	if err := a.db.SetSetting(ctx, tokenHashKey, h); err != nil {
		return "", err
	}
	fmt.Fprintf(a.stderr, "\n  taikai admin token: %s\n  (generated once and printed only now: %s keeps its hash; set TAIKAI_ADMIN_TOKEN to choose your own)\n\n", t, a.db.Path())
	return h, nil
}

// Addr is the address the server listens on.
func (a *server) Addr() string { return a.ln.Addr().String() }

// Run serves until ctx is done, then shuts down: running games are aborted
// and stored as such (they are played again at the next start).
func (a *server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- a.http.Serve(a.ln) }()
	a.log.Info("taikai serving", "addr", "http://"+a.Addr(), "db", a.db.Path(), "data", a.cfg.data)
	if err := a.service.Resume(ctx); err != nil {
		return err
	}
	if a.cfg.demo {
		if err := startDemo(ctx, a.db, a.service, a.log); err != nil {
			a.log.Error("demo", "err", err)
		}
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down: aborting running games")
	a.web.Close()
	a.service.Close()
	a.launcher.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.live.Close()
	if err := a.http.Shutdown(sctx); err != nil {
		a.log.Warn("http shutdown", "err", err)
	}
	return nil
}

// Close releases what Open took.
func (a *server) Close() {
	if a.web != nil {
		a.web.Close()
	}
	if a.service != nil {
		a.service.Close()
	}
	if a.launcher != nil {
		a.launcher.Close()
	}
	if a.live != nil {
		a.live.Close()
	}
	if a.ln != nil {
		a.ln.Close()
	}
	if a.cluster != nil {
		a.cluster.Close()
	}
	if a.nc != nil {
		a.nc.Close()
	}
	if a.nats != nil {
		a.nats.Close()
	}
	if a.db != nil {
		a.db.Close()
	}
	if a.dbLock != nil {
		a.dbLock.Close() // releases the lock
	}
}

// lockDatabase takes the database's lock file (<db>.lock), an exclusive
// flock held while the server runs and released by the kernel when it
// exits, however it exits: a second server on the same file (another
// compose project on the same volume, a second `taikai serve`) is refused,
// with the pid the first wrote in it.
func lockDatabase(db string) (*os.File, error) {
	path := db + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("database lock %s: %w", path, err)
	}
	if busy, err := lockFile(f); err != nil {
		b, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if busy {
			return nil, fmt.Errorf("database %s is in use by another taikai server (pid %s, by %s): stop it first, or give this one another --db", db, strings.TrimSpace(string(b)), path)
		}
		return nil, fmt.Errorf("database lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
