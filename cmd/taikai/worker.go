package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

const workerUsage = `usage: taikai worker --nats URL [flags]

Plays games for a taikai server started with --nats or --nats-embedded: takes
them from its NATS JetStream work queue, runs the engines in this machine's
sandbox (as serve does), streams the moves to the server and hands in each
result. Engine files come from NATS by content hash and are kept in a bounded
cache. Stopping a worker (Ctrl-C, SIGTERM) hands its games back to the queue;
a worker that dies or is cut off loses them after the server's
--worker-timeout, and another worker plays them again from the start.

Environment:
  TAIKAI_NATS               same as --nats
  TAIKAI_WORKER_SECRET      this worker's own secret, issued by the server's
                            admin for its --name (POST /api/workers/credentials);
                            needed once the server gives workers their own
  TAIKAI_WORKER_ENROLL      same as --enroll
  TAIKAI_WORKER_JOIN_TOKEN  the server's join token, with --enroll
  TAIKAI_NATS_TOKEN         the shared NATS token, if the server requires one
                            and this worker has no secret of its own
  TAIKAI_WORKER_NAME        same as --name
  TAIKAI_WORKER_CONCURRENCY same as --concurrency
  TAIKAI_DATA               same as --data
  TAIKAI_SANDBOX            same as --sandbox
  TAIKAI_LOG_FORMAT         same as --log-format

Flags:
`

type workerConfig struct {
	nats        string
	enroll      string
	name        string
	concurrency int
	data        string
	sandbox     string
	logFormat   string
	cache       int
}

func parseWorker(args []string, stderr io.Writer) (*workerConfig, error) {
	c := &workerConfig{}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, workerUsage); fs.PrintDefaults() }
	host, _ := os.Hostname()
	host = sanitizeName(host)
	if len(host) > 50 {
		host = host[:50]
	}
	defName := host + "-" + strconv.Itoa(os.Getpid())
	conc, err := strconv.Atoi(envOr("TAIKAI_WORKER_CONCURRENCY", strconv.Itoa(runtime.NumCPU())))
	if err != nil {
		return nil, fmt.Errorf("TAIKAI_WORKER_CONCURRENCY=%q: want a number", os.Getenv("TAIKAI_WORKER_CONCURRENCY"))
	}
	fs.StringVar(&c.nats, "nats", envOr("TAIKAI_NATS", ""), "NATS `URL` of the server's queue (nats://host:4222; several, comma-separated)")
	fs.StringVar(&c.enroll, "enroll", envOr("TAIKAI_WORKER_ENROLL", ""), "the taikai server's `URL` (http://host:8080): without TAIKAI_WORKER_SECRET, ask it for this worker's own credentials with the join token (TAIKAI_WORKER_JOIN_TOKEN) and keep them under --data")
	fs.StringVar(&c.name, "name", envOr("TAIKAI_WORKER_NAME", defName), "worker `name` shown in the dashboard (letters, digits, - and _); default host-pid")
	fs.IntVar(&c.concurrency, "concurrency", conc, "games played at once (`N`); default the number of CPUs")
	fs.StringVar(&c.data, "data", envOr("TAIKAI_DATA", "./worker-data"), "`directory` for the engine cache and the pipe engines' folders")
	fs.IntVar(&c.cache, "cache-engines", 32, "engine directories kept in the cache (`N`); the least recently used goes first")
	fs.StringVar(&c.sandbox, "sandbox", envOr("TAIKAI_SANDBOX", "auto"), "engine `sandbox`: auto or on (engines run in a sandbox; without one this worker plays only built-in engines and leaves other games to other workers), or off (engines run with the worker's rights)")
	fs.StringVar(&c.logFormat, "log-format", envOr("TAIKAI_LOG_FORMAT", "text"), "log `format`: text or json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.nats == "":
		return nil, errors.New("--nats (or TAIKAI_NATS): the server's NATS URL is required")
	case c.enroll != "" && !httpURL(c.enroll):
		return nil, fmt.Errorf("--enroll (or TAIKAI_WORKER_ENROLL) %q: want the server's http:// or https:// URL, like http://taikai:8080", c.enroll)
	case !fleet.WorkerNames.MatchString(c.name):
		return nil, fmt.Errorf("--name %q: want 1 to 64 letters, digits, - or _", c.name)
	case c.concurrency < 1 || c.concurrency > 256:
		return nil, fmt.Errorf("--concurrency %d: want 1 to 256", c.concurrency)
	case c.cache < 1:
		return nil, fmt.Errorf("--cache-engines %d: want at least 1", c.cache)
	case !slices.Contains(sandboxModes, c.sandbox):
		return nil, fmt.Errorf("--sandbox (or TAIKAI_SANDBOX) %q: want auto, on or off", c.sandbox)
	case c.logFormat != "text" && c.logFormat != "json":
		return nil, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
	}
	return c, nil
}

