// Package checkersboard is the server side of the classroom checkers protocol
// `checkers-board` (PROTOCOLS.md §4): the server pushes the whole board and
// whose turn it is; the client answers with MOVE and the whole path.
package checkersboard

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/checkers"
)

// Protocol is this protocol's id.
const Protocol = "checkers-board"

// ERROR codes of §4.
const (
	errMalformed   = "ERROR 1\n"
	errIllegal     = "ERROR 2\n"
	errNotTurn     = "ERROR 3\n"
	errUnknown     = "ERROR 4\n"
	errMustCapture = "ERROR 5\n"
)

// Info is the protocol as taikai registers it.
var Info = engines.Protocol{
	ConnectTimeout: 30 * time.Second,
	Name:           Protocol, Game: "checkers", Default: true, Transport: engines.TCP,
	New: func(c engines.Stream, cfg engines.SeatConfig) engines.Seat {
		return New(c, cfg.Color, cfg.Rule)
	},
	Clock: engines.Clock{MoveTime: 10 * time.Second},
}

func init() { engines.RegisterProtocol(Info) }

// Seat is one client's connection.
type Seat struct {
	*protocol.Base
	color games.Color
	rule  string

	mu     sync.Mutex
	nick   string
	myTurn bool
	buf    []byte
}

// New wraps the connection of the client playing color under a rule set
// ("seed" or "english"; "" is seed) and starts reading it.
func New(c engines.Stream, color games.Color, rule string) *Seat {
	if rule == "" {
		rule = "seed"
	}
	s := &Seat{Base: protocol.NewBase(c), color: color, rule: rule, buf: make([]byte, 0, 256)}
	s.nick = "BLACK"
	if color == games.White {
		s.nick = "WHITE"
	}
	s.Reader(func() {
		s.ReadLoop(func(at time.Time) bool { return s.Refused(errMalformed, "line_too_long", at) }, s.handle)
	})
	return s
}

// Traits: refused moves may be retried; there are no passes.
func (s *Seat) Traits() engines.Traits { return engines.Traits{} }

// Nick returns the nickname the client set with NICK, or "" if it set none.
func (s *Seat) Nick() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nick == "BLACK" || s.nick == "WHITE" {
		return ""
	}
	return s.nick
}

func (s *Seat) nickname() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nick
}

func hasWord(line []byte, w string) bool {
	return bytes.HasPrefix(line, []byte(w)) && (len(line) == len(w) || line[len(w)] == ' ' || line[len(w)] == '\t')
}

// handle acts on one line; false when the client is done.
func (s *Seat) handle(line []byte, at time.Time) bool {
	switch {
	case hasWord(line, "MOVE"):
		m, ok := ParsePath(line[4:])
		if !ok {
			return s.Refused(errMalformed, "malformed", at)
		}
		s.mu.Lock()
		mine := s.myTurn
		s.mu.Unlock()
		if !mine {
			return s.Refused(errNotTurn, games.NotYourTurn.String(), at)
		}
		return s.Emit(engines.Action{Kind: engines.Attempt, Move: m, At: at})
	case hasWord(line, "NICK"):
		name := string(bytes.TrimSpace(line[4:]))
		if !protocol.ValidNick(name) {
			return s.Refused(errMalformed, "malformed", at)
		}
		s.mu.Lock()
		s.nick = name
		s.mu.Unlock()
		return true
	case hasWord(line, "SAY"):
		text := string(bytes.TrimLeft(line[3:], " \t"))
		return s.Emit(engines.Action{Kind: engines.Chat, What: text, Nick: s.nickname(), At: at})
	case bytes.Equal(bytes.TrimRight(line, " \t"), []byte("CLOSE")):
		s.Leave(games.ReasonClose, "")
		return false
	default:
		return s.Refused(errUnknown, "unknown_command", at)
	}
}

