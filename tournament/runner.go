package tournament

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/engines/protocol/gomokuturn"
	"github.com/taikai-dev/taikai/engines/protocol/othelloboard"
	"github.com/taikai-dev/taikai/engines/protocol/othellomove"
)

// GameSpec is everything needed to play one game.
type GameSpec struct {
	ID           int64
	TournamentID int64
	Index        int64 // position in the tournament's schedule
	Black, White engines.Engine
	Settings     Settings
	Seed         uint64             // seeds the server's random moves; stored with the game
	LogDir       string             // directory for the engines' output (relative: under Runner.DataDir); "" discards it
	Records      [2]protocol.Record // black's and white's records before this game (BYE)
	OnMove       func(Tick)         // live moves; must not block
}

// Played is a game as it was played: what the store keeps.
type Played struct {
	Spec       GameSpec
	Moves      []Move
	Outcome    Outcome
	Violations [2]Violations
	Nicks      [2]string // names the clients gave themselves (NICK, OPEN)
	Stones     [2]int    // black and white stones at the end
	StartedAt  time.Time
	EndedAt    time.Time
	Logs       [2]string // paths of the engines' output, "" if not kept
	Pids       [2]int    // engine process ids (0 if not started); all are reaped when Play returns
	Exits      [2]string // how each engine process ended ("exit status 0", "signal: killed", ...)
	Detail     string    // why an engine failed to start, for the log
}

// Result is "black", "white" or "draw"; "" for an aborted game.
func (p *Played) Result() string {
	if p.Outcome.Reason == protocol.ReasonAborted {
		return ""
	}
	return ResultString(p.Outcome.Winner)
}

// ResultString names a winner as stored: black, white or draw.
func ResultString(winner protocol.Color) string {
	switch winner {
	case protocol.Black:
		return "black"
	case protocol.White:
		return "white"
	}
	return "draw"
}

// Runner launches the engines of a game, referees it and cleans up after it.
type Runner struct {
	Launcher *engines.Launcher
	DataDir  string // a relative GameSpec.LogDir is under it
	Log      *slog.Logger
	// Affinity starts both engines of each game on one CPU, taking the
	// allowed CPUs in turn (serve/match --affinity, like fastchess's
	// -use-affinity); nothing changes it afterwards.
	Affinity bool
}

// nextCPU counts the games started with Affinity, to take the CPUs in turn.
var nextCPU atomic.Uint64

// gameCPUs returns the CPU a game's engines start on, none without Affinity.
func (r *Runner) gameCPUs() []int {
	if !r.Affinity {
		return nil
	}
	cpus, err := engines.AllowedCPUs()
	if err != nil || len(cpus) < 2 {
		return nil
	}
	return []int{cpus[(nextCPU.Add(1)-1)%uint64(len(cpus))]}
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
		p.Outcome = Outcome{Reason: protocol.ReasonAborted}
		p.Detail = err.Error()
		return p
	}
	p.Spec.Settings = set // with the defaults filled in, as the game is played
	players := [2]engines.Engine{spec.Black, spec.White}
	cpus := r.gameCPUs()

	// Launch both seats at once: a game waits for its slower engine, not both.
	var (
		procs [2]*engines.Process
		conns [2]net.Conn
		errs  [2]error
		wg    sync.WaitGroup
	)
	for i := range 2 {
		c := colorOf(i)
		la := engines.Launch{
			Engine: players[i], Color: c.String(), GameID: spec.ID,
			TimeMS: set.MoveTime(players[i].Protocol).Milliseconds(),
			Rule:   set.Rule, Size: set.Size, ConnectTimeout: set.connectTimeout(),
			CPUs: cpus,
		}
		if set.BoardOrder != "" {
			la.Env = []string{"TAIKAI_BOARD_ORDER=" + set.BoardOrder}
		}
		if spec.LogDir != "" {
			la.LogPath = filepath.Join(spec.LogDir, LogName(spec.ID, c))
			if !filepath.IsAbs(la.LogPath) && r.DataDir != "" {
				la.LogPath = filepath.Join(r.DataDir, la.LogPath)
			}
			p.Logs[i] = la.LogPath
		}
		wg.Go(func() {
			procs[i], conns[i], errs[i] = r.Launcher.Start(ctx, la)
		})
	}
	wg.Wait()
	defer func() {
		r.stop(procs)
		for i, pr := range procs {
			if pr != nil {
				p.Exits[i] = pr.ExitStatus()
			}
		}
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
		r.log().Info("game not started", "game", spec.ID, "reason", p.Outcome.Reason, "detail", p.Detail)
		return p
	}

	var seats [2]protocol.Seat
	for i := range 2 {
		seats[i] = newSeat(players[i].Protocol, conns[i], colorOf(i), &set)
	}
	ref := &Referee{
		Settings: set,
		Seats:    seats,
		Clocks:   [2]clockSpec{set.clockFor(players[0].Protocol), set.clockFor(players[1].Protocol)},
		Names:    [2]string{players[0].Name, players[1].Name},
		Records:  spec.Records,
		Rand:     rand.New(rand.NewPCG(spec.Seed, uint64(spec.ID))),
		OnMove:   spec.OnMove,
	}
	p.Outcome = ref.Run(ctx)
	for i, s := range seats {
		p.Nicks[i] = s.Nick()
		s.Close()
	}
	p.Moves = ref.Moves()
	p.Violations = ref.Violations()
	p.Stones[0], p.Stones[1] = ref.Stones()
	return p
}

// stop ends both engine processes at once, so that a game waits for one grace
// period, not two.
func (r *Runner) stop(procs [2]*engines.Process) {
	grace := r.Launcher.ExitGrace
	if grace <= 0 {
		grace = engines.DefaultExitGrace
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		if p != nil {
			wg.Go(func() { p.Stop(grace) })
		}
	}
	wg.Wait()
}

// launchOutcome scores a game whose engines did not both connect: the seat that
// failed loses; if both failed nobody is to blame more, and it is a draw.
func launchOutcome(ctx context.Context, errs [2]error) Outcome {
	if ctx.Err() != nil {
		return Outcome{Reason: protocol.ReasonAborted}
	}
	reason := func(err error) string {
		if errors.Is(err, engines.ErrCrash) {
			return protocol.ReasonCrash
		}
		return protocol.ReasonNoConnect
	}
	switch {
	case errs[0] != nil && errs[1] != nil:
		return Outcome{Reason: reason(errs[0])}
	case errs[0] != nil:
		return Outcome{Winner: protocol.White, Loser: protocol.Black, Reason: reason(errs[0])}
	default:
		return Outcome{Winner: protocol.Black, Loser: protocol.White, Reason: reason(errs[1])}
	}
}

// LogName is the file name of a seat's output log in its game's log directory.
func LogName(gameID int64, c protocol.Color) string {
	return strconv.FormatInt(gameID, 10) + "-" + c.String() + ".log"
}

// newSeat wraps a connection in its protocol's adapter.
func newSeat(proto string, c net.Conn, color protocol.Color, s *Settings) protocol.Seat {
	switch proto {
	case othelloboard.Protocol:
		return othelloboard.New(c, color, othelloboard.Options{RowMajor: s.BoardOrder == "row"})
	case othellomove.Protocol:
		return othellomove.New(c, color)
	case gomokuturn.Protocol:
		return gomokuturn.New(c, color, gomokuturn.Options{EndMessage: s.EndMessage})
	}
	panic(fmt.Sprintf("tournament: no adapter for protocol %q", proto))
}
