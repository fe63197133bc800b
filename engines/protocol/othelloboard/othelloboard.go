// Package othelloboard is the server side of the classroom Othello protocol
// `othello-board` (PROTOCOLS.md §1): the server pushes the whole board and whose
// turn it is; the client answers with PUT.
package othelloboard

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// Protocol is this protocol's id.
const Protocol = "othello-board"

// ERROR codes of §1.
const (
	errMalformed = "ERROR 1\n"
	errCannotPut = "ERROR 2\n"
	errNotTurn   = "ERROR 3\n"
	errUnknown   = "ERROR 4\n"
)

// Options are the protocol's settings.
type Options struct {
	// RowMajor sends BOARD row by row (index 8*y+x) instead of the classroom
	// server's column-by-column order (index 8*x+y): option board_order=row.
	RowMajor bool
}

// Info is the protocol as taikai registers it.
var Info = engines.Protocol{
	ConnectTimeout: 30 * time.Second, // a JVM compiling the classroom client's source on a loaded machine
	Name:           Protocol, Game: "othello", Default: true, Transport: engines.TCP,
	New: func(c engines.Stream, cfg engines.SeatConfig) engines.Seat {
		return New(c, cfg.Color, Options{RowMajor: cfg.Options["board_order"] == "row"})
	},
	Clock: engines.Clock{MoveTime: 10 * time.Second},
	Options: []engines.Option{{
		Name:  "board_order",
		About: "order of BOARD's 64 cells: column (the classroom server's, default) or row",
		Check: func(v string) error { _, err := othello.ParseOrder(v); return err },
	}},
}

func init() { engines.RegisterProtocol(Info) }

// Seat is one client's connection.
type Seat struct {
	*protocol.Base
	opt   Options
	color games.Color

	mu     sync.Mutex
	nick   string
	myTurn bool
	buf    []byte // the runner's write buffer, reused
}

// New wraps the connection of the client playing color and starts reading it.
func New(c engines.Stream, color games.Color, opt Options) *Seat {
	// Room for START, a BOARD of 64 cells and TURN, so that the buffer never grows.
	s := &Seat{Base: protocol.NewBase(c), opt: opt, color: color, buf: make([]byte, 0, 256)}
	s.nick = "BLACK"
	if color == games.White {
		s.nick = "WHITE"
	}
	s.Reader(func() {
		s.ReadLoop(func(at time.Time) bool { return s.Refused(errMalformed, "line_too_long", at) }, s.handle)
	})
	return s
}

// Traits: the server passes for the client; refused moves may be retried.
func (s *Seat) Traits() engines.Traits { return engines.Traits{AutoPass: true} }

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

// handle acts on one line; false when the client is done.
func (s *Seat) handle(line []byte, at time.Time) bool {
	switch {
	case bytes.HasPrefix(line, []byte("PUT")):
		x, y, ok := parsePut(line[3:])
		if !ok {
			return s.Refused(errMalformed, "malformed", at)
		}
		s.mu.Lock()
		mine := s.myTurn
		s.mu.Unlock()
		if !mine {
			return s.Refused(errNotTurn, games.NotYourTurn.String(), at)
		}
		return s.Emit(engines.Action{Kind: engines.Attempt, Move: games.Move{X: x, Y: y}, At: at})
	case bytes.HasPrefix(line, []byte("NICK")):
		name := string(bytes.TrimSpace(line[4:]))
		if !protocol.ValidNick(name) {
			return s.Refused(errMalformed, "malformed", at)
		}
		s.mu.Lock()
		s.nick = name
		s.mu.Unlock()
		return true
	case bytes.HasPrefix(line, []byte("SAY")):
		text := string(bytes.TrimLeft(line[3:], " "))
		return s.Emit(engines.Action{Kind: engines.Chat, What: text, Nick: s.nickname(), At: at})
	case bytes.Equal(bytes.TrimRight(line, " "), []byte("CLOSE")):
		s.Leave(games.ReasonClose, "")
		return false
	default:
		return s.Refused(errUnknown, "unknown_command", at)
	}
}

// parsePut reads the arguments of PUT: " x y" with spaces, or the handout's
// compact "xy" (PUT32 = PUT 3 2). It allocates nothing for a well-formed PUT:
// it runs once a move.
func parsePut(arg []byte) (x, y int, ok bool) {
	var tokens [3][]byte
	f := protocol.Fields(arg, tokens[:0])
	switch {
	case len(f) == 2 && len(arg) > 0 && arg[0] == ' ':
		var err1, err2 error
		x, err1 = strconv.Atoi(string(f[0]))
		y, err2 = strconv.Atoi(string(f[1]))
		return x, y, err1 == nil && err2 == nil
	case len(f) == 1 && len(f[0]) == 2 && isDigit(f[0][0]) && isDigit(f[0][1]):
		return int(f[0][0] - '0'), int(f[0][1] - '0'), true
	}
	return 0, 0, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Begin writes START, the first BOARD and TURN.
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	s.mu.Lock()
	s.myTurn = st.Turn == s.color
	s.mu.Unlock()
	b := s.buf[:0]
	b = append(b, "START "...)
	b = strconv.AppendInt(b, int64(s.color), 10)
	b = append(b, '\n')
	b = s.appendBoard(b, st.Board, st.Turn)
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

// Update writes BOARD, and TURN unless the game is over.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	s.mu.Lock()
	s.myTurn = u.Turn == s.color
	s.mu.Unlock()
	b := s.appendBoard(s.buf[:0], u.Board, u.Turn)
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

func (s *Seat) appendBoard(b []byte, board games.Board, turn games.Color) []byte {
	return AppendUpdate(b, board, turn, s.opt)
}

// AppendUpdate appends what a client is sent after every move: BOARD, then
// TURN unless turn is games.None (the game is over). taikai bench sends the
// same bytes in its bare ping-pong.
func AppendUpdate(b []byte, board games.Board, turn games.Color, opt Options) []byte {
	b = append(b, "BOARD"...)
	for i := range 64 {
		x, y := i/8, i%8
		if opt.RowMajor {
			x, y = i%8, i/8
		}
		switch board.At(x, y) {
		case 1:
			b = append(b, " 1"...)
		case -1:
			b = append(b, " -1"...)
		default:
			b = append(b, " 0"...)
		}
	}
	b = append(b, '\n')
	if turn != games.None {
		b = append(b, "TURN "...)
		b = strconv.AppendInt(b, int64(turn), 10)
		b = append(b, '\n')
	}
	return b
}

// Refuse answers a PUT the referee did not accept.
func (s *Seat) Refuse(ctx context.Context, m games.Move, r games.Refusal) error {
	reply := errCannotPut
	if r == games.NotYourTurn {
		reply = errNotTurn
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

// End writes "END <WIN|LOSE|DRAW> <own> <opp> <reason>". An aborted game has no
// result to tell: the connection is closed without END.
func (s *Seat) End(ctx context.Context, r engines.Ending) error {
	if r.Reason == games.ReasonAborted {
		return nil
	}
	b := protocol.AppendEnd(s.buf[:0], r.Verdict.Word("WIN", "LOSE", "DRAW"), r, r.Reason)
	s.buf = b
	return s.SendLast(ctx, b)
}
