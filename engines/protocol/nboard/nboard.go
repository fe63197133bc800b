// Package nboard is the GUI side of the NBoard protocol, version 2
// (PROTOCOLS.md §6): an Othello engine (Edax, NTest, ...) is a child
// process that reads commands on its standard input and answers on its
// standard output.
package nboard

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// Protocol is this protocol's id.
const Protocol = "nboard"

// DefaultDepth is "set depth" unless the option depth says otherwise, for
// a game with DepthMoveTime a move. Edax and NTest, the best-known NBoard
// engines, search to the depth they are set and ignore the clock in set
// game: sent 60, both lost on time at their first or second move. Edax reads
// the depth as its level (src/nboard.c, LEVEL in src/search.c): up to level
// 10 it searches the midgame to that depth with probcut and solves the
// endgame from twice as many empties (20 at level 10), a fraction of a
// second a move on one core; from level 11 it solves from 21-24 empties,
// which takes seconds on a slow or shared core. Hence 10 at 5 s a move.
const DefaultDepth = 10

// DepthMoveTime is the move time DefaultDepth is for.
const DepthMoveTime = 5 * time.Second

// DepthFor is the default depth for a seat's clock: DefaultDepth at
// DepthMoveTime a move, one ply less for each halving of the time (a
// search's time at least doubles with each ply) down to 4, one more for each
// doubling up to 20. A game with only a total clock counts it as 30 moves.
func DepthFor(moveTime, total time.Duration) int {
	t := moveTime
	if t <= 0 && total > 0 {
		t = total / 30
	}
	if t <= 0 {
		return DefaultDepth
	}
	d := DefaultDepth
	for ; t < DepthMoveTime && d > 4; t *= 2 {
		d--
	}
	for ; t >= 2*DepthMoveTime && d < 20; t /= 2 {
		d++
	}
	return d
}

// Info is the protocol as taikai registers it.
var Info = engines.Protocol{
	Name: Protocol, Game: "othello", Transport: engines.Stdio,
	New: func(c engines.Stream, cfg engines.SeatConfig) engines.Seat {
		depth, err := strconv.Atoi(cfg.Options["depth"])
		if err != nil || depth <= 0 {
			depth = DepthFor(cfg.MoveTime, cfg.Total)
		}
		return New(c, cfg, depth)
	},
	Clock: engines.Clock{MoveTime: 5 * time.Second},
	Options: []engines.Option{{
		Name:  "depth",
		About: "nboard: the search depth sent with set depth (default 10 at 5 s a move, one less for each halving of the move time: Edax and NTest search to it whatever their clock)",
		Check: func(v string) error {
			if n, err := strconv.Atoi(v); v != "" && (err != nil || n < 1 || n > 60) {
				return fmt.Errorf("%q: want a depth 1-60", v)
			}
			return nil
		},
	}},
}

func init() { engines.RegisterProtocol(Info) }

// Seat is one engine's pipes.
type Seat struct {
	*protocol.Base
	color games.Color
	cfg   engines.SeatConfig
	depth int
	log   engines.LineLogger // nil unless the stream keeps lines in the engine's log

	greeted bool // nboard 2 and set depth went out with Greet

	mu       sync.Mutex
	nick     string
	myTurn   bool
	history  []games.Ply
	ping     int
	opponent string
	buf      []byte
}

// New wraps an engine's stream and starts reading it.
func New(c engines.Stream, cfg engines.SeatConfig, depth int) *Seat {
	s := &Seat{Base: protocol.NewBase(c), color: cfg.Color, cfg: cfg, depth: depth}
	s.log, _ = c.(engines.LineLogger)
	s.Reader(func() {
		s.ReadLoop(func(at time.Time) bool {
			return s.Emit(engines.Action{Kind: engines.Violation, What: "line_too_long", At: at})
		}, s.handle)
	})
	return s
}

// Traits: the server passes for the engine (the pass is in the next game it
// is sent); a refused move or a timeout loses, as the protocol cannot say.
func (s *Seat) Traits() engines.Traits {
	return engines.Traits{AutoPass: true, IllegalLoses: true, ForfeitOnTimeout: true}
}

// Nick is the name the engine gave with "set myname", "" if none.
func (s *Seat) Nick() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nick
}

// ignored are the engine's lines the referee has no use for: thinking
// output, answers to ping, and the error Edax prints for "nboard 2".
var ignored = []string{"pong", "status", "nodestats", "search", "book", "learned", "analysis", "error", "Error"}

// handle acts on one line of the engine's.
func (s *Seat) handle(line []byte, at time.Time) bool {
	text := string(bytes.TrimSpace(line))
	f := strings.Fields(text)
	s.keep(text) // every line, in the log
	switch {
	case len(f) >= 2 && f[0] == "===":
		mv, _, _ := strings.Cut(f[1], "/")
		var m games.Move
		if strings.EqualFold(mv, "pa") {
			m = games.PassMove
		} else {
			sq, err := othello.ParseSquare(strings.ToLower(mv))
			if err != nil || sq == othello.Pass {
				return s.Emit(engines.Action{Kind: engines.Violation, What: "malformed", At: at})
			}
			m = games.Move{X: sq.X(), Y: sq.Y()}
		}
		s.mu.Lock()
		mine := s.myTurn
		s.mu.Unlock()
		if !mine {
			return s.Emit(engines.Action{Kind: engines.Violation, What: games.NotYourTurn.String(), At: at, Ignored: true})
		}
		s.Invited() // the answer go asked for
		return s.Emit(engines.Action{Kind: engines.Attempt, Move: m, At: at, Note: evalNote(f)})
	case len(f) >= 3 && f[0] == "set" && f[1] == "myname":
		name := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(text, "set"), " myname"))
		if protocol.ValidNick(name) {
			s.mu.Lock()
			s.nick = name
			s.mu.Unlock()
		}
		s.Chatter()
		return true
	case len(f) == 2 && f[0] == "pong" && f[1] == "0":
		s.Greeted() // the answer to Greet's ping
	}
	for _, w := range ignored {
		if strings.HasPrefix(text, w) {
			// Thinking output and answers: no number of them is a fault.
			s.Chatter()
			return true
		}
	}
	return s.Emit(engines.Action{Kind: engines.Violation, What: "unknown_command", At: at, Ignored: true})
}

