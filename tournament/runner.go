package tournament

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
)

// GameSpec is everything needed to play one game.
type GameSpec struct {
	ID           int64
	TournamentID int64
	Index        int64 // position in the tournament's schedule
	Black, White engines.Engine
	Settings     Settings
	Seed         uint64           // seeds the server's random moves; stored with the game
	LogDir       string           // directory for the engines' output (relative: under Runner.DataDir); "" discards it
	Tallies      [2]engines.Tally // black's and white's records in the tournament before this game (BYE)
	OnMove       func(Tick)       `json:"-"` // live moves; must not block
	// OnRestart is told that a game played on a worker starts again from the
	// beginning (its worker was lost); must not block.
	OnRestart func()     `json:"-"`
	Pair      int64      // the game pair it is one of, from 1; 0: none
	Slot      string     // the format's slot it fills (swiss, knockout), "" for a fixed schedule
	Opening   *SuiteLine // the opening it starts from, nil for the start position
}

// Played is a game as it was played: what the store keeps.
type Played struct {
	Spec GameSpec
	games.Record
	Nicks [2]string // names the clients gave themselves (NICK, OPEN)
	// WireNames are black's and white's names as the opponent's protocol
	// sent them, where it had to change them (othello-move sends "6321120"
	// as "n6321120"); "" where the name went as registered.
	WireNames [2]string
	StartedAt time.Time
	EndedAt   time.Time
	Logs      [2]string // paths of the engines' output, "" if not kept
	Pids      [2]int    // engine process ids (0 if not started); all are reaped when Play returns
	Exits     [2]string // how each engine process ended ("exit status 0", "signal: killed", ...)
	ConnectMS [2]int64  // how long each engine took from its start to its connection; 0 if it did not connect
	Detail    string    // why an engine failed to start, for the log
	// Refused is the move refused in the turn a timeout ended the game in
	// (cause after_refused), nil otherwise.
	Refused *RefusedMove
	// Sandbox is the sandbox state the game ran under: "on" (both engines
	// sandboxed) or "off".
	Sandbox string
	// Usage is how each engine process ended and what it used (the zero
	// Usage for one that did not start).
	Usage [2]engines.Usage
	// Worker is the worker process that played the game ("" for the server
	// itself), Attempt which delivery of the game it was (from 1; 0 for the
	// server itself): a game whose worker was lost is played again.
	Worker  string
	Attempt int
}

// Result is "black", "white" or "draw"; "" for an aborted game.
func (p *Played) Result() games.Result { return p.Outcome.Result() }

// Runner launches the engines of a game, referees it and cleans up after it.
type Runner struct {
	Launcher *engines.Launcher
	DataDir  string // a relative GameSpec.LogDir is under it
	Log      *slog.Logger
	// Affinity starts both engines of each game on one CPU, taking the
	// allowed CPUs in turn (serve/match --affinity, like fastchess's
	// -use-affinity); nothing changes it afterwards. Without it, sandboxed
	// engines with a CPU quota get CPUs of their own (gameCPUs).
	Affinity bool
	// People are the persons' seats (protocol engines.Human), nil if no
	// person plays here.
	People *People
}

// nextCPU counts the games given CPUs, to take the CPUs in turn.
var nextCPU atomic.Uint64

// gameCPUs returns the CPUs each seat's engine may run on (nil: any). With
// Affinity both seats share one CPU, taken in turn. Otherwise each
// sandboxed engine with a CPU quota gets CPUs of its own, as many as its
// quota rounded up, which its opponent's are not (seatCPUs), where there
// are CPUs enough for both: a hog then cannot slow its opponent (its
// sandbox holds them with a cpuset where it has one, else by affinity,
// docs/SANDBOX.md). On one CPU, or with fewer CPUs than the two seats
// need, or without a quota, nothing is pinned.
func (r *Runner) gameCPUs(players [2]engines.Engine) [2][]int {
	var seats [2][]int
	cpus, err := engines.AllowedCPUs()
	if err != nil || len(cpus) < 2 {
		return seats
	}
	if r.Affinity {
		c := []int{cpus[(nextCPU.Add(1)-1)%uint64(len(cpus))]}
		return [2][]int{c, c}
	}
	k := r.Launcher.SeatCPUs()
	if k == 0 || 2*k > len(cpus) {
		return seats
	}
	all := seatCPUs(cpus, nextCPU.Add(1)-1, k)
	for i, e := range players {
		if e.Protocol != engines.Human && r.Launcher.Sandboxed(e) {
			seats[i] = all[i]
		}
	}
	return seats
}

