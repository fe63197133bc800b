// Package gomokuturn is the server side of the student project's gomoku
// protocol `gomoku-turn` (PROTOCOLS.md §3): the server says "your turn", the
// client asks for the board ("get text" or "get bin") and puts a stone; when
// the game ends the server closes the connection.
package gomokuturn

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
)

// Protocol is this protocol's id.
const Protocol = "gomoku-turn"

// Options are the protocol's settings.
type Options struct {
	// EndMessage adds a last line "end <win|lose|draw> <reason>" before the
	// connection is closed (the original server sent nothing).
	EndMessage bool
}

// Info is the protocol as taikai registers it.
var Info = engines.Protocol{
	ConnectTimeout: 30 * time.Second, // student clients in Java and C, on a loaded machine
	Name:           Protocol, Game: "gomoku", Default: true, Transport: engines.TCP,
	New: func(c engines.Stream, cfg engines.SeatConfig) engines.Seat {
		return New(c, cfg.Color, Options{EndMessage: cfg.Options["end_message"] == "true"})
	},
	Clock: engines.Clock{MoveTime: 10 * time.Second},
	Options: []engines.Option{{
		Name:  "end_message",
		About: `true: send "end <win|lose|draw> <reason>" before closing (default false)`,
		Check: func(v string) error {
			if v != "true" && v != "false" && v != "" {
				return fmt.Errorf("%q: want true or false", v)
			}
			return nil
		},
	}},
}

func init() { engines.RegisterProtocol(Info) }

// Replies to put.
var (
	replyPlaced    = []byte("1\n")
	replyOccupied  = []byte("2\n")
	replyOffBoard  = []byte("3\n")
	replyForbidden = []byte("4\n")
	yourTurn       = []byte("your turn\n")
)

// Seat is one client's connection.
type Seat struct {
	*protocol.Base
	opt   Options
	color games.Color

	mu     sync.Mutex
	size   int
	cells  []int8 // y*size+x: 1 player 0 (black), -1 player 1 (white)
	myTurn bool
	// invited: the get and the put the protocol asks for on a turn, which
	// do not count towards the flood limit (reset when a turn is given).
	invited [2]bool
	out     []byte // reader's buffer for board replies
	buf     []byte // referee's buffer
}

// New wraps the connection of the client playing color and starts reading it.
func New(c engines.Stream, color games.Color, opt Options) *Seat {
	s := &Seat{Base: protocol.NewBase(c), opt: opt, color: color}
	s.Reader(func() {
		tooLong := func(at time.Time) bool { return s.ignored("line_too_long", at) }
		var f [][]byte
		s.ReadLoop(tooLong, func(line []byte, at time.Time) bool {
			f = protocol.Fields(line, f)
			return s.handle(f, at)
		})
	})
	return s
}

// Traits: a refused put may be retried while the clock runs; the server may
// place a stone for a client out of time, as the original did. The protocol
// has no pass: a client with no allowed point is passed for by the server.
func (s *Seat) Traits() engines.Traits { return engines.Traits{AutoPass: true} }

// Nick is empty: the protocol carries no name.
func (s *Seat) Nick() string { return "" }

// handle acts on one line; false when the reader should stop.
func (s *Seat) handle(f [][]byte, at time.Time) bool {
	cmd := string(f[0])
	s.mu.Lock()
	mine := s.myTurn
	// The first get and the first put of a turn are what the protocol asks
	// for: a client that answers at once (two engines that move in a
	// millisecond play a 225-point board in under a second) is not flooding.
	if k := map[string]int{"get": 0, "put": 1}[cmd]; mine && (cmd == "get" || cmd == "put") && !s.invited[k] {
		s.invited[k] = true
		s.Invited()
	}
	s.mu.Unlock()
	switch {
	case cmd == "end" && len(f) == 1:
		s.Emit(engines.Action{Kind: engines.Left, Reason: games.ReasonResign, At: at})
		return false
	case cmd == "get" && len(f) == 2 && (string(f[1]) == "text" || string(f[1]) == "bin"):
		if !mine {
			return s.ignored(games.NotYourTurn.String(), at)
		}
		if err := s.SendUnlessGone(context.Background(), s.board(string(f[1]) == "bin")); err != nil {
			s.ReadError(err)
			return false
		}
		return true
	case cmd == "put":
		if !mine {
			return s.ignored(games.NotYourTurn.String(), at)
		}
		var x, y int
		var err1, err2 error
		if len(f) == 3 {
			x, err1 = strconv.Atoi(string(f[1]))
			y, err2 = strconv.Atoi(string(f[2]))
		}
		if len(f) != 3 || err1 != nil || err2 != nil {
			// Arguments that are not two integers are answered like a point off the board.
			if err := s.SendUnlessGone(context.Background(), replyOffBoard); err != nil {
				s.ReadError(err)
				return false
			}
			return s.Emit(engines.Action{Kind: engines.Violation, What: "malformed", At: at})
		}
		return s.Emit(engines.Action{Kind: engines.Attempt, Move: games.Move{X: x, Y: y}, At: at})
	}
	return s.ignored("unknown_command", at)
}

