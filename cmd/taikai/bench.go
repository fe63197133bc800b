package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

const benchUsage = `usage: taikai bench [flags]

Measures what users of taikai feel on this machine, with the real runner,
real engine processes and real TCP, and prints every figure beside a
baseline measured in the same run:

  throughput   whole games per second (engine starts included) at
               concurrency 1 and 2, after a round not counted (warm-up),
               against starting the engine binary twice (the floor of one
               game); where bwrap works, the same with the engine sandbox,
               an engine's start with and without it against what
               bubblewrap adds to /bin/true, and a game of engines
               answering after 10 ms a move with and without it
  clock        at 2x oversubscription (twice as many games at once as the
               machine has cores): engines answering 15 ms into a 20 ms
               clock (false time losses), with a move's time taken when the
               kernel received it and, in alternation, when the server read
               it (TAIKAI_RECEIVE_TIME=read, the baseline); and engines that
               never answer: how late the flag falls, as they see it
  storage      finished games stored per second and bytes per stored game,
               against bare inserts of the same bytes
  workers      games per second played by 1, 2 and 4 'taikai worker'
               processes of concurrency 1 through an embedded NATS server
               (engines answering after 20 ms), against the same games
               played by the server itself at the same concurrency

The per-move turnaround against a bare ping-pong is no longer measured here
(docs/PERFORMANCE.md says why); 'go test -bench' keeps the micro-measures.
The bench's engines are its own: 'taikai bench engine'.

Flags:
`

// benchParts name the parts of the benchmark, in the order they run.
var benchParts = []string{"throughput", "clock", "storage", "workers"}

// retiredParts are accepted by --only and measure nothing.
var retiredParts = []string{"overhead"}

type benchConfig struct {
	scale      float64
	only       []string
	json       bool
	cpuprofile string
	dir        string
	affinity   bool
}