// seatCPUs gives game number g's two seats k CPUs each of cpus (at least
// 2k of them), disjoint: black's begin at the g*k-th, white's follow, so
// that successive games spread both seats over every CPU.
func seatCPUs(cpus []int, g uint64, k int) [2][]int {
	n := uint64(len(cpus))
	start := g * uint64(k) % n
	var seats [2][]int
	for i := range 2 {
		for j := range uint64(k) {
			seats[i] = append(seats[i], cpus[(start+uint64(i*k)+j)%n])
		}
	}
	return seats
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Play plays one game and always returns its record: a game that could not
// start ends with no_connect or crash, a cancelled one with aborted. Every
// process it started has been killed and reaped when it returns.
func (r *Runner) Play(ctx context.Context, spec GameSpec) *Played {
	p := &Played{Spec: spec, StartedAt: time.Now()}
	defer func() { p.EndedAt = time.Now() }()
	set := spec.Settings
	if err := set.Validate(); err != nil {
		p.Outcome = games.Outcome{Reason: games.ReasonAborted}
		p.Detail = err.Error()
		return p
	}
	p.Spec.Settings = set // with the defaults filled in, as the game is played
	players := [2]engines.Engine{spec.Black, spec.White}
	p.Sandbox = "off"
	if r.sandboxed(players[0]) && r.sandboxed(players[1]) {
		p.Sandbox = "on"
	}
	var persons [2]*engines.Person
	for i, e := range players {
		if e.Protocol == engines.Human && r.People != nil {
			persons[i] = r.People.open(spec, games.ColorAt(i))
		}
	}
	if persons[0] != nil || persons[1] != nil {
		defer r.People.closeGame(spec)
	}
	cpus := r.gameCPUs(players)

	// Launch both seats at once: a game waits for its slower engine, not both.
	var (
		procs [2]*engines.Process
		conns [2]engines.Stream
		errs  [2]error
		t0    [2]time.Time // when each launch began
		wg    sync.WaitGroup
	)
	for i := range 2 {
		c := games.ColorAt(i)
		la := engines.Launch{
			Engine: players[i], Color: c.String(), GameID: spec.ID,
			TimeMS: set.MoveTime(players[i].Protocol).Milliseconds(),
			Rule:   set.Rule, Size: set.Size, ConnectTimeout: set.connectTimeout(players[i]),
			CPUs: cpus[i],
		}
		if p, ok := engines.LookupProtocol(players[i].Protocol); ok {
			la.Env = engines.OptionEnv(p, set.Options)
		}
		if spec.LogDir != "" {
			la.LogPath = filepath.Join(spec.LogDir, LogName(spec.ID, c))
			if !filepath.IsAbs(la.LogPath) && r.DataDir != "" {
				la.LogPath = filepath.Join(r.DataDir, la.LogPath)
			}
			p.Logs[i] = la.LogPath
		}
		if persons[i] != nil {
			p.Logs[i] = ""
			continue // a person's seat: nothing to launch
		}
		if players[i].Protocol == engines.Human {
			errs[i] = fmt.Errorf("%w: nobody plays the person's seat here", engines.ErrRefused)
			continue
		}
		wg.Go(func() {
			t0[i] = time.Now()
			procs[i], conns[i], errs[i] = r.Launcher.Start(ctx, la)
			if errs[i] == nil {
				p.ConnectMS[i] = max(time.Since(t0[i]).Milliseconds(), 1)
			}
		})
	}
	wg.Wait()
	var overAtEnd [2]bool // a process killed for memory when the game ended
	defer func() {
		r.stop(procs)
		var oom [2]bool
		for i, pr := range procs {
			if pr != nil {
				p.Exits[i] = pr.ExitStatus()
				p.Usage[i] = pr.Usage()
				oom[i] = p.Usage[i].OOMKilled
			}
		}
		p.Outcome = memoryOutcome(p.Outcome, oom, overAtEnd)
		if l := p.Outcome.Loser; l != games.None && procs[l.Index()] != nil && procs[l.Index()].OverFolder() &&
			p.Outcome.Reason != games.ReasonMemory {
			// Stopped for filling its persistent folder: say so.
			p.Outcome.Cause = games.CauseFolder
		}
		var heads [2]string
		for i, pr := range procs {
			if pr != nil {
				heads[i] = pr.Head()
			}
		}
		p.Detail = explainStart(p, heads)
	}()
	for i, pr := range procs {
		if pr != nil {
			p.Pids[i] = pr.Pid()
		}
	}

	if errs[0] != nil || errs[1] != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		p.Outcome = launchOutcome(ctx, errs)
		p.Detail = errors.Join(errs[0], errs[1]).Error()
		// The pieces are those of the start position, where the game stayed.
		if rules, err := set.newRules(); err == nil {
			p.Stones[0], p.Stones[1] = rules.Stones()
		}
		r.log().Info("game not started", "game", spec.ID, "reason", p.Outcome.Reason, "detail", p.Detail)
		return p
	}

	for i, pr := range procs {
		if pr != nil && p.Logs[i] != "" {
			conns[i] = errorTap{Stream: conns[i], log: pr.LogLine}
		}
	}
	var seats [2]engines.Seat
	for i := range 2 {
		if persons[i] != nil {
			seats[i] = persons[i]
			continue
		}
		clock := set.clockFor(players[i].Protocol)
		seats[i] = newSeat(players[i].Protocol, conns[i], engines.SeatConfig{
			Color:    games.ColorAt(i),
			Rule:     set.Rule,
			MoveTime: clock.perMove, Total: clock.total, MemoryBytes: r.memoryOf(players[i]), Folder: procs[i].Folder(),
			Options: set.Options,
			Tallies: tallies(spec.Tallies, players, i),
		})
	}
	if errs := r.greet(ctx, set, seats, procs, players, t0, &p.ConnectMS); errs[0] != nil || errs[1] != nil {
		for _, s := range seats {
			s.Close()
		}
		p.Outcome = launchOutcome(ctx, errs)
		p.Detail = errors.Join(errs[0], errs[1]).Error()
		if rules, err := set.newRules(); err == nil {
			p.Stones[0], p.Stones[1] = rules.Stones()
		}
		r.log().Info("game not started", "game", spec.ID, "reason", p.Outcome.Reason, "detail", p.Detail)
		return p
	}
	ref := &Referee{
		Settings: set,
		Seats:    seats,
		Clocks:   [2]clockSpec{set.clockFor(players[0].Protocol), set.clockFor(players[1].Protocol)},
		Names:    [2]string{players[0].Name, players[1].Name},
		Rand:     rand.New(rand.NewPCG(spec.Seed, uint64(spec.ID))),
		OnMove:   spec.OnMove,
	}
	if spec.Opening != nil {
		ref.Opening = spec.Opening.Moves
	}
	for i := range 2 {
		p.WireNames[i] = wireName(players[i].Name, players[1-i].Protocol)
	}
	p.Outcome = ref.Run(ctx)
	p.Outcome = pipeExit(p.Outcome, players, procs, r.exitGrace())
	for i, pr := range procs {
		overAtEnd[i] = pr != nil && pr.OverMemory()
	}
	for i, s := range seats {
		p.Nicks[i] = s.Nick()
		s.Close()
	}
	p.Moves = ref.Moves()
	p.Violations = ref.Violations()
	if p.Outcome.Cause == games.CauseAfterRefused && p.Outcome.Loser != games.None {
		if m := ref.TimedOutAfterRefusal()[p.Outcome.Loser.Index()]; m != nil {
			c := *m
			c.Color = p.Outcome.Loser.String()
			p.Refused = &c
		}
	}
	p.Stones[0], p.Stones[1] = ref.Stones()
	return p
}