// ignored counts a line the protocol ignores without a reply.
func (s *Seat) ignored(what string, at time.Time) bool {
	return s.Emit(engines.Action{Kind: engines.Violation, What: what, At: at})
}

// board renders the position for "get text" (N lines of N characters, row y=0
// first: + empty, @ player 0, o player 1) or "get bin" (N*N bytes in raster
// order: 0 empty, 1 player 0, 255 player 1).
func (s *Seat) board(bin bool) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.out[:0]
	for i, c := range s.cells {
		if bin {
			b = append(b, byte(c)) // int8 -1 is byte 255
			continue
		}
		switch c {
		case 1:
			b = append(b, '@')
		case -1:
			b = append(b, 'o')
		default:
			b = append(b, '+')
		}
		if (i+1)%s.size == 0 {
			b = append(b, '\n')
		}
	}
	s.out = b
	return b
}

// Begin copies the start position and gives the first player its turn.
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	n := st.Board.Size()
	s.mu.Lock()
	s.size = n
	s.cells = make([]int8, n*n)
	for y := range n {
		for x := range n {
			s.cells[y*n+x] = st.Board.At(x, y)
		}
	}
	s.myTurn = st.Turn == s.color
	s.invited = [2]bool{}
	s.mu.Unlock()
	if st.Turn == s.color {
		return s.SendUnlessGone(ctx, yourTurn)
	}
	return nil
}

// Update answers the client's accepted put with 1 and says "your turn" when it
// is the client's move.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	own := false
	s.mu.Lock()
	for _, m := range u.Moves {
		if m.Move.Pass {
			continue
		}
		s.cells[m.Move.Y*s.size+m.Move.X] = int8(m.Color)
		own = own || (m.Color == s.color && !m.Auto)
	}
	s.myTurn = u.Turn == s.color
	if s.myTurn {
		s.invited = [2]bool{}
	}
	s.mu.Unlock()
	b := s.buf[:0]
	if own {
		b = append(b, replyPlaced...)
	}
	if u.Turn == s.color {
		b = append(b, yourTurn...)
	}
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

// Refuse answers a put the referee refused with 2, 3 or 4. A put that came too
// late (the server already moved for the client) is ignored like any put out
// of turn.
func (s *Seat) Refuse(ctx context.Context, m games.Move, r games.Refusal) error {
	var reply []byte
	switch r {
	case games.Occupied:
		reply = replyOccupied
	case games.Forbidden:
		reply = replyForbidden
	case games.NotYourTurn:
		return nil
	default:
		reply = replyOffBoard
	}
	return s.SendUnlessGone(ctx, reply)
}

// Relay drops chat: the protocol has none.
func (s *Seat) Relay(ctx context.Context, from games.Color, nick, text string) error { return nil }

// OpponentLeft writes nothing: the connection is closed.
func (s *Seat) OpponentLeft(ctx context.Context) error { return nil }

// End writes "end <win|lose|draw> <reason>" if the option asks for it; the
// connection is closed after.
func (s *Seat) End(ctx context.Context, r engines.Ending) error {
	if !s.opt.EndMessage || r.Reason == games.ReasonAborted {
		return nil
	}
	word := r.Verdict.Word("win", "lose", "draw")
	return s.SendLast(ctx, []byte("end "+word+" "+r.Reason+"\n"))
}
