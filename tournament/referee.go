package tournament

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// Tick is a move as it happens, for live viewers.
type Tick struct {
	Ply       int
	Move      games.Ply
	Remaining [2]time.Duration // black, white; 0 when the side has no total clock
	// Opening: the move is one of the opening's, played by the server before
	// the engines were told the game began.
	Opening bool
}

// Referee runs one game between two connected seats. It owns the rules and the
// clocks; the seats own the wire.
type Referee struct {
	Settings Settings
	Seats    [2]engines.Seat // black, white
	Clocks   [2]clockSpec
	Names    [2]string  // registered names, for START
	Rand     *rand.Rand // random moves on timeout
	OnMove   func(Tick) // called after every move; must not block
	// Opening is played before the seats are told the game began: moves from
	// the start position, recorded with no time, shown to the seats as their
	// protocol shows a position (engines.Start.Opening).
	Opening []games.Move

	rules      games.Rules
	moves      []games.Ply
	violations [2]games.Violations
	// refused is each side's last move the rules refused during its
	// current turn; nil once it moves.
	refused     [2]*RefusedMove
	lastRefused [2]*RefusedMove // the refusal a timeout followed, for the record
	errors      [2]int
	timeouts    [2]int // in a row
	remaining   [2]time.Duration
	passes      int // in a row
	pending     []games.Ply
	shown       time.Time // when the last update went out, for pace_ms
	opening     bool      // the opening is being played

	// Play: the seats' events and the clock take turns under mu.
	mu        sync.Mutex
	turnStart time.Time // when the side to move was given the move
	deadline  time.Time // when its time runs out
	clock     *time.Timer
	arriving  [2]atomic.Int32 // events of each seat waiting for mu
	over      bool
	out       games.Outcome
	done      chan struct{} // closed when the game is over
}

// Moves returns the moves played.
func (r *Referee) Moves() []games.Ply { return r.moves }

// RefusedMove is a move the rules refused: what the engine sent and why.
type RefusedMove struct {
	Color string `json:"color,omitempty"` // black or white, in a game's record
	Move  string `json:"move"`            // as the game writes moves ("d3", "9-14")
	Why   string `json:"why"`             // a games.Refusal name: no_flip, occupied...
}

// TimedOutAfterRefusal returns, for each side, the move refused during the
// turn in which it then ran out of time (nil if its game did not end so):
// an engine that waits after its move was refused.
func (r *Referee) TimedOutAfterRefusal() [2]*RefusedMove { return r.lastRefused }

// Violations returns the refused commands of black and white. Read it once
// the seats are closed: a refused line that arrives as the game ends is still
// counted.
func (r *Referee) Violations() [2]games.Violations { return r.violations }

// Stones returns the stones of black and white on the board.
func (r *Referee) Stones() (int, int) { return r.rules.Stones() }

// Board returns the current position.
func (r *Referee) Board() games.Board { return r.rules }

func (r *Referee) now() time.Time { return time.Now() }