// greet lets both seats whose protocol opens with an exchange (pbrain's
// START and OK, NBoard's ping and pong) have it, at once, before the game's
// first clock starts: each within what is left of its connect timeout from
// its launch. An engine that exits first failed to start (ErrCrash, with
// its exit status); one that does not answer in time did not connect
// (ErrNoConnect). connectMS becomes the time to the answer.
func (r *Runner) greet(ctx context.Context, set Settings, seats [2]engines.Seat, procs [2]*engines.Process,
	players [2]engines.Engine, t0 [2]time.Time, connectMS *[2]int64) [2]error {
	var (
		errs [2]error
		wg   sync.WaitGroup
	)
	for i, s := range seats {
		g, ok := s.(engines.Greeter)
		if !ok {
			continue
		}
		wg.Go(func() {
			timeout := set.connectTimeout(players[i])
			gctx, cancel := context.WithDeadline(ctx, t0[i].Add(timeout))
			defer cancel()
			err := g.Greet(gctx, set.Size)
			switch {
			case err == nil:
				connectMS[i] = max(time.Since(t0[i]).Milliseconds(), 1)
				return
			case ctx.Err() != nil:
				errs[i] = ctx.Err()
				return
			case errors.Is(err, context.DeadlineExceeded):
				err = fmt.Errorf("%w: did not answer its protocol's greeting within %v", engines.ErrNoConnect, timeout)
			default:
				procs[i].Wait(time.Second)
				err = fmt.Errorf("%w: it exited before answering its protocol's greeting (%s)", engines.ErrCrash, procs[i].ExitStatus())
			}
			errs[i] = fmt.Errorf("engine %s (%s): %w", players[i].Name, games.ColorAt(i), err)
		})
	}
	wg.Wait()
	return errs
}