// sanitizeName keeps the letters, digits, - and _ of s.
func sanitizeName(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "worker"
	}
	return string(out)
}

func runWorker(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, err := parseWorker(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "taikai worker:", err)
		return 2
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if cfg.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h).With("worker", cfg.name)
	if err := work(ctx, cfg, log); err != nil {
		fmt.Fprintln(stderr, "taikai worker:", err)
		return 1
	}
	return 0
}

func work(ctx context.Context, cfg *workerConfig, log *slog.Logger) error {
	data, err := filepath.Abs(cfg.data)
	if err != nil {
		return err
	}
	cacheDir := cluster.CacheDirFor(data, cfg.name)
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	launcher := &engines.Launcher{Self: self, Log: log, FoldersDir: filepath.Join(data, "folders")}
	engineSandbox(cfg.sandbox, launcher, cacheDir, log)
	defer launcher.Close()
	var auth []nats.Option
	secret := os.Getenv(cluster.SecretEnv)
	if secret == "" && cfg.enroll != "" {
		if secret, err = enrolled(ctx, cfg, data, log); err != nil {
			return err
		}
	}
	if secret != "" {
		auth = cluster.WorkerAuth(cfg.name, secret)
	}
	nc, err := cluster.Connect(cfg.nats, "taikai-worker-"+cfg.name, log, auth...)
	if err != nil {
		return err
	}
	defer nc.Close()
	host, _ := os.Hostname()
	w := &cluster.Worker{
		Name: cfg.name, Host: host, Concurrency: cfg.concurrency,
		Runner:   &tournament.Runner{Launcher: launcher, Log: log},
		CacheDir: cacheDir, CacheEntries: cfg.cache, Log: log,
	}
	return w.Run(ctx, nc)
}

// httpURL says whether s is an http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// enrolled is the worker's own secret from an earlier enrollment, kept under
// data, or, the first time, one the server issues for the join token. A
// secret kept is used as it is: once revoked, the worker is refused until
// the file is removed (it does not enroll again by itself).
func enrolled(ctx context.Context, cfg *workerConfig, data string, log *slog.Logger) (string, error) {
	path := filepath.Join(data, "credentials", cfg.name)
	if b, err := os.ReadFile(path); err == nil {
		log.Info("worker credentials from an earlier enrollment", "file", path)
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	join := os.Getenv(fleet.JoinTokenEnv)
	if join == "" {
		if os.Getenv(cluster.TokenEnv) != "" {
			log.Warn("--enroll without " + fleet.JoinTokenEnv + ": this worker connects with the shared " + cluster.TokenEnv + ", as every worker before per-worker credentials (whoever holds it can act as any worker)")
			return "", nil
		}
		return "", fmt.Errorf("--enroll %s needs the server's join token in %s", cfg.enroll, fleet.JoinTokenEnv)
	}
	secret, err := cluster.Enroll(ctx, cfg.enroll, join, cfg.name, log)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keep the worker's credentials: %w", err)
	}
	log.Info("enrolled: this worker has credentials of its own", "server", cfg.enroll, "file", path)
	return secret, nil
}