// Run plays the game to its end and tells both seats how it ended. It returns
// when the game is over, the context is done (the game is aborted), or a seat
// fails. It does not close the seats.
//
// The referee has no goroutine of its own during play: each seat's events are
// handled on the seat's reader goroutine (see engines.Seat), and the clock on
// a timer's. A mutex puts them in one order.
func (r *Referee) Run(ctx context.Context) games.Outcome {
	var err error
	if r.rules, err = r.Settings.newRules(); err != nil {
		return games.Outcome{Reason: games.ReasonAborted, Cause: err.Error()}
	}
	if r.Rand == nil {
		r.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	for i := range 2 {
		r.violations[i] = games.Violations{}
		r.remaining[i] = r.Clocks[i].total
	}
	// A move per point of the board, and some passes, before the slice grows.
	n := r.rules.Size()
	r.moves = make([]games.Ply, 0, n*n+8)
	if err := r.playOpening(); err != nil {
		return games.Outcome{Reason: games.ReasonAborted, Cause: err.Error()}
	}
	r.done = make(chan struct{})
	r.mu.Lock()
	r.clock = time.AfterFunc(time.Hour, func() { r.onClock(ctx) })
	for i := range 2 {
		from := games.ColorAt(i)
		r.Seats[i].Listen(func(ev engines.Action) { r.handle(ctx, from, ev) })
	}
	r.begin(ctx)
	r.mu.Unlock()

	select {
	case <-r.done:
	case <-ctx.Done():
		r.mu.Lock()
		r.end(games.Outcome{Reason: games.ReasonAborted})
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clock.Stop()
	r.finish(ctx, r.out)
	return r.out
}

// playOpening plays the opening's moves, which a suite has checked; a move
// the rules refuse aborts the game (a suite for another rule or board).
func (r *Referee) playOpening() error {
	r.opening = true
	defer func() { r.opening = false }()
	for i, m := range r.Opening {
		turn := r.rules.Turn()
		if why, ok := r.rules.Check(m); !ok || turn == games.None || r.rules.Finished() {
			return fmt.Errorf("opening move %d (%s) is not legal here (%s)", i+1, games.Text(r.Settings.Game, m), why)
		}
		r.apply(turn, m, false, 0, "")
	}
	r.pending = r.pending[:0]
	r.passes = 0
	return nil
}

// begin announces the game: the side not to move first, so that the mover's
// clock starts last.
func (r *Referee) begin(ctx context.Context) {
	turn := r.rules.Turn()
	for _, c := range []games.Color{turn.Opponent(), turn} {
		i := c.Index()
		r.turnStart = r.now() // the mover's, the last: see advance
		err := r.Seats[i].Begin(ctx, engines.Start{
			Color: c, Opponent: r.Names[1-i], Board: r.rules, Turn: turn, Remaining: r.remaining[i],
			Opening: r.moves,
		})
		if err != nil {
			r.end(r.failed(c, err))
			return
		}
	}
	if over, out := r.settle(); over {
		r.end(out)
		return
	}
	r.shown = r.turnStart
	r.arm()
}

// arm sets the clock of the side to move, whose turn started at r.turnStart.
func (r *Referee) arm() {
	r.deadline = r.turnStart.Add(r.allowance(r.rules.Turn().Index()))
	r.clock.Reset(time.Until(r.deadline))
}

// end records the outcome; Run tells the seats.
func (r *Referee) end(out games.Outcome) {
	if r.over {
		return
	}
	r.over, r.out = true, out
	r.clock.Stop()
	close(r.done)
}

// handle takes one event of the seat playing from, on that seat's reader
// goroutine.
func (r *Referee) handle(ctx context.Context, from games.Color, ev engines.Action) {
	i := from.Index()
	r.arriving[i].Add(1)
	r.mu.Lock()
	r.arriving[i].Add(-1)
	defer r.mu.Unlock()
	if r.over {
		if ev.Kind == engines.Violation {
			// Still counted: the adapter has answered the line already, and it
			// may have been sent before the client could know the game was
			// over. Violations is read only after the seats are closed, and so
			// after this handler.
			r.violations[i][ev.What]++
		}
		return
	}
	next, out, over := r.event(ctx, from, ev, r.rules.Turn(), r.turnStart, r.deadline)
	switch {
	case over:
		r.end(out)
	case !next.IsZero():
		r.turnStart = next
		r.arm()
	default:
		// The clock may have run out while this line waited for the lock.
		r.checkClock(ctx)
	}
}

// onClock runs when the clock of the side to move may have run out.
func (r *Referee) onClock(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || r.now().Before(r.deadline) {
		return // the turn changed and the clock was set again
	}
	if r.arriving[r.rules.Turn().Index()].Load() > 0 {
		// A line of the mover, read before the deadline perhaps, waits for the
		// lock: its handler judges it and then looks at the clock.
		return
	}
	r.checkClock(ctx)
}

// unreadWait is how long after its deadline a side's flag waits for input
// the server has received from it but not yet read (engines.Unread): a line
// that arrived in time is judged by when it arrived, not flagged because the
// server's reader ran late. The reader ends the wait: a line it delivers is
// judged and looks at the clock (handle), and when it waits on an empty
// socket it wakes the clock (onClock). The wait is bounded: a client that
// trickles bytes without a newline must not hold its flag up.
const unreadWait = 100 * time.Millisecond

// checkClock flags the side to move if its time is up.
func (r *Referee) checkClock(ctx context.Context) {
	now := r.now()
	if now.Before(r.deadline) {
		return
	}
	if u, ok := r.Seats[r.rules.Turn().Index()].(engines.Unread); ok && now.Before(r.deadline.Add(unreadWait)) &&
		// The wake may come after the turn changed: onClock looks at the
		// deadline of the turn it finds.
		u.Unread(func() { go r.onClock(ctx) }) {
		r.clock.Reset(time.Until(r.deadline.Add(unreadWait))) // its reader judges the line first
		return
	}
	next, out, over := r.timeout(ctx, r.rules.Turn(), r.deadline.Sub(r.turnStart))
	if over {
		r.end(out)
		return
	}
	r.turnStart = next
	r.arm()
}

// allowance is the time the side i has for its current move.
func (r *Referee) allowance(i int) time.Duration {
	c := r.Clocks[i]
	a := c.perMove
	if c.total > 0 {
		t := max(r.remaining[i], 0) + c.byoyomi
		if a == 0 || t < a {
			a = t
		}
	}
	if a <= 0 {
		a = DefaultMoveTime
	}
	return a + c.grace
}

// event handles one client event. It returns the new turn start when the turn
// changed, or the outcome when the game is over.
func (r *Referee) event(ctx context.Context, from games.Color, ev engines.Action, mover games.Color, turnStart, deadline time.Time) (time.Time, games.Outcome, bool) {
	fi := from.Index()
	seat := r.Seats[fi]
	switch ev.Kind {
	case engines.Attempt:
		if from == mover && ev.At.After(deadline) {
			// Read after the deadline: the clock had run out.
			next, out, over := r.timeout(ctx, mover, deadline.Sub(turnStart))
			if over {
				return time.Time{}, out, true
			}
			if err := seat.Refuse(ctx, ev.Move, games.NotYourTurn); err != nil {
				return time.Time{}, r.failed(from, err), true
			}
			return next, games.Outcome{}, false
		}
		if from != mover {
			r.violations[fi][games.NotYourTurn.String()]++
			if err := seat.Refuse(ctx, ev.Move, games.NotYourTurn); err != nil {
				return time.Time{}, r.failed(from, err), true
			}
			if r.tooMany(fi) {
				return time.Time{}, r.lost(from, games.ReasonIllegal, games.CauseMaxErrors), true
			}
			return time.Time{}, games.Outcome{}, false
		}
		if why, ok := r.rules.Check(ev.Move); !ok {
			r.violations[fi][why.String()]++
			r.refused[fi] = &RefusedMove{Move: games.Text(r.Settings.Game, ev.Move), Why: why.String()}
			if seat.Traits().IllegalLoses {
				return time.Time{}, r.lost(from, games.ReasonIllegal, games.CauseInvalidMove), true
			}
			if err := seat.Refuse(ctx, ev.Move, why); err != nil {
				return time.Time{}, r.failed(from, err), true
			}
			if r.tooMany(fi) {
				return time.Time{}, r.lost(from, games.ReasonIllegal, games.CauseMaxErrors), true
			}
			return time.Time{}, games.Outcome{}, false
		}
		elapsed := max(ev.At.Sub(turnStart), 0)
		r.timeouts[fi] = 0
		r.refused[fi] = nil
		r.apply(from, ev.Move, false, elapsed, engines.OneLineNotes(ev.Note))
		return r.advance(ctx)
	case engines.Violation:
		r.violations[fi][ev.What]++
		if !ev.Ignored && r.tooMany(fi) {
			return time.Time{}, r.lost(from, games.ReasonIllegal, games.CauseMaxErrors), true
		}
	case engines.Chat:
		// What one engine says reaches the other as one printable line,
		// whatever the protocols (issue 36: "SAY hi\rTURN 1").
		nick, text := engines.OneLine(ev.Nick), engines.OneLine(ev.What)
		for _, s := range r.Seats {
			if err := s.Relay(ctx, from, nick, text); err != nil {
				// The listener's problem shows up as its own disconnect event.
				continue
			}
		}
	case engines.Left:
		if ev.Reason == games.ReasonAborted {
			return time.Time{}, games.Outcome{Reason: games.ReasonAborted, Cause: ev.Cause}, true
		}
		return time.Time{}, r.lost(from, ev.Reason, ev.Cause), true
	}
	return time.Time{}, games.Outcome{}, false
}

// tooMany counts a refused command and reports whether the seat is over its limit.
func (r *Referee) tooMany(i int) bool {
	r.errors[i]++
	if r.Seats[i].Traits().Person {
		return false // a misclick is not a loss
	}
	limit := r.Settings.maxErrors()
	return limit >= 0 && r.errors[i] > limit
}

// timeout handles a seat that did not move in time.
// It returns the new turn's start, or the outcome when the game is over.
func (r *Referee) timeout(ctx context.Context, mover games.Color, used time.Duration) (time.Time, games.Outcome, bool) {
	mi := mover.Index()
	r.violations[mi]["timeout"]++
	r.timeouts[mi]++
	outOfTotal := r.Clocks[mi].total > 0 && max(r.remaining[mi], 0)+r.Clocks[mi].byoyomi <= used
	refused := r.refused[mi]
	r.refused[mi] = nil
	if r.Seats[mi].Traits().Person {
		// A person's clock is the server's idle bound: they went away.
		return time.Time{}, r.lost(mover, games.ReasonResign, games.CauseIdle), true
	}
	if r.Settings.OnTimeout != OnTimeoutRandom || outOfTotal || r.Seats[mi].Traits().ForfeitOnTimeout || r.timeouts[mi] >= r.Settings.maxTimeouts() {
		cause := ""
		if refused != nil {
			// The commonest student bug: the engine's move was refused and it
			// waited, as if the server would move for it.
			cause, r.lastRefused[mi] = games.CauseAfterRefused, refused
		}
		return time.Time{}, r.lost(mover, games.ReasonTimeout, cause), true
	}
	r.apply(mover, r.rules.Random(r.Rand), true, used, "")
	return r.advance(ctx)
}

// apply plays a checked move and records it.
func (r *Referee) apply(c games.Color, m games.Move, auto bool, elapsed time.Duration, note string) {
	i := c.Index()
	if r.Clocks[i].total > 0 {
		r.remaining[i] = max(r.remaining[i], 0) - elapsed
	}
	r.rules.Play(m)
	if m.Pass {
		r.passes++
	} else {
		r.passes = 0
	}
	if m.Pass {
		m.X, m.Y = -1, -1
	}
	rec := games.Ply{Color: c, Move: m, Auto: auto, MS: elapsed.Milliseconds(), Elapsed: elapsed, Note: note}
	r.moves = append(r.moves, rec)
	r.pending = append(r.pending, rec)
	if r.OnMove != nil {
		t := Tick{Ply: len(r.moves), Move: rec, Remaining: r.remaining, Opening: r.opening}
		r.OnMove(t)
	}
}

// settle plays the passes the server makes for auto-pass seats and reports
// whether the game is over.
func (r *Referee) settle() (bool, games.Outcome) {
	for {
		if r.passes >= 2 {
			return true, r.normalEnd()
		}
		turn := r.rules.Turn()
		if turn == games.None || r.rules.Finished() {
			// A seat that must say PASS itself (othello-move) still does so: the
			// protocol ends every normal game with two passes.
			if turn != games.None && r.rules.CanPass() && !r.Seats[turn.Index()].Traits().AutoPass {
				return false, games.Outcome{}
			}
			return true, r.normalEnd()
		}
		if !r.rules.MustPass() || !r.Seats[turn.Index()].Traits().AutoPass {
			return false, games.Outcome{}
		}
		r.apply(turn, games.PassMove, true, 0, "")
	}
}

// advance tells both seats about the moves since the last update and gives the
// move to the side to play; it returns when the new turn started.
func (r *Referee) advance(ctx context.Context) (time.Time, games.Outcome, bool) {
	r.pace(ctx)
	over, out := r.settle()
	turn := r.rules.Turn()
	if over {
		turn = games.None
	}
	// The next mover last, so that nothing else the referee does (the other
	// seat's write, that engine waking up) falls inside the mover's time. Its
	// clock starts just before its write: a reading taken after the write could
	// be late by however long this goroutine waits to run again on a loaded
	// machine, and charge the engine less than it used; this way the clock can
	// only include the write itself.
	order := [2]games.Color{turn.Opponent(), turn}
	if turn == games.None {
		order = [2]games.Color{games.Black, games.White}
	}
	var start time.Time
	for k, c := range order {
		i := c.Index()
		if k == 1 {
			start = r.now()
		}
		err := r.Seats[i].Update(ctx, engines.Update{Moves: r.pending, Board: r.rules, Turn: turn, Remaining: r.remaining[i]})
		if err != nil && !over {
			r.pending = r.pending[:0]
			return time.Time{}, r.failed(c, err), true
		}
	}
	r.pending = r.pending[:0]
	r.shown = start
	if over {
		return time.Time{}, out, true
	}
	return start, games.Outcome{}, false
}

// pace holds a move back until pace_ms has passed since the last one was shown.
// No clock runs meanwhile: the mover's stopped when its move was read, the next
// mover's starts when it is told.
func (r *Referee) pace(ctx context.Context) {
	wait := time.Duration(r.Settings.PaceMS)*time.Millisecond - time.Since(r.shown)
	if r.Settings.PaceMS <= 0 || wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (r *Referee) normalEnd() games.Outcome {
	return games.Outcome{Winner: r.rules.Winner(), Reason: games.ReasonNormal}
}

// lost ends the game against side c.
// failed is the end of a game whose write to c failed: c left, unless the
// server's own socket failed (issue 36): then it is aborted, to be played
// again.
func (r *Referee) failed(c games.Color, err error) games.Outcome {
	if engines.ServerFault(err) {
		return games.Outcome{Reason: games.ReasonAborted, Cause: games.CauseServer}
	}
	return r.lost(c, games.ReasonDisconnect, "")
}

func (r *Referee) lost(c games.Color, reason, cause string) games.Outcome {
	return games.Outcome{Winner: c.Opponent(), Reason: reason, Cause: cause, Loser: c}
}

// finish tells each seat how the game ended.
func (r *Referee) finish(ctx context.Context, out games.Outcome) {
	// Writing the end must not hang on a client that stopped reading.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	black, white := r.rules.Stones()
	if sc, ok := r.rules.(games.Scorer); ok {
		black, white = sc.Score()
	}
	stones := [2]int{black, white}
	left := out.Reason == games.ReasonDisconnect || out.Reason == games.ReasonClose
	for i := range 2 {
		c := games.ColorAt(i)
		res := engines.Ending{Reason: out.Reason, Cause: out.Cause, Own: stones[i], Opp: stones[1-i]}
		switch {
		case out.Reason == games.ReasonAborted:
		case out.Winner == c:
			res.Verdict = engines.Win
		case out.Winner == c.Opponent():
			res.Verdict = engines.Lose
		}
		if left && out.Loser == c.Opponent() {
			res.OpponentLeft = true
			_ = r.Seats[i].OpponentLeft(ctx)
		}
		_ = r.Seats[i].End(ctx, res)
	}
}