// explainStart is the game's Detail, with the reason an engine that
// failed at once could not run in its sandbox when its log says so (the
// game itself says only crash or disconnect).
func explainStart(p *Played, heads [2]string) string {
	switch p.Outcome.Reason {
	case games.ReasonCrash, games.ReasonDisconnect, games.ReasonNoConnect:
	default:
		return p.Detail
	}
	var why []string
	for i := range 2 {
		if l := p.Outcome.Loser; l != games.None && l.Index() != i {
			continue
		}
		msg := engines.NotFoundInSandbox(heads[i])
		if msg == "" {
			msg = engines.NotFoundInSandboxLog(p.Logs[i])
		}
		if msg != "" {
			why = append(why, fmt.Sprintf("%s (%s): %s", []string{p.Spec.Black.Name, p.Spec.White.Name}[i], games.ColorAt(i), msg))
		}
	}
	if len(why) == 0 {
		return p.Detail
	}
	if p.Detail != "" {
		why = append(why, p.Detail)
	}
	return strings.Join(why, "; ")
}

// sandboxed says whether an engine plays in the sandbox; a person's seat
// runs nothing, so it counts as sandboxed.
func (r *Runner) sandboxed(e engines.Engine) bool {
	return e.Protocol == engines.Human || r.Launcher.Sandboxed(e)
}

// exitGrace is the time an engine gets to exit by itself.
func (r *Runner) exitGrace() time.Duration {
	if r.Launcher.ExitGrace > 0 {
		return r.Launcher.ExitGrace
	}
	return engines.DefaultExitGrace
}

// pipeExit scores an engine on pipes whose output ended as what that end
// is: its exit (a brain dead of an uncaught exception). It waits up to
// grace for the process and, if it has exited, the disconnect becomes a
// crash, as GomocupJudge scores it; one still running closed its output
// and stays a disconnect. An engine on TCP may close its connection and
// live on, so its disconnect stays.
func pipeExit(out games.Outcome, players [2]engines.Engine, procs [2]*engines.Process, grace time.Duration) games.Outcome {
	if out.Reason != games.ReasonDisconnect || out.Cause != "" || out.Loser == games.None {
		return out
	}
	i := out.Loser.Index()
	proto, ok := engines.LookupProtocol(players[i].Protocol)
	if !ok || proto.Transport != engines.Stdio || procs[i] == nil || !procs[i].Wait(grace) {
		return out
	}
	out.Reason = games.ReasonCrash
	return out
}

// stop ends both engine processes at once, so that a game waits for one grace
// period, not two.
func (r *Runner) stop(procs [2]*engines.Process) {
	grace := r.exitGrace()
	var wg sync.WaitGroup
	for _, p := range procs {
		if p != nil {
			wg.Go(func() { p.Stop(grace) })
		}
	}
	wg.Wait()
}

// memoryOf is an engine's memory limit in bytes, 0 if it runs unbounded
// (unsandboxed).
func (r *Runner) memoryOf(e engines.Engine) int64 {
	if !r.Launcher.Sandboxed(e) {
		return 0
	}
	if e.MemoryMB > 0 {
		return int64(e.MemoryMB) << 20
	}
	return sandbox.DefaultMemory
}

// launchOutcome scores a game whose engines did not both connect: the seat that
// failed loses; if both failed nobody is to blame more, and it is a draw.
func launchOutcome(ctx context.Context, errs [2]error) games.Outcome {
	if ctx.Err() != nil {
		return games.Outcome{Reason: games.ReasonAborted}
	}
	if errors.Is(errs[0], engines.ErrRefused) || errors.Is(errs[1], engines.ErrRefused) {
		// Not the engine's fault: this server does not run it (no sandbox).
		return games.Outcome{Reason: games.ReasonAborted}
	}
	if ServerFault(errs[0]) || ServerFault(errs[1]) {
		// The server's own failure (issue 36): aborted, so played again.
		return games.Outcome{Reason: games.ReasonAborted, Cause: games.CauseServer}
	}
	reason := func(err error) string {
		switch {
		case errors.Is(err, engines.ErrMemory):
			return games.ReasonMemory
		case errors.Is(err, engines.ErrCrash):
			return games.ReasonCrash
		}
		return games.ReasonNoConnect
	}
	switch {
	case errs[0] != nil && errs[1] != nil:
		return games.Outcome{Reason: reason(errs[0])}
	case errs[0] != nil:
		return games.Outcome{Winner: games.White, Loser: games.Black, Reason: reason(errs[0])}
	default:
		return games.Outcome{Winner: games.Black, Loser: games.White, Reason: reason(errs[1])}
	}
}

