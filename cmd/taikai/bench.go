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
	"net"
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
	"github.com/taikai-dev/taikai/engines/protocol/othelloboard"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

const benchUsage = `usage: taikai bench [flags]

Measures the referee on this machine with the real runner, real engine
processes and real TCP, and prints every figure beside a baseline measured in
the same run:

  per-move overhead   the referee's turnaround per move (from writing the
                      message that gives the move to reading the answer)
                      against a bare two-process loopback ping-pong of the
                      same message sizes; the same round trip taking turns
                      between two clients as a game's moves do; and the
                      games' own instant engines taking turns under a bare
                      loop (the turnaround without a referee). The games are
                      played as serve and match play them.
  game throughput     whole games per second (engine starts included) at
                      concurrency 1 and 2, after a round not counted (warm-up),
                      against starting the engine binary twice (the floor of
                      one game)
  clock exactness     at concurrency 4: engines answering 15 ms into a 20 ms
                      clock (false timeouts), and engines that never answer
                      (how late the flag falls after the deadline)
  storage             finished games stored per second and bytes per stored
                      game, against bare inserts of the same bytes
  sandbox             (with throughput, where bwrap works) an engine's start
                      to its connection and its stop, games per second, and
                      a game of engines answering after 10 ms a move, with
                      and without the engine sandbox (rounds of each in
                      turn; every engine starts in a fresh sandbox), against
                      what bubblewrap with every namespace adds to /bin/true
  workers             games per second played by 1, 2 and 4 'taikai worker'
                      processes of concurrency 1 through an embedded NATS
                      server (engines answering after 20 ms), against the
                      same games played by the server itself at the same
                      concurrency

Flags:
`

// benchParts name the parts of the benchmark, in the order they run.
var benchParts = []string{"overhead", "throughput", "clock", "storage", "workers"}

type benchConfig struct {
	scale      float64
	only       []string
	json       bool
	cpuprofile string
	dir        string
	affinity   bool
}