// BenchResult holds the figures; the JSON keys are read by other tools, and
// those that remain from earlier releases keep their names.
type BenchResult struct {
	// Affinity: every game ran with --affinity.
	Affinity            bool    `json:"affinity"`
	GamesPerSec         float64 `json:"games_per_sec"`
	GamesPerSecC2       float64 `json:"games_per_sec_c2"`
	SpawnFloorGamesPerS float64 `json:"spawn_floor_games_per_sec"`
	SpawnMS             float64 `json:"spawn_ms"`
	ThroughputRatio     float64 `json:"throughput_ratio"`
	ThroughputRatioC2   float64 `json:"throughput_ratio_c2"`
	// Clock exactness: games at ClockConcurrency of engines answering 15 ms
	// into a 20 ms clock. FalseTimeouts and ClockMoves with a move's time
	// taken when the kernel received it (where it gives one: TCP on Linux);
	// the ..._read_time figures, in alternation with them, when the server
	// read it.
	ClockConcurrency      int     `json:"clock_concurrency"`
	FalseTimeouts         int     `json:"false_timeouts"`
	ClockMoves            int     `json:"clock_moves"`
	ClockMaxMS            float64 `json:"clock_max_ms"`
	FalseTimeoutsReadTime int     `json:"false_timeouts_read_time"`
	ClockMovesReadTime    int     `json:"clock_moves_read_time"`
	ClockMaxMSReadTime    float64 `json:"clock_max_ms_read_time"`
	// The p99 of the time charged for a move, in each way.
	ClockP99ms         float64 `json:"clock_p99_ms"`
	ClockP99msReadTime float64 `json:"clock_p99_ms_read_time"`
	// EngineOvershoots: answers that took the engine itself 20 ms or more by
	// its own clock, from reading its turn to writing its move: time losses
	// that are no false ones, of the false_timeouts beside them. The engine
	// cannot see its own late wake-up before the read, which the kernel's
	// time charges it for too.
	EngineOvershoots         int `json:"engine_overshoots"`
	EngineOvershootsReadTime int `json:"engine_overshoots_read_time"`
	// How late the flag of an engine that never answers falls after its
	// time, as the engine sees it: from reading its turn to reading the
	// server's next line, less the clock.
	TimeoutFlagP50ms   float64 `json:"timeout_flag_p50_ms"`
	TimeoutFlagP99ms   float64 `json:"timeout_flag_p99_ms"`
	TimeoutFlagMaxMS   float64 `json:"timeout_flag_max_ms"`
	TimeoutSamples     int     `json:"timeout_samples"`
	StoredGamesPerSec  float64 `json:"stored_games_per_sec"`
	BareInsertsPerSec  float64 `json:"bare_inserts_per_sec"`
	StorageRatio       float64 `json:"storage_ratio"`
	BytesPerGame       float64 `json:"bytes_per_game"`
	MoveBytesPerGame   float64 `json:"move_bytes_per_game"`
	MovesPerStoredGame float64 `json:"moves_per_stored_game"`
	Seconds            float64 `json:"seconds"`
	Cores              int     `json:"cores"`

	// The engine sandbox, measured in the same run: "on", or why it is
	// unavailable (then the sandbox figures are 0).
	Sandbox string `json:"sandbox"`
	// Engine start (from the launch to the engine's connection) without and
	// with it.
	EngineStartMS        float64 `json:"engine_start_ms"`
	EngineStartSandboxMS float64 `json:"engine_start_sandbox_ms"`
	SandboxStartAddedMS  float64 `json:"sandbox_start_added_ms"`
	// The baseline of the start: what bubblewrap with every namespace adds
	// to /bin/true on this machine, measured in the same run, and the
	// sandbox's added start as a multiple of it.
	BwrapTrueAddedMS    float64 `json:"bwrap_true_added_ms"`
	SandboxStartVsBwrap float64 `json:"sandbox_start_vs_bwrap"`
	// Whole games per second at concurrency 1 with both engines sandboxed,
	// and its ratio to unsandboxed.
	GamesPerSecSandbox float64 `json:"games_per_sec_sandbox"`
	SandboxGamesRatio  float64 `json:"sandbox_games_ratio"`
	// Games of engines answering each move after 10 ms (Othello, about 60
	// plies), one at a time, without and with the sandbox in turn: the
	// median game's wall time and plies, and what the sandbox adds to it.
	Game10msMS             float64 `json:"game_10ms_ms"`
	Game10msPlies          float64 `json:"game_10ms_plies"`
	Game10msSandboxMS      float64 `json:"game_10ms_sandbox_ms"`
	SandboxGame10msAddedPc float64 `json:"sandbox_game_10ms_added_pct"`
	// Workers: games per second on 1, 2 and 4 worker processes.
	Workers []WorkerFigures `json:"workers,omitempty"`
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "engine" {
		return runBenchEngine(args[1:], stderr)
	}
	c := &benchConfig{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	fs.Float64Var(&c.scale, "scale", 1, "multiply every sample count by this `factor` (0.05 for a quick check)")
	fs.BoolVar(&c.json, "json", false, "print the figures as one JSON object")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to `file` (go tool pprof)")
	only := fs.String("only", "", "run only these comma-separated `parts`: "+strings.Join(benchParts, ","))
	fs.BoolVar(&c.affinity, "affinity", false, "play every game with both engines started on one CPU, as serve/match --affinity do")
	fs.StringVar(&c.dir, "dir", "", "scratch `directory` for the database and logs (default: a temporary one)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *only != "" {
		for _, p := range strings.Split(*only, ",") {
			if slices.Contains(retiredParts, p) {
				fmt.Fprintf(stderr, "taikai bench: --only: %q is retired and measures nothing (docs/PERFORMANCE.md)\n", p)
				continue
			}
			if !slices.Contains(benchParts, p) {
				fmt.Fprintf(stderr, "taikai bench: --only: unknown part %q (want some of %s)\n", p, strings.Join(benchParts, ","))
				return 2
			}
			c.only = append(c.only, p)
		}
		if len(c.only) == 0 {
			return 0
		}
	}
	if c.scale <= 0 || c.scale > 100 {
		fmt.Fprintln(stderr, "taikai bench: --scale: want a factor in (0, 100]")
		return 2
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			fmt.Fprintln(stderr, "taikai bench:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "taikai bench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	b, err := newBench(c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "taikai bench:", err)
		return 1
	}
	defer b.close()
	res, err := b.run(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "taikai bench:", err)
		return 1
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		return 0
	}
	res.print(stdout)
	return 0
}

type bench struct {
	cfg    *benchConfig
	log    io.Writer
	self   string
	dir    string
	tmp    bool
	runner *tournament.Runner
	// sandboxed plays with every engine in the sandbox; nil if the sandbox
	// is unavailable (sandboxErr says why).
	sandboxed  *tournament.Runner
	sandboxErr error
}

func newBench(c *benchConfig, log io.Writer) (*bench, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: c, log: log, self: self, dir: c.dir}
	if b.dir == "" {
		if b.dir, err = os.MkdirTemp("", "taikai-bench-"); err != nil {
			return nil, err
		}
		b.tmp = true
	} else if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, err
	}
	b.runner = &tournament.Runner{Launcher: &engines.Launcher{Self: self, ExitGrace: 2 * time.Second}, Affinity: c.affinity}
	sl := &engines.Launcher{Self: self, ExitGrace: 2 * time.Second}
	if b.sandboxErr = setupSandbox(sl, ""); b.sandboxErr == nil {
		b.sandboxed = &tournament.Runner{Launcher: sl, Affinity: c.affinity}
	} else {
		b.step("the sandbox is unavailable, its figures are left out: %v", b.sandboxErr)
	}
	return b, nil
}