// ServerFault reports whether err is the server's own failure, not an
// engine's (engines.ServerFault). A game that fails so is played again,
// never scored.
func ServerFault(err error) bool { return engines.ServerFault(err) }

// memoryOutcome charges a game to an engine that went over its memory limit:
// if the side the game ended against (it disconnected, crashed, timed out
// ...) had a process killed for memory, it loses by reason memory. A game
// decided on the board stays as it is, unless one engine (not both) was
// already over its limit when it ended (overAtEnd): the engine's own
// process may live on when the kernel kills only a child, and its game can
// end on the board before the launcher's poll has seen the kill (seen: a
// whole game of instant moves in the 90 ms between the two). An aborted
// game stays as it is.
func memoryOutcome(o games.Outcome, oom, overAtEnd [2]bool) games.Outcome {
	switch {
	case o.Reason == games.ReasonNormal && overAtEnd[0] != overAtEnd[1]:
		loser := games.Black
		if overAtEnd[1] {
			loser = games.White
		}
		return games.Outcome{Winner: loser.Opponent(), Loser: loser, Reason: games.ReasonMemory}
	case o.Reason == games.ReasonNormal || o.Reason == games.ReasonAborted || o.Reason == games.ReasonMemory:
		return o
	case o.Loser != games.None && oom[o.Loser.Index()]:
		return games.Outcome{Winner: o.Loser.Opponent(), Loser: o.Loser, Reason: games.ReasonMemory}
	case o.Loser == games.None && oom[0] != oom[1]:
		// Nobody was blamed (both failed): the one over its limit is.
		loser := games.Black
		if oom[1] {
			loser = games.White
		}
		return games.Outcome{Winner: loser.Opponent(), Loser: loser, Reason: games.ReasonMemory}
	}
	return o
}

// LogName is the file name of a seat's output log in its game's log directory.
func LogName(gameID int64, c games.Color) string {
	return strconv.FormatInt(gameID, 10) + "-" + c.String() + ".log"
}

// newSeat wraps a stream in its protocol's adapter.
func newSeat(proto string, c engines.Stream, cfg engines.SeatConfig) engines.Seat {
	p, ok := engines.LookupProtocol(proto)
	if !ok {
		panic(fmt.Sprintf("tournament: no adapter for protocol %q", proto))
	}
	return p.New(c, cfg)
}

// tallies returns seat i's tournament record and its opponent's, named.
func tallies(t [2]engines.Tally, players [2]engines.Engine, i int) [2]engines.Tally {
	own, opp := t[i], t[1-i]
	if own.Name == "" {
		own.Name = players[i].Name
	}
	if opp.Name == "" {
		opp.Name = players[1-i].Name
	}
	return [2]engines.Tally{own, opp}
}

// wireName is name as protocol sends it, "" if unchanged.
func wireName(name, protocol string) string {
	p, _ := engines.LookupProtocol(protocol)
	if p.WireName == nil {
		return ""
	}
	if w := p.WireName(name); w != name {
		return w
	}
	return ""
}

// errorTap is an engine's stream that keeps in the engine's log every ERROR
// line the server sends it ("[sent] ERROR 2"), beside the engine's own
// output: a student reading the log of a game lost on time sees that their
// move was refused first. A pipe engine's LineLogger is kept.
type errorTap struct {
	engines.Stream
	log func(string)
}

func (t errorTap) Write(b []byte) (int, error) {
	for rest := b; len(rest) > 0; {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if bytes.HasPrefix(line, []byte("ERROR")) {
			t.log("[sent] " + string(bytes.TrimRight(line, "\r")))
		}
		rest = after
	}
	return t.Stream.Write(b)
}

// LogLine passes a protocol's log lines on: to the stream's own log if it
// keeps one (a pipe engine's), else to the engine's.
func (t errorTap) LogLine(line string) {
	if l, ok := t.Stream.(engines.LineLogger); ok {
		l.LogLine(line)
		return
	}
	t.log(line)
}