// ParsePath reads the argument of MOVE: two or more square numbers 1-32
// joined by '-', 'x' or 'X' (spaces around the path are ignored). It checks
// the form, not the rules.
func ParsePath(arg []byte) (games.Move, bool) {
	arg = bytes.TrimSpace(arg)
	var sq [checkers.MaxPath + 1]checkers.Square
	n := 0
	for len(arg) > 0 {
		i := 0
		for i < len(arg) && arg[i] >= '0' && arg[i] <= '9' {
			i++
		}
		if i == 0 || i > 2 || arg[0] == '0' || n == len(sq) {
			return games.Move{}, false
		}
		v, _ := strconv.Atoi(string(arg[:i]))
		if v < 1 || v > 32 {
			return games.Move{}, false
		}
		sq[n] = checkers.Square(v - 1)
		n++
		arg = arg[i:]
		if len(arg) == 0 {
			break
		}
		if arg[0] != '-' && arg[0] != 'x' && arg[0] != 'X' || len(arg) == 1 {
			return games.Move{}, false
		}
		arg = arg[1:]
	}
	if n < 2 {
		return games.Move{}, false
	}
	m := games.Move{X: sq[0].X(), Y: sq[0].Y(), Path: make([]games.Point, n-1)}
	for i := 1; i < n; i++ {
		m.Path[i-1] = games.Point{X: sq[i].X(), Y: sq[i].Y()}
	}
	return m, true
}

// Begin writes START, the first BOARD and TURN.
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	s.mu.Lock()
	s.myTurn = st.Turn == s.color
	s.mu.Unlock()
	b := s.buf[:0]
	b = append(b, "START "...)
	b = strconv.AppendInt(b, int64(s.color), 10)
	b = append(b, ' ')
	b = append(b, s.rule...)
	b = append(b, '\n')
	b = AppendUpdate(b, nil, st.Board, st.Turn)
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

// Update writes LAST, BOARD, and TURN unless the game is over.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	s.mu.Lock()
	s.myTurn = u.Turn == s.color
	s.mu.Unlock()
	b := AppendUpdate(s.buf[:0], u.Moves, u.Board, u.Turn)
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

// AppendUpdate appends LAST for each of moves, BOARD, and TURN unless turn
// is games.None.
func AppendUpdate(b []byte, moves []games.Ply, board games.Board, turn games.Color) []byte {
	for _, m := range moves {
		if m.Pass {
			continue
		}
		b = append(b, "LAST "...)
		b = append(b, checkers.Notation(m.Move)...)
		b = append(b, '\n')
	}
	b = append(b, "BOARD"...)
	for sq := checkers.Square(0); sq < 32; sq++ {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(board.At(sq.X(), sq.Y())), 10)
	}
	b = append(b, '\n')
	if turn != games.None {
		b = append(b, "TURN "...)
		b = strconv.AppendInt(b, int64(turn), 10)
		b = append(b, '\n')
	}
	return b
}

// Refuse answers a MOVE the referee did not accept.
func (s *Seat) Refuse(ctx context.Context, m games.Move, r games.Refusal) error {
	reply := errIllegal
	switch r {
	case games.NotYourTurn:
		reply = errNotTurn
	case games.MustCapture:
		reply = errMustCapture
	}
	return s.SendUnlessGone(ctx, []byte(reply))
}

// Relay sends "SAY <nick>: <text>".
func (s *Seat) Relay(ctx context.Context, from games.Color, nick, text string) error {
	return s.SendUnlessGone(ctx, []byte("SAY "+engines.OneLine(nick)+": "+engines.OneLine(text)+"\n"))
}

// OpponentLeft sends CLOSE.
func (s *Seat) OpponentLeft(ctx context.Context) error {
	return s.SendUnlessGone(ctx, []byte("CLOSE\n"))
}

// End writes "END <WIN|LOSE|DRAW> <own> <opp> <reason>"; an aborted game is
// closed without END.
func (s *Seat) End(ctx context.Context, r engines.Ending) error {
	if r.Reason == games.ReasonAborted {
		return nil
	}
	b := protocol.AppendEnd(s.buf[:0], r.Verdict.Word("WIN", "LOSE", "DRAW"), r, r.Reason)
	s.buf = b
	return s.SendLast(ctx, b)
}