func (b *bench) close() {
	if b.sandboxed != nil {
		b.sandboxed.Launcher.Close()
	}
	if b.tmp {
		os.RemoveAll(b.dir)
	}
}

func (b *bench) n(base int) int { return max(1, int(math.Round(float64(base)*b.cfg.scale))) }

func (b *bench) step(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

func (b *bench) run(ctx context.Context) (*BenchResult, error) {
	start := time.Now()
	r := &BenchResult{Cores: numCPU(), Affinity: b.cfg.affinity, Sandbox: "on"}
	if b.sandboxErr != nil {
		r.Sandbox = "unavailable: " + b.sandboxErr.Error()
	}
	steps := []func(context.Context, *BenchResult) error{b.throughput, b.clock, b.storage, b.workers}
	for i, step := range steps {
		if len(b.cfg.only) > 0 && !slices.Contains(b.cfg.only, benchParts[i]) {
			continue
		}
		if err := step(ctx, r); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	r.Seconds = round(time.Since(start).Seconds(), 1)
	return r, nil
}

// instant is a built-in that answers as soon as it has parsed the position.
func instant() engines.Engine {
	return engines.Engine{Name: "othello-random", Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
}

// inSandbox names the binary of a command that runs self by the path the
// sandbox shows it at.
func inSandbox(e engines.Engine, self string) engines.Engine {
	if len(e.Command) > 0 && e.Command[0] == self {
		e.Command = append([]string{sandbox.HelperPath}, e.Command[1:]...)
	}
	return e
}

// timed is the bench's own engine (taikai bench engine) with args.
func (b *bench) timed(args ...string) engines.Engine {
	return engines.Engine{Name: "bench", Game: "othello", Protocol: "othello-board", Command: benchEngineCommand(b.self, args...)}
}

// games plays n games between two engines, concurrency at a time, and returns
// the records and the wall time.
func (b *bench) games(ctx context.Context, rn *tournament.Runner, n, concurrency int, black, white engines.Engine, set tournament.Settings) ([]*tournament.Played, time.Duration, error) {
	if rn.Launcher.Sandbox {
		// Inside, the binary is at sandbox.HelperPath; its own path may be in
		// a directory the sandbox does not show (a 0700 home).
		black, white = inSandbox(black, b.self), inSandbox(white, b.self)
	}
	out := make([]*tournament.Played, n)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for i := range next {
				out[i] = rn.Play(ctx, tournament.GameSpec{ID: int64(i + 1), Black: black, White: white, Settings: set, Seed: uint64(i)})
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	took := time.Since(start)
	for _, p := range out {
		if p == nil {
			return nil, 0, ctx.Err()
		}
		if r := p.Outcome.Reason; r == games.ReasonCrash || r == games.ReasonNoConnect || r == games.ReasonAborted {
			return nil, 0, fmt.Errorf("benchmark game failed: %s (%s)", r, p.Detail)
		}
	}
	return out, took, nil
}

// throughput: whole games per second against the cost of two engine starts,
// measured in alternation, without and with the sandbox.
func (b *bench) throughput(ctx context.Context, r *BenchResult) error {
	b.step("game throughput: whole games at concurrency 1 and 2 without and with the sandbox, in turn, alternating with engine starts (the floor)")
	set := tournament.Settings{Game: "othello", MoveTimeMS: 5000}
	var (
		spawns              []time.Duration
		startOnly, boxStart []time.Duration
		bare, bwrapped      []time.Duration
		plain, boxed        gameTally
		slow                = b.timed("--delay", "10ms")
		slowGames           [2][]time.Duration // unsandboxed, sandboxed
		plies               []time.Duration
		rounds              = b.n(20)
	)
	// A round of plain games, then one of sandboxed games, then the starts,
	// rounds after rounds: both kinds of game see the same machine (its
	// speed here drifts over seconds). The first round is not counted: a
	// tournament's first games start before anything is warm (the page
	// cache), its steady state is what games/s tells.
	for round := range rounds + 1 {
		if err := b.gamesRound(ctx, b.runner, set, &plain, round > 0, 2); err != nil {
			return err
		}
		if b.sandboxed != nil {
			if err := b.gamesRound(ctx, b.sandboxed, set, &boxed, round > 0, 1); err != nil {
				return fmt.Errorf("sandboxed: %w", err)
			}
		}
		if round == 0 {
			continue
		}
		whole, start, err := b.spawnCost(ctx, b.runner.Launcher, 2)
		if err != nil {
			return fmt.Errorf("spawn: %w", err)
		}
		spawns, startOnly = append(spawns, whole...), append(startOnly, start...)
		if b.sandboxed == nil {
			continue
		}
		if _, start, err = b.spawnCost(ctx, b.sandboxed.Launcher, 2); err != nil {
			return fmt.Errorf("sandboxed spawn: %w", err)
		}
		boxStart = append(boxStart, start...)
		for i, rn := range []*tournament.Runner{b.runner, b.sandboxed} {
			p, took, err := b.games(ctx, rn, 1, 1, slow, slow, set)
			if err != nil {
				return fmt.Errorf("10 ms games: %w", err)
			}
			slowGames[i] = append(slowGames[i], took)
			plies = append(plies, time.Duration(len(p[0].Moves)))
		}
		t, bw, err := bwrapTrue(ctx, 2)
		if err != nil {
			return fmt.Errorf("bwrap /bin/true: %w", err)
		}
		bare, bwrapped = append(bare, t...), append(bwrapped, bw...)
	}
	whole := quantile(spawns, 0.5)
	r.SpawnMS = ms(whole)
	r.EngineStartMS = ms(quantile(startOnly, 0.5))
	r.SpawnFloorGamesPerS = round(1/(2*whole.Seconds()), 1)
	r.GamesPerSec, r.GamesPerSecC2 = plain.perSec(0), plain.perSec(1)
	r.ThroughputRatio = round(r.SpawnFloorGamesPerS/r.GamesPerSec, 2)
	r.ThroughputRatioC2 = round(r.SpawnFloorGamesPerS/r.GamesPerSecC2, 2)
	if b.sandboxed != nil {
		r.EngineStartSandboxMS = ms(quantile(boxStart, 0.5))
		r.SandboxStartAddedMS = round(r.EngineStartSandboxMS-r.EngineStartMS, 2)
		r.BwrapTrueAddedMS = round(ms(quantile(bwrapped, 0.5))-ms(quantile(bare, 0.5)), 2)
		if r.BwrapTrueAddedMS > 0 {
			r.SandboxStartVsBwrap = round(r.SandboxStartAddedMS/r.BwrapTrueAddedMS, 2)
		}
		r.GamesPerSecSandbox = boxed.perSec(0)
		r.SandboxGamesRatio = round(r.GamesPerSecSandbox/r.GamesPerSec, 2)
		r.Game10msMS, r.Game10msSandboxMS = ms(quantile(slowGames[0], 0.5)), ms(quantile(slowGames[1], 0.5))
		r.Game10msPlies = float64(quantile(plies, 0.5))
		r.SandboxGame10msAddedPc = round(100*(r.Game10msSandboxMS-r.Game10msMS)/r.Game10msMS, 1)
	}
	return nil
}

// gameTally adds up games at concurrency 1 and 2: their wall time and their
// number.
type gameTally struct {
	took  [2]time.Duration
	count [2]int
}

func (g *gameTally) perSec(ci int) float64 {
	return round(float64(g.count[ci])/g.took[ci].Seconds(), 1)
}

// gamesRound plays a round of instant engines' games with rn: 2 at
// concurrency 1, then (with upTo 2) 4 at concurrency 2, counted in g unless
// this is a warm-up.
func (b *bench) gamesRound(ctx context.Context, rn *tournament.Runner, set tournament.Settings, g *gameTally, count bool, upTo int) error {
	for ci, n := range []int{2, 4}[:upTo] {
		t0 := time.Now()
		if _, _, err := b.games(ctx, rn, n, ci+1, instant(), instant(), set); err != nil {
			return err
		}
		if count {
			g.took[ci] += time.Since(t0)
			g.count[ci] += n
		}
	}
	return nil
}

// spawnCost times n lives of the engine binary without a game, with launcher
// l: from the launch to its connection (start), and on to its connection
// closed and the process reaped (whole).
func (b *bench) spawnCost(ctx context.Context, l *engines.Launcher, n int) (whole, start []time.Duration, err error) {
	for range n {
		t0 := time.Now()
		p, c, err := l.Start(ctx, engines.Launch{Engine: instant(), Color: "black"})
		if err != nil {
			return nil, nil, err
		}
		start = append(start, time.Since(t0))
		c.Close()
		p.Stop(2 * time.Second)
		whole = append(whole, time.Since(t0))
	}
	return whole, start, nil
}

// bwrapTrue times n runs each of /bin/true and of /bin/true under bubblewrap
// with every namespace, alternating: the baseline of the sandbox's start.
func bwrapTrue(ctx context.Context, n int) (bare, bwrapped []time.Duration, err error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, nil, err
	}
	run := func(argv ...string) (time.Duration, error) {
		t0 := time.Now()
		err := exec.CommandContext(ctx, argv[0], argv[1:]...).Run()
		return time.Since(t0), err
	}
	for range n {
		d, err := run("/bin/true")
		if err != nil {
			return nil, nil, err
		}
		bare = append(bare, d)
		if d, err = run(bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "/bin/true"); err != nil {
			return nil, nil, err
		}
		bwrapped = append(bwrapped, d)
	}
	return bare, bwrapped, nil
}

func ms(d time.Duration) float64 { return round(float64(d.Microseconds())/1000, 2) }

// readTimeEnv makes the clock take a move's time when the server reads it,
// not when the kernel received it: the clock's baseline (docs/PROTOCOLS.md).
const readTimeEnv = "TAIKAI_RECEIVE_TIME"

// clock: at 2x oversubscription, (a) engines answering 15 ms into a 20 ms
// clock must never be flagged: counted with the kernel's receive time and,
// in alternation, with the server's read time; (b) engines that never answer
// see their flag fall how late?
func (b *bench) clock(ctx context.Context, r *BenchResult) error {
	conc := 2 * numCPU()
	r.ClockConcurrency = conc
	b.step("clock exactness: 15 ms answers under a 20 ms clock, concurrency %d, the kernel's receive time and the server's read in turn", conc)
	set := tournament.Settings{Game: "othello", MoveTimeMS: 20}
	type tally struct {
		losses, moves int
		charged       []time.Duration
		times         string // the engines' own times
	}
	var t [2]tally // the kernel's time, the read's
	for i := range t {
		t[i].times = filepath.Join(b.dir, fmt.Sprintf("times-%d.txt", i))
		os.Remove(t[i].times)
	}
	defer os.Unsetenv(readTimeEnv)
	for t[0].moves < b.n(1000) || t[1].moves < b.n(1000) {
		for i := range t {
			// Read when each connection is made: no game of one kind
			// overlaps one of the other.
			if i == 1 {
				os.Setenv(readTimeEnv, "read")
			} else {
				os.Unsetenv(readTimeEnv)
			}
			slow := b.timed("--delay", "15ms", "--times", t[i].times)
			played, _, err := b.games(ctx, b.runner, conc, conc, slow, slow, set)
			if err != nil {
				return err
			}
			for _, p := range played {
				t[i].losses += p.Violations[0]["timeout"] + p.Violations[1]["timeout"]
				for _, m := range p.Moves {
					if !m.Auto {
						t[i].moves++
						t[i].charged = append(t[i].charged, m.Elapsed)
					}
				}
			}
		}
	}
	os.Unsetenv(readTimeEnv)
	r.FalseTimeouts, r.ClockMoves, r.ClockMaxMS = t[0].losses, t[0].moves, ms(quantile(t[0].charged, 1))
	r.FalseTimeoutsReadTime, r.ClockMovesReadTime, r.ClockMaxMSReadTime = t[1].losses, t[1].moves, ms(quantile(t[1].charged, 1))
	r.ClockP99ms, r.ClockP99msReadTime = ms(quantile(t[0].charged, 0.99)), ms(quantile(t[1].charged, 0.99))
	for i, n := range []*int{&r.EngineOvershoots, &r.EngineOvershootsReadTime} {
		own, err := readDurations(t[i].times)
		if err != nil {
			return err
		}
		for _, d := range own {
			if d >= 20*time.Millisecond {
				*n++
			}
		}
	}

	b.step("clock exactness: engines that never answer, concurrency %d", conc)
	flags := filepath.Join(b.dir, "flags.txt")
	os.Remove(flags)
	silent := b.timed("--flags", flags, "--clock", "20ms")
	set.OnTimeout, set.MaxTimeouts = tournament.OnTimeoutRandom, 1000
	var late []time.Duration
	for len(late) < b.n(500) {
		if _, _, err := b.games(ctx, b.runner, conc, conc, silent, silent, set); err != nil {
			return err
		}
		var err error
		if late, err = readDurations(flags); err != nil {
			return err
		}
		if len(late) == 0 {
			return errors.New("the silent engines saw no flag")
		}
	}
	r.TimeoutSamples = len(late)
	r.TimeoutFlagP50ms = round(float64(quantile(late, 0.5).Microseconds())/1000, 3)
	r.TimeoutFlagP99ms = round(float64(quantile(late, 0.99).Microseconds())/1000, 3)
	r.TimeoutFlagMaxMS = round(float64(quantile(late, 1).Microseconds())/1000, 3)
	return nil
}

// readDurations reads a file of nanoseconds, one a line.
func readDurations(path string) ([]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, time.Duration(n))
	}
	return out, sc.Err()
}

// storage: finished games stored per second and bytes per game, against bare
// inserts of the same move bytes in the same database mode.
func (b *bench) storage(ctx context.Context, r *BenchResult) error {
	b.step("storage: finished games")
	path := filepath.Join(b.dir, "bench.db")
	os.Remove(path)
	db, err := storage.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	t := &tournament.Tournament{Name: "bench", Settings: tournament.Settings{Game: "othello", MoveTimeMS: 10000}, GamesPerPair: 1000, Seed: 1}
	for i := range 2 {
		e := engines.Engine{Name: fmt.Sprintf("bench-%d", i), Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
		if err := db.CreateEngine(ctx, &e); err != nil {
			return err
		}
		t.Engines = append(t.Engines, e.ID)
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if err := db.CreateTournament(ctx, t); err != nil {
		return err
	}
	if err := db.SetTournamentStatus(ctx, t.ID, tournament.StatusRunning); err != nil {
		return err
	}
	n := b.n(1000)
	rng := rand.New(rand.NewPCG(1, 2))
	records := make([]*tournament.Played, n)
	plies, moveBytes := 0, 0
	for i := range records {
		records[i] = benchGame(rng, t)
		plies += len(records[i].Moves)
		moveBytes += storage.EncodedSize(records[i].Moves, 8)
	}
	if err := db.Checkpoint(ctx); err != nil {
		return err
	}
	before := fileSize(path)
	start := time.Now()
	for i, p := range records {
		pr := t.Schedule().Game(int64(i))
		id, err := db.StartGame(ctx, t, pr, t.Engines[pr.Black], t.Engines[pr.White], 0)
		if err != nil {
			return err
		}
		p.Spec.ID, p.Spec.Index = id, int64(i)
		if err := db.FinishGame(ctx, p); err != nil {
			return err
		}
	}
	took := time.Since(start)
	if err := db.Checkpoint(ctx); err != nil {
		return err
	}
	r.StoredGamesPerSec = round(float64(n)/took.Seconds(), 0)
	r.BytesPerGame = round(float64(fileSize(path)-before)/float64(n), 1)
	r.MovesPerStoredGame = round(float64(plies)/float64(n), 1)
	r.MoveBytesPerGame = round(float64(moveBytes)/float64(n), 1)

	b.step("storage: bare inserts of the same bytes (the baseline)")
	bare, err := storage.BareInserts(ctx, filepath.Join(b.dir, "bare.db"), n, int(r.MoveBytesPerGame))
	if err != nil {
		return err
	}
	r.BareInsertsPerSec = round(bare, 0)
	r.StorageRatio = round(r.BareInsertsPerSec/r.StoredGamesPerSec, 2)
	return nil
}

// benchGame is a realistic finished game: random legal Othello moves taking
// 100 ms to 5 s each, as engines at classroom time controls do.
func benchGame(rng *rand.Rand, t *tournament.Tournament) *tournament.Played {
	var moves []games.Ply
	bd := othello.New()
	for !bd.Over() {
		m := games.Ply{Color: games.Color(bd.Turn()), Move: games.Move{X: -1, Y: -1, Pass: true}, MS: int64(100 + rng.IntN(4900))}
		s := othello.Pass
		if legal := othello.Squares(bd.Legal()); len(legal) > 0 {
			s = legal[rng.IntN(len(legal))]
			m.X, m.Y, m.Pass = s.X(), s.Y(), false
		}
		bd.Play(s)
		moves = append(moves, m)
	}
	nb, nw := bd.Count()
	return &tournament.Played{
		Spec: tournament.GameSpec{TournamentID: t.ID, Settings: t.Settings, Black: engines.Engine{ID: t.Engines[0]}, White: engines.Engine{ID: t.Engines[1]}},
		Record: games.Record{
			Moves:   moves,
			Stones:  [2]int{nb, nw},
			Outcome: games.Outcome{Winner: games.Color(bd.Winner()), Reason: games.ReasonNormal},
		},
		EndedAt: time.Now(),
	}
}

func numCPU() int { return runtime.NumCPU() }

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func (r *BenchResult) print(w io.Writer) {
	fmt.Fprintf(w, "taikai bench (%d cores, %.1fs)\n", r.Cores, r.Seconds)
	if r.Affinity {
		fmt.Fprintf(w, "every game with --affinity\n")
	}
	if r.GamesPerSec > 0 {
		fmt.Fprintf(w, "\ngame throughput\n")
		fmt.Fprintf(w, "  concurrency 1           %8.1f games/s\n", r.GamesPerSec)
		fmt.Fprintf(w, "  concurrency 2           %8.1f games/s\n", r.GamesPerSecC2)
		fmt.Fprintf(w, "  process-start floor     %8.1f games/s (an engine's life without a game %.2f ms, two per game)\n", r.SpawnFloorGamesPerS, r.SpawnMS)
		fmt.Fprintf(w, "  ratio floor/achieved    %.2f at c1, %.2f at c2\n", r.ThroughputRatio, r.ThroughputRatioC2)
		if r.GamesPerSecSandbox > 0 {
			fmt.Fprintf(w, "  sandboxed, c1           %8.1f games/s (%.2f of unsandboxed)\n", r.GamesPerSecSandbox, r.SandboxGamesRatio)
			fmt.Fprintf(w, "  engine start            %8.2f ms, sandboxed %.2f ms (+%.2f ms; bwrap adds %.2f ms to /bin/true here: %.2fx that)\n",
				r.EngineStartMS, r.EngineStartSandboxMS, r.SandboxStartAddedMS, r.BwrapTrueAddedMS, r.SandboxStartVsBwrap)
			fmt.Fprintf(w, "  game, 10 ms a move      %8.0f ms, sandboxed %.0f ms (+%.1f%%; median of %.0f plies)\n",
				r.Game10msMS, r.Game10msSandboxMS, r.SandboxGame10msAddedPc, r.Game10msPlies)
		}
	}
	if r.Sandbox != "on" {
		fmt.Fprintf(w, "\nsandbox: %s\n", r.Sandbox)
	}
	if r.ClockMoves > 0 {
		fmt.Fprintf(w, "\nclock exactness (concurrency %d, 2x the cores)\n", r.ClockConcurrency)
		fmt.Fprintf(w, "  15 ms answers, 20 ms clock, time when the kernel received the move: %d time losses in %d moves, %d of them the engine's own (it took 20 ms by its clock); charged p99 %.2f ms, max %.2f ms\n",
			r.FalseTimeouts, r.ClockMoves, r.EngineOvershoots, r.ClockP99ms, r.ClockMaxMS)
		fmt.Fprintf(w, "  the same, time when the server read the move (the baseline):       %d time losses in %d moves, %d of them the engine's own; charged p99 %.2f ms, max %.2f ms\n",
			r.FalseTimeoutsReadTime, r.ClockMovesReadTime, r.EngineOvershootsReadTime, r.ClockP99msReadTime, r.ClockMaxMSReadTime)
		fmt.Fprintf(w, "  silent engines see the flag fall after their time: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d flags)\n",
			r.TimeoutFlagP50ms, r.TimeoutFlagP99ms, r.TimeoutFlagMaxMS, r.TimeoutSamples)
	}
	if len(r.Workers) > 0 {
		fmt.Fprintf(w, "\nworkers (engines answer after 20 ms; each worker plays one game at a time)\n")
		for _, f := range r.Workers {
			fmt.Fprintf(w, "  %d worker(s)             %8.2f games/s   serve alone at concurrency %d %.2f games/s (ratio %.2f)   vs %d x one worker %.2f\n",
				f.Workers, f.GamesPerSec, f.Workers, f.ServeGamesPerS, f.VsServe, f.Workers, f.VsOneWorker)
		}
	}
	if r.BytesPerGame > 0 {
		fmt.Fprintf(w, "\nstorage (synchronous=FULL: every game on disk before the next)\n")
		fmt.Fprintf(w, "  finished games          %8.0f games/s (%.0f bare inserts/s of the same bytes, ratio %.2f)\n", r.StoredGamesPerSec, r.BareInsertsPerSec, r.StorageRatio)
		fmt.Fprintf(w, "  bytes per game          %8.1f (of which moves %.1f, %.1f plies)\n", r.BytesPerGame, r.MoveBytesPerGame, r.MovesPerStoredGame)
	}
}