// BenchResult holds the figures; the JSON keys are read by other tools.
type BenchResult struct {
	TurnaroundP50us    float64 `json:"turnaround_p50_us"`
	TurnaroundP99us    float64 `json:"turnaround_p99_us"`
	BareRoundtripUS    float64 `json:"bare_roundtrip_us"`
	BareRoundtripP99us float64 `json:"bare_roundtrip_p99_us"`
	TurnaroundRatio    float64 `json:"turnaround_ratio"`
	// The same round trip taking turns between two clients, as a game does.
	BareAlternatingUS    float64 `json:"bare_alternating_us"`
	BareAlternatingP99us float64 `json:"bare_alternating_p99_us"`
	TurnaroundRatioAlt   float64 `json:"turnaround_ratio_alternating"`
	// BaselineDisturbed: the bare ping-pong took over 1.5 times the same round
	// trip taking turns, which it never did on a quiet machine (see overhead).
	BaselineDisturbed bool `json:"baseline_disturbed"`
	// The games' instant engines taking turns under a bare loop: the turnaround
	// without the referee.
	EnginesNoRefereeUS     float64 `json:"engines_no_referee_us"`
	EnginesNoRefereeP99us  float64 `json:"engines_no_referee_p99_us"`
	TurnaroundRatioEngines float64 `json:"turnaround_ratio_engines"`
	MovesPerSec            float64 `json:"moves_per_sec"`
	// The plain games with the live hub publishing every move, as serve runs
	// them (nobody watching); the ratio is to the bare ping-pong.
	HubTurnaroundP50us float64 `json:"hub_turnaround_p50_us"`
	HubTurnaroundP99us float64 `json:"hub_turnaround_p99_us"`
	HubTurnaroundRatio float64 `json:"hub_turnaround_ratio"`
	HubMovesPerSec     float64 `json:"hub_moves_per_sec"`
	// Affinity: every game ran with --affinity.
	Affinity            bool    `json:"affinity"`
	OverheadMoves       int     `json:"overhead_moves"`
	GamesPerSec         float64 `json:"games_per_sec"`
	GamesPerSecC2       float64 `json:"games_per_sec_c2"`
	SpawnFloorGamesPerS float64 `json:"spawn_floor_games_per_sec"`
	SpawnMS             float64 `json:"spawn_ms"`
	ThroughputRatio     float64 `json:"throughput_ratio"`
	ThroughputRatioC2   float64 `json:"throughput_ratio_c2"`
	FalseTimeouts       int     `json:"false_timeouts"`
	ClockMoves          int     `json:"clock_moves"`
	ClockMaxMS          float64 `json:"clock_max_ms"`
	TimeoutFlagP50ms    float64 `json:"timeout_flag_p50_ms"`
	TimeoutFlagP99ms    float64 `json:"timeout_flag_p99_ms"`
	TimeoutFlagMaxMS    float64 `json:"timeout_flag_max_ms"`
	TimeoutSamples      int     `json:"timeout_samples"`
	StoredGamesPerSec   float64 `json:"stored_games_per_sec"`
	BareInsertsPerSec   float64 `json:"bare_inserts_per_sec"`
	StorageRatio        float64 `json:"storage_ratio"`
	BytesPerGame        float64 `json:"bytes_per_game"`
	MoveBytesPerGame    float64 `json:"move_bytes_per_game"`
	MovesPerStoredGame  float64 `json:"moves_per_stored_game"`
	Seconds             float64 `json:"seconds"`
	Cores               int     `json:"cores"`

	// The engine sandbox, measured in the same run: "on", or why it is
	// unavailable (then the sandbox figures are 0).
	Sandbox string `json:"sandbox"`
	// Engine start (from the launch to the engine's connection) without and
	// with it, and the stop after (from closing its connection to the last
	// process reaped and the sandbox removed).
	EngineStartMS        float64 `json:"engine_start_ms"`
	EngineStartSandboxMS float64 `json:"engine_start_sandbox_ms"`
	SandboxStartAddedMS  float64 `json:"sandbox_start_added_ms"`
	// Kept for readers of the JSON: every sandbox is now made when its
	// engine starts, so these equal the sandboxed start.
	EngineStartColdMS       float64 `json:"engine_start_sandbox_cold_ms"`
	SandboxColdStartAddedMS float64 `json:"sandbox_cold_start_added_ms"`
	EngineStopMS            float64 `json:"engine_stop_ms"`
	EngineStopSandboxMS     float64 `json:"engine_stop_sandbox_ms"`
	// The baseline of the start: what bubblewrap with every namespace adds
	// to /bin/true on this machine, measured in the same run, and the
	// sandbox's added start as a multiple of it.
	BwrapTrueAddedMS    float64 `json:"bwrap_true_added_ms"`
	SandboxStartVsBwrap float64 `json:"sandbox_start_vs_bwrap"`
	// Whole games per second with both engines sandboxed, and its ratio to
	// unsandboxed.
	GamesPerSecSandbox   float64 `json:"games_per_sec_sandbox"`
	GamesPerSecSandboxC2 float64 `json:"games_per_sec_sandbox_c2"`
	SandboxGamesRatio    float64 `json:"sandbox_games_ratio"`
	SandboxGamesRatioC2  float64 `json:"sandbox_games_ratio_c2"`
	// The machine's busy CPU time per game over those games (both
	// engines' starts, the games, the referee; with the sandbox, preparing
	// the sandboxes too), without and with the sandbox.
	CPUPerGameMS        float64 `json:"cpu_per_game_ms"`
	CPUPerGameSandboxMS float64 `json:"cpu_per_game_sandbox_ms"`
	// Games of engines answering each move after 10 ms (Othello, about 60
	// plies), one at a time, without and with the sandbox in turn: the
	// median game's wall time and plies, and what the sandbox adds to it.
	Game10msMS             float64 `json:"game_10ms_ms"`
	Game10msPlies          float64 `json:"game_10ms_plies"`
	Game10msSandboxMS      float64 `json:"game_10ms_sandbox_ms"`
	SandboxGame10msAddedPc float64 `json:"sandbox_game_10ms_added_pct"`
	// The referee's per-move turnaround with sandboxed engines.
	TurnaroundSandboxP50us float64 `json:"turnaround_p50_us_sandbox"`
	TurnaroundSandboxP99us float64 `json:"turnaround_p99_us_sandbox"`
	// Workers: games per second on 1, 2 and 4 worker processes.
	Workers []WorkerFigures `json:"workers,omitempty"`
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
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
			if !slices.Contains(benchParts, p) {
				fmt.Fprintf(stderr, "taikai bench: --only: unknown part %q (want some of %s)\n", p, strings.Join(benchParts, ","))
				return 2
			}
			c.only = append(c.only, p)
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
	steps := []func(context.Context, *BenchResult) error{b.overhead, b.throughput, b.clock, b.storage, b.workers}
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
func instant(extra ...string) engines.Engine {
	e := engines.Engine{Name: "othello-random", Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
	if len(extra) > 0 {
		e.Builtin = ""
		e.Command = append(engines.BuiltinCommand("{self}", "othello-random", "othello-board"), extra...)
	}
	return e
}

// withSelf fills in the binary of a command built by instant.
func (b *bench) withSelf(e engines.Engine) engines.Engine { return withBinary(e, b.self) }

// withBinary fills in bin as the binary of a command built by instant.
func withBinary(e engines.Engine, bin string) engines.Engine {
	if len(e.Command) > 0 && e.Command[0] == "{self}" {
		e.Command = append([]string{bin}, e.Command[1:]...)
	}
	return e
}

// games plays n games between two engines, concurrency at a time, and returns
// the records and the wall time.
func (b *bench) games(ctx context.Context, rn *tournament.Runner, n, concurrency int, black, white engines.Engine, set tournament.Settings, onMove func(tournament.Tick)) ([]*tournament.Played, time.Duration, error) {
	self := b.self
	if rn.Launcher.Sandbox {
		// Inside, the binary is at sandbox.HelperPath; its own path may
		// be in a directory the sandbox does not show (a 0700 home).
		self = sandbox.HelperPath
	}
	black, white = withBinary(black, self), withBinary(white, self)
	out := make([]*tournament.Played, n)
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for i := range next {
				out[i] = rn.Play(ctx, tournament.GameSpec{ID: int64(i + 1), Black: black, White: white, Settings: set, Seed: uint64(i), OnMove: onMove})
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

// overhead: per-move turnaround of the referee against a bare ping-pong. The
// two are measured in alternation, games then a burst of pings, so that both
// see the same machine: a noisy neighbour moves both, not their ratio. The
// games are played as serve and match play them.
//
// Beside the ping-pong the issue asks for, with one client always just awake,
// a second baseline takes turns between two clients as a game does, each idle
// during the other's round trip, and a third has the games' own instant
// engines take turns under a bare loop: the turnaround without a referee.
// Every baseline gets new processes for each game, as the games do, so that no
// run is stuck with one placement of them on the CPUs; unlike a game's
// engines, they are warmed up with 50 round trips before they are timed.
func (b *bench) overhead(ctx context.Context, r *BenchResult) error {
	b.step("per-move overhead: referee games between two instant engines, alternating with bare loopback ping-pongs")
	var (
		plain, boxed   moveTimes
		bare, alt, eng []time.Duration
	)
	// The live hub of serve, fed every move; nobody watches, as in most of a
	// tournament. (The game's end is not published: once a game, it is not
	// part of a move's time.)
	hub := web.NewLive(nil, nil)
	defer hub.Close()
	hubbed := moveTimes{hub: hub}
	for range b.n(30) {
		n, err := plain.game(ctx, b, b.runner)
		if err != nil {
			return err
		}
		if _, err := hubbed.game(ctx, b, b.runner); err != nil {
			return err
		}
		// As many round trips as the first game had moves, of each kind.
		got, got2, got3, err := b.pingPongs(ctx, n)
		if err != nil {
			return fmt.Errorf("ping-pong: %w", err)
		}
		bare, alt, eng = append(bare, got...), append(alt, got2...), append(eng, got3...)
	}
	// Sandboxed games after the others: a sandbox's teardown (bwrap, its
	// namespaces and cgroups) goes on for a while after its game, and fell
	// into the next unsandboxed game's time when they alternated.
	if b.sandboxed != nil {
		for range b.n(30) {
			if _, err := boxed.game(ctx, b, b.sandboxed); err != nil {
				return fmt.Errorf("sandboxed: %w", err)
			}
		}
	}
	r.OverheadMoves = len(plain.turns)
	r.TurnaroundP50us = us(quantile(plain.turns, 0.5))
	r.TurnaroundP99us = us(quantile(plain.turns, 0.99))
	r.BareRoundtripUS = us(quantile(bare, 0.5))
	r.BareRoundtripP99us = us(quantile(bare, 0.99))
	r.TurnaroundRatio = round(r.TurnaroundP50us/r.BareRoundtripUS, 2)
	r.BareAlternatingUS = us(quantile(alt, 0.5))
	r.BareAlternatingP99us = us(quantile(alt, 0.99))
	r.TurnaroundRatioAlt = round(r.TurnaroundP50us/r.BareAlternatingUS, 2)
	// One echo is not slower than two taking turns (6.9-8.2 against 8.1-9.7
	// µs in 15 runs); once, its median was 33.5 µs against 8.6, as if the
	// echoes had been started on the CPU the bench's thread was not on for
	// most of the run, and the ratio (0.27) meant nothing.
	r.BaselineDisturbed = r.BareRoundtripUS > 1.5*r.BareAlternatingUS
	r.EnginesNoRefereeUS = us(quantile(eng, 0.5))
	r.EnginesNoRefereeP99us = us(quantile(eng, 0.99))
	r.TurnaroundRatioEngines = round(r.TurnaroundP50us/r.EnginesNoRefereeUS, 2)
	r.MovesPerSec = plain.rate()
	r.HubTurnaroundP50us = us(quantile(hubbed.turns, 0.5))
	r.HubTurnaroundP99us = us(quantile(hubbed.turns, 0.99))
	r.HubTurnaroundRatio = round(r.HubTurnaroundP50us/r.BareRoundtripUS, 2)
	r.HubMovesPerSec = hubbed.rate()
	if len(boxed.turns) > 0 {
		r.TurnaroundSandboxP50us = us(quantile(boxed.turns, 0.5))
		r.TurnaroundSandboxP99us = us(quantile(boxed.turns, 0.99))
	}
	return nil
}

// moveTimes collects the turnarounds and the move rate of games.
type moveTimes struct {
	turns  []time.Duration
	cycles int           // moves after each game's first
	inGame time.Duration // from each game's first move to its last
	hub    *web.Live     // if set, is told of each game and its moves, as serve's is
}

// game plays one game between instant engines with rn and returns its number
// of moves.
func (mt *moveTimes) game(ctx context.Context, b *bench, rn *tournament.Runner) (int, error) {
	// The move rate inside games, from the first move to the last: process
	// starts are the throughput figure's business.
	var first, last time.Time
	if mt.hub != nil {
		// Game 1 each time, as b.games numbers them: each start replaces the
		// last game in the hub's live state.
		mt.hub.Publish(tournament.Event{Type: tournament.EventGameStarted, TournamentID: 1, GameID: 1,
			Game: &tournament.Game{ID: 1, TournamentID: 1, Game: "othello", Size: 8, Status: tournament.GameRunning}})
	}
	onMove := func(t tournament.Tick) {
		now := time.Now()
		if t.Ply == 1 {
			first = now
		}
		last = now
		if mt.hub != nil {
			mt.hub.Publish(tournament.Event{Type: tournament.EventMove, TournamentID: 1, GameID: 1, Tick: &t})
		}
	}
	played, _, err := b.games(ctx, rn, 1, 1, instant(), instant(), tournament.Settings{Game: "othello", MoveTimeMS: 5000}, onMove)
	if err != nil {
		return 0, err
	}
	mt.inGame += last.Sub(first)
	mt.cycles += len(played[0].Moves) - 1
	for _, m := range played[0].Moves {
		if !m.Auto {
			mt.turns = append(mt.turns, m.Elapsed)
		}
	}
	return len(played[0].Moves), nil
}

func (mt *moveTimes) rate() float64 { return round(float64(mt.cycles)/mt.inGame.Seconds(), 0) }

// pingPongs times n round trips of each bare kind, with new client processes
// for each call, as a game has: with one echo client; taking turns between two
// echo clients; taking turns between two instant engines (the engines of the
// turnaround games), each told of the other's turn as a referee tells them.
func (b *bench) pingPongs(ctx context.Context, n int) (single, turns, engines []time.Duration, err error) {
	var pps [5]*pingPong
	defer func() {
		for _, pp := range pps {
			if pp != nil {
				pp.close()
			}
		}
	}()
	for i := range pps {
		switch i {
		case 3, 4:
			pps[i], err = b.startClient(ctx, "othello-random", []int{1, -1}[i-3])
		default:
			pps[i], err = b.startClient(ctx, "echo", 1)
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if single, err = pps[0].measure(n); err != nil {
		return nil, nil, nil, err
	}
	if turns, err = alternate([2]*pingPong{pps[1], pps[2]}, n, false); err != nil {
		return nil, nil, nil, err
	}
	engines, err = alternate([2]*pingPong{pps[3], pps[4]}, n, true)
	return single, turns, engines, err
}

// pingPong is a bare client process, the echo or an instant engine, and the
// messages that give it the move or tell it the other side is to move: the
// bytes a referee writes.
type pingPong struct {
	cmd  *exec.Cmd
	c    net.Conn
	rd   *bufio.Reader
	msg  []byte // gives the client the move
	tell []byte // tells it the other side is to move
}

// startClient starts a built-in as a bare client playing color (1 or -1): the
// echo, or an instant engine told it plays that colour (START) so that it
// answers every TURN of its own colour with a legal move.
func (b *bench) startClient(ctx context.Context, engine string, color int) (*pingPong, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := exec.CommandContext(ctx, b.self, "engine", engine, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pp := &pingPong{cmd: cmd}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		pp.close()
		return nil, err
	}
	c.(*net.TCPConn).SetNoDelay(true)
	pp.c, pp.rd = c, bufio.NewReader(c)
	// The bytes the referee writes to give a move, made by the adapter itself:
	// BOARD of the start position and TURN, in one write; and the same with
	// the other colour to move, which tells a client its opponent is to play.
	start := startBoard{othello.New()}
	pp.msg = othelloboard.AppendUpdate(nil, start, games.Color(color), othelloboard.Options{})
	pp.tell = othelloboard.AppendUpdate(nil, start, games.Color(-color), othelloboard.Options{})
	if engine != "echo" {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(c, "START %d\n", color); err != nil {
			pp.close()
			return nil, err
		}
		if _, err := pp.rd.ReadSlice('\n'); err != nil { // NICK
			pp.close()
			return nil, err
		}
	}
	if _, err := pp.measure(50); err != nil { // warm-up
		pp.close()
		return nil, err
	}
	return pp, nil
}

// startBoard shows an Othello position to the othello-board adapter.
type startBoard struct{ b othello.Board }

func (s startBoard) Size() int        { return 8 }
func (s startBoard) At(x, y int) int8 { return int8(s.b.At(x, y)) }

// measure times n round trips.
func (pp *pingPong) measure(n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		d, err := pp.roundTrip()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// roundTrip writes the message and reads the answer to its TURN line.
func (pp *pingPong) roundTrip() (time.Duration, error) {
	pp.c.SetDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	if _, err := pp.c.Write(pp.msg); err != nil {
		return 0, err
	}
	if _, err := pp.rd.ReadSlice('\n'); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// alternate times n round trips that take turns between two clients, as the
// moves of a game do: each client has been idle for the other's round trip.
// With tell, the side that just answered is first told the other is to move,
// as a referee must (that write is not timed, as the referee's is not).
func alternate(pps [2]*pingPong, n int, tell bool) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := range n {
		if tell {
			other := pps[(i+1)%2]
			other.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := other.c.Write(other.tell); err != nil {
				return nil, err
			}
		}
		d, err := pps[i%2].roundTrip()
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (pp *pingPong) close() {
	if pp.c != nil {
		pp.c.Close()
	}
	killGroup(pp.cmd)
	_ = pp.cmd.Wait()
}

// throughput: whole games per second against the cost of two engine starts,
// measured in alternation like the turnaround.
func (b *bench) throughput(ctx context.Context, r *BenchResult) error {
	b.step("game throughput: whole games at concurrency 1 and 2 without and with the sandbox, in turn, alternating with engine starts (the floor)")
	set := tournament.Settings{Game: "othello", MoveTimeMS: 5000}
	var (
		spawns, boxedSpawns []spawnTimes
		bare, bwrapped      []time.Duration
		plain, boxed        gameTally
		slow                = instant("--delay", "10ms")
		slowGames           [2][]time.Duration // unsandboxed, sandboxed
		plies               []time.Duration
		rounds              = b.n(20)
	)
	// A round of plain games, then one of sandboxed games, then the starts,
	// rounds after rounds: both kinds of game see the same machine (its
	// speed here drifts over seconds). The first round is not counted: a
	// tournament's first games start before anything is warm (the page
	// cache), its steady state is what games/s tells.
	for r := range rounds + 1 {
		if err := b.gamesRound(ctx, b.runner, set, &plain, r > 0); err != nil {
			return err
		}
		if b.sandboxed != nil {
			if err := b.gamesRound(ctx, b.sandboxed, set, &boxed, r > 0); err != nil {
				return fmt.Errorf("sandboxed: %w", err)
			}
		}
		if r == 0 {
			continue
		}
		sp, err := b.spawnCost(ctx, b.runner.Launcher, 2)
		if err != nil {
			return fmt.Errorf("spawn: %w", err)
		}
		spawns = append(spawns, sp...)
		if b.sandboxed == nil {
			continue
		}
		if sp, err = b.spawnCost(ctx, b.sandboxed.Launcher, 2); err != nil {
			return fmt.Errorf("sandboxed spawn: %w", err)
		}
		boxedSpawns = append(boxedSpawns, sp...)
		for i, rn := range []*tournament.Runner{b.runner, b.sandboxed} {
			p, took, err := b.games(ctx, rn, 1, 1, slow, slow, set, nil)
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
	spawn := spawnQuantiles(spawns)
	r.SpawnMS = ms(spawn.whole)
	r.EngineStartMS, r.EngineStopMS = ms(spawn.start), ms(spawn.stop)
	r.SpawnFloorGamesPerS = round(1/(2*spawn.whole.Seconds()), 1)
	r.GamesPerSec, r.GamesPerSecC2 = plain.perSec(0), plain.perSec(1)
	r.ThroughputRatio = round(r.SpawnFloorGamesPerS/r.GamesPerSec, 2)
	r.ThroughputRatioC2 = round(r.SpawnFloorGamesPerS/r.GamesPerSecC2, 2)
	r.CPUPerGameMS = plain.cpuPerGame()
	if b.sandboxed != nil {
		bs := spawnQuantiles(boxedSpawns)
		r.EngineStartSandboxMS, r.EngineStopSandboxMS = ms(bs.start), ms(bs.stop)
		r.SandboxStartAddedMS = round(r.EngineStartSandboxMS-r.EngineStartMS, 2)
		r.EngineStartColdMS = r.EngineStartSandboxMS // every start is cold
		r.SandboxColdStartAddedMS = round(r.EngineStartColdMS-r.EngineStartMS, 2)
		r.BwrapTrueAddedMS = round(ms(quantile(bwrapped, 0.5))-ms(quantile(bare, 0.5)), 2)
		if r.BwrapTrueAddedMS > 0 {
			r.SandboxStartVsBwrap = round(r.SandboxStartAddedMS/r.BwrapTrueAddedMS, 2)
		}
		r.GamesPerSecSandbox, r.GamesPerSecSandboxC2 = boxed.perSec(0), boxed.perSec(1)
		r.SandboxGamesRatio = round(r.GamesPerSecSandbox/r.GamesPerSec, 2)
		r.SandboxGamesRatioC2 = round(r.GamesPerSecSandboxC2/r.GamesPerSecC2, 2)
		r.CPUPerGameSandboxMS = boxed.cpuPerGame()
		r.Game10msMS, r.Game10msSandboxMS = ms(quantile(slowGames[0], 0.5)), ms(quantile(slowGames[1], 0.5))
		r.Game10msPlies = float64(quantile(plies, 0.5))
		r.SandboxGame10msAddedPc = round(100*(r.Game10msSandboxMS-r.Game10msMS)/r.Game10msMS, 1)
	}
	return nil
}

// gameTally adds up games at concurrency 1 and 2: their wall time, their
// number, and the machine's busy CPU time while they played.
type gameTally struct {
	took  [2]time.Duration
	count [2]int
	cpu   time.Duration
}

func (g *gameTally) perSec(ci int) float64 {
	return round(float64(g.count[ci])/g.took[ci].Seconds(), 1)
}

func (g *gameTally) cpuPerGame() float64 {
	return ms(g.cpu / time.Duration(g.count[0]+g.count[1]))
}

// gamesRound plays a round of instant engines' games with rn: 2 at
// concurrency 1, then 4 at concurrency 2, counted in g unless this is a
// warm-up.
func (b *bench) gamesRound(ctx context.Context, rn *tournament.Runner, set tournament.Settings, g *gameTally, count bool) error {
	for ci, n := range [2]int{2, 4} {
		c0, t0 := busyCPU(), time.Now()
		if _, _, err := b.games(ctx, rn, n, ci+1, instant(), instant(), set, nil); err != nil {
			return err
		}
		if count {
			g.cpu += busyCPU() - c0
			g.took[ci] += time.Since(t0)
			g.count[ci] += n
		}
	}
	return nil
}

// spawnCost times n starts of the engine binary with launcher l: start it,
// have it connect, close the connection, and see it exit.
// spawnTimes are the times of one engine's life without a game: from the
// launch to its connection (start), from closing the connection to the end
// of Stop (stop), and both (whole).
type spawnTimes struct{ start, stop, whole time.Duration }

func (b *bench) spawnCost(ctx context.Context, l *engines.Launcher, n int) ([]spawnTimes, error) {
	var costs []spawnTimes
	for range n {
		t0 := time.Now()
		p, c, err := l.Start(ctx, engines.Launch{Engine: instant(), Color: "black"})
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		c.Close()
		p.Stop(2 * time.Second)
		costs = append(costs, spawnTimes{start: t1.Sub(t0), stop: time.Since(t1), whole: time.Since(t0)})
	}
	return costs, nil
}

// spawnQuantiles gives the medians of each part.
func spawnQuantiles(ts []spawnTimes) spawnTimes {
	var start, stop, whole []time.Duration
	for _, t := range ts {
		start, stop, whole = append(start, t.start), append(stop, t.stop), append(whole, t.whole)
	}
	return spawnTimes{quantile(start, 0.5), quantile(stop, 0.5), quantile(whole, 0.5)}
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

// clock: (a) engines answering 15 ms into a 20 ms clock at concurrency 4 must
// never be flagged; (b) engines that never answer are flagged how late?
func (b *bench) clock(ctx context.Context, r *BenchResult) error {
	b.step("clock exactness: 15 ms answers under a 20 ms clock, concurrency 4")
	slow := instant("--delay", "15ms")
	var mu sync.Mutex
	moves, games := 0, 0
	var longest time.Duration
	for moves < b.n(1000) {
		played, _, err := b.games(ctx, b.runner, 4, 4, slow, slow, tournament.Settings{Game: "othello", MoveTimeMS: 20}, nil)
		if err != nil {
			return err
		}
		for _, p := range played {
			games++
			r.FalseTimeouts += p.Violations[0]["timeout"] + p.Violations[1]["timeout"]
			for _, m := range p.Moves {
				if !m.Auto {
					moves++
					longest = max(longest, m.Elapsed)
				}
			}
		}
	}
	r.ClockMoves = moves
	r.ClockMaxMS = round(float64(longest.Microseconds())/1000, 2)

	b.step("clock exactness: engines that never answer, concurrency 4")
	silent := instant("--silent")
	var late []time.Duration
	onMove := func(t tournament.Tick) {
		if t.Move.Auto && !t.Move.Pass {
			mu.Lock()
			late = append(late, t.FlagLate)
			mu.Unlock()
		}
	}
	set := tournament.Settings{Game: "othello", MoveTimeMS: 20, OnTimeout: tournament.OnTimeoutRandom, MaxTimeouts: 1000}
	for len(late) < b.n(500) {
		if _, _, err := b.games(ctx, b.runner, 4, 4, silent, silent, set, onMove); err != nil {
			return err
		}
	}
	r.TimeoutSamples = len(late)
	r.TimeoutFlagP50ms = round(float64(quantile(late, 0.5).Microseconds())/1000, 3)
	r.TimeoutFlagP99ms = round(float64(quantile(late, 0.99).Microseconds())/1000, 3)
	r.TimeoutFlagMaxMS = round(float64(quantile(late, 1).Microseconds())/1000, 3)
	return nil
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

func us(d time.Duration) float64 { return round(float64(d.Nanoseconds())/1000, 1) }

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func (r *BenchResult) print(w io.Writer) {
	fmt.Fprintf(w, "taikai bench (%d cores, %.1fs)\n", r.Cores, r.Seconds)
	if r.Affinity {
		fmt.Fprintf(w, "every game with --affinity\n")
	}
	if r.OverheadMoves > 0 {
		fmt.Fprintf(w, "\nper-move overhead (%d moves, %.0f moves/s)\n", r.OverheadMoves, r.MovesPerSec)
		fmt.Fprintf(w, "  referee turnaround      p50 %8.1f us   p99 %8.1f us   (games as serve plays them)\n", r.TurnaroundP50us, r.TurnaroundP99us)
		fmt.Fprintf(w, "  bare ping-pong          p50 %8.1f us   p99 %8.1f us\n", r.BareRoundtripUS, r.BareRoundtripP99us)
		fmt.Fprintf(w, "  ratio (target <= 2.5)   %.2f\n", r.TurnaroundRatio)
		if r.BaselineDisturbed {
			fmt.Fprintf(w, "  warning: the bare ping-pong took over 1.5 times the round trip of two clients taking turns: the baseline was disturbed in this run; use the ratio to taking turns\n")
		}
		fmt.Fprintf(w, "  bare, taking turns      p50 %8.1f us   p99 %8.1f us   (two clients, each idle during the other's turn, as in a game)\n", r.BareAlternatingUS, r.BareAlternatingP99us)
		fmt.Fprintf(w, "  ratio to taking turns   %.2f\n", r.TurnaroundRatioAlt)
		fmt.Fprintf(w, "  engines, no referee     p50 %8.1f us   p99 %8.1f us   (the same instant engines taking turns under a bare loop)\n", r.EnginesNoRefereeUS, r.EnginesNoRefereeP99us)
		fmt.Fprintf(w, "  ratio to no referee     %.2f\n", r.TurnaroundRatioEngines)
		fmt.Fprintf(w, "  with the live hub       p50 %8.1f us   p99 %8.1f us   (%.0f moves/s; every move published as serve does, nobody watching)\n", r.HubTurnaroundP50us, r.HubTurnaroundP99us, r.HubMovesPerSec)
		fmt.Fprintf(w, "  ratio to ping-pong      %.2f\n", r.HubTurnaroundRatio)
		if r.TurnaroundSandboxP50us > 0 {
			fmt.Fprintf(w, "  sandboxed engines       p50 %8.1f us   p99 %8.1f us\n", r.TurnaroundSandboxP50us, r.TurnaroundSandboxP99us)
		}
	}
	if r.GamesPerSec > 0 {
		fmt.Fprintf(w, "\ngame throughput\n")
		fmt.Fprintf(w, "  concurrency 1           %8.1f games/s\n", r.GamesPerSec)
		fmt.Fprintf(w, "  concurrency 2           %8.1f games/s\n", r.GamesPerSecC2)
		fmt.Fprintf(w, "  spawn floor             %8.1f games/s (engine start %.2f ms, two per game)\n", r.SpawnFloorGamesPerS, r.SpawnMS)
		fmt.Fprintf(w, "  ratio floor/achieved    %.2f at c1, %.2f at c2 (target <= 2)\n", r.ThroughputRatio, r.ThroughputRatioC2)
		if r.GamesPerSecSandbox > 0 {
			fmt.Fprintf(w, "  sandboxed, c1 / c2      %8.1f / %.1f games/s (%.2f / %.2f of unsandboxed)\n", r.GamesPerSecSandbox, r.GamesPerSecSandboxC2, r.SandboxGamesRatio, r.SandboxGamesRatioC2)
			fmt.Fprintf(w, "  engine start            %8.2f ms, sandboxed %.2f ms (+%.2f ms; bwrap adds %.2f ms to /bin/true here: %.2fx that)\n",
				r.EngineStartMS, r.EngineStartSandboxMS, r.SandboxStartAddedMS, r.BwrapTrueAddedMS, r.SandboxStartVsBwrap)
			fmt.Fprintf(w, "  engine stop             %8.2f ms, sandboxed %.2f ms\n", r.EngineStopMS, r.EngineStopSandboxMS)
			fmt.Fprintf(w, "  game, 10 ms a move      %8.0f ms, sandboxed %.0f ms (+%.1f%%; median of %.0f plies)\n",
				r.Game10msMS, r.Game10msSandboxMS, r.SandboxGame10msAddedPc, r.Game10msPlies)
			fmt.Fprintf(w, "  CPU per game            %8.1f ms, sandboxed %.1f ms (the whole machine's: +%.1f ms per engine's sandbox)\n",
				r.CPUPerGameMS, r.CPUPerGameSandboxMS, (r.CPUPerGameSandboxMS-r.CPUPerGameMS)/2)
		}
	}
	if r.Sandbox != "on" {
		fmt.Fprintf(w, "\nsandbox: %s\n", r.Sandbox)
	}
	if r.ClockMoves > 0 {
		fmt.Fprintf(w, "\nclock exactness (concurrency 4)\n")
		fmt.Fprintf(w, "  15 ms answers, 20 ms clock: %d false timeouts in %d moves (slowest %.2f ms)\n", r.FalseTimeouts, r.ClockMoves, r.ClockMaxMS)
		fmt.Fprintf(w, "  silent engines flagged after the deadline: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d flags; target p99 <= 5 ms)\n",
			r.TimeoutFlagP50ms, r.TimeoutFlagP99ms, r.TimeoutFlagMaxMS, r.TimeoutSamples)
	}
	if len(r.Workers) > 0 {
		fmt.Fprintf(w, "\nworkers (engines answer after 20 ms; each worker plays one game at a time)\n")
		for _, f := range r.Workers {
			fmt.Fprintf(w, "  %d worker(s)             %8.2f games/s   serve alone at concurrency %d %.2f games/s (ratio %.2f)   vs %d x one worker %.2f\n",
				f.Workers, f.GamesPerSec, f.Workers, f.ServeGamesPerS, f.VsServe, f.Workers, f.VsOneWorker)
		}
		fmt.Fprintf(w, "  targets: one worker within 10%% of serve alone (ratio >= 0.9); N workers >= 0.9 x N x one worker, up to the machine's %d cores\n", r.Cores)
	}
	if r.BytesPerGame > 0 {
		fmt.Fprintf(w, "\nstorage (synchronous=FULL: every game on disk before the next)\n")
		fmt.Fprintf(w, "  finished games          %8.0f games/s (%.0f bare inserts/s of the same bytes, ratio %.2f)\n", r.StoredGamesPerSec, r.BareInsertsPerSec, r.StorageRatio)
		fmt.Fprintf(w, "  bytes per game          %8.1f (of which moves %.1f, %.1f plies; target < 300)\n", r.BytesPerGame, r.MoveBytesPerGame, r.MovesPerStoredGame)
	}
}

// busyCPU is the CPU time the whole machine has spent busy so far, from
// /proc/stat: every process and the kernel's own work, without idle and
// without time taken by the hypervisor (steal); 0 if unreadable.
func busyCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} {
		if i < len(f) {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/stat: 100 on every Linux
// architecture Go supports.
const clockTicks = 100