// Greet sends "nboard 2", "set depth" and "ping 0", and waits for "pong 0"
// (engines.Greeter): an engine that reads its book or evaluation files at
// start-up does so before its first move's clock starts.
func (s *Seat) Greet(ctx context.Context, _ int) error {
	s.greeted = true
	b := append(s.appendHello(s.buf[:0]), "ping 0\n"...)
	s.buf = b
	protocol.LogSent(s.log, b)
	return s.Base.Greet(ctx, b)
}

func (s *Seat) appendHello(b []byte) []byte {
	b = append(b, "nboard 2\nset depth "...)
	b = strconv.AppendInt(b, int64(s.depth), 10)
	return append(b, '\n')
}

// keep puts a line of the engine's in its log.
func (s *Seat) keep(line string) {
	if s.log != nil {
		s.log.LogLine("[stdout] " + line)
	}
}

// evalNote is the evaluation an "===" line gives, as the move's note:
// "=== d6/-1.00/0.5" (the protocol's form) or "=== d6 -1.00 0.5" (Edax's).
func evalNote(f []string) string {
	parts := strings.Split(f[1], "/")
	ev := ""
	if len(parts) > 1 {
		ev = parts[1]
	} else if len(f) > 2 {
		ev = f[2]
	}
	if _, err := strconv.ParseFloat(ev, 64); err != nil {
		return ""
	}
	return "eval " + ev
}

// Begin sends "nboard 2" and "set depth" (unless Greet did), and the game if
// it is the engine's turn.
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	b := s.buf[:0]
	if !s.greeted {
		b = s.appendHello(b)
	}
	s.mu.Lock()
	s.opponent = st.Opponent
	s.history = append(s.history[:0], st.Opening...)
	s.myTurn = st.Turn == s.color
	if s.myTurn {
		b = s.appendGo(b, st.Remaining)
	}
	s.mu.Unlock()
	s.buf = b
	protocol.LogSent(s.log, b)
	return s.SendUnlessGone(ctx, b)
}

// Update records the moves and, on the engine's turn, sends the game and go.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	s.mu.Lock()
	s.history = append(s.history, u.Moves...)
	s.myTurn = u.Turn == s.color
	if !s.myTurn {
		s.mu.Unlock()
		return nil
	}
	b := s.appendGo(s.buf[:0], u.Remaining)
	s.mu.Unlock()
	s.buf = b
	protocol.LogSent(s.log, b)
	return s.SendUnlessGone(ctx, b)
}

// appendGo appends "set game" with the whole game and the engine's clock,
// "ping", and "go". Called with s.mu held.
func (s *Seat) appendGo(b []byte, remaining time.Duration) []byte {
	clock := s.cfg.MoveTime
	if s.cfg.Total > 0 {
		clock = max(remaining, 0)
	}
	names := [2]string{"taikai", s.opponent}
	if s.color == games.White {
		names[0], names[1] = names[1], names[0]
	}
	b = append(b, "set game "...)
	b = AppendGame(b, names, s.history, clock)
	b = append(b, '\n')
	s.ping++
	b = append(b, "ping "...)
	b = strconv.AppendInt(b, int64(s.ping), 10)
	b = append(b, "\ngo\n"...)
	return b
}

// AppendGame appends a game in progress as GGF on one line: the start
// position, the moves (a pass as PA), and TI, the time the engine has, in
// whole seconds rounded up.
func AppendGame(b []byte, names [2]string, moves []games.Ply, clock time.Duration) []byte {
	clean := strings.NewReplacer("[", "(", "]", ")").Replace
	b = append(b, "(;GM[Othello]PC[taikai]PB["...)
	b = append(b, clean(names[0])...)
	b = append(b, "]PW["...)
	b = append(b, clean(names[1])...)
	b = append(b, "]RE[?]"...)
	if clock > 0 {
		// Whole seconds, as GGF writes times (at least 1).
		sec := max(int64((clock+time.Second-1)/time.Second), 1)
		b = fmt.Appendf(b, "TI[%d:%02d]", sec/60, sec%60)
	}
	b = append(b, "TY[8]BO["...)
	b = append(b, othello.GGFStart...)
	b = append(b, ']')
	for _, m := range moves {
		if m.Color == games.White {
			b = append(b, "W["...)
		} else {
			b = append(b, "B["...)
		}
		if m.Pass {
			b = append(b, "PA"...)
		} else {
			b = append(b, strings.ToUpper(othello.At(m.X, m.Y).String())...)
		}
		b = append(b, ']')
	}
	return append(b, ";)"...)
}

// Refuse: never called (a refused move loses).
func (s *Seat) Refuse(context.Context, games.Move, games.Refusal) error { return nil }

// Relay: an NBoard engine has no chat.
func (s *Seat) Relay(context.Context, games.Color, string, string) error { return nil }

// OpponentLeft: nothing to tell.
func (s *Seat) OpponentLeft(context.Context) error { return nil }

// End writes nothing more: the protocol has no end of game; the engine
// reads the end of its input when its pipes are closed.
func (s *Seat) End(ctx context.Context, _ engines.Ending) error {
	return s.SendLast(ctx, nil)
}
