// Package othellomove is the server side of the move-exchange reversi protocol
// `othello-move` (PROTOCOLS.md §2): clients OPEN with a name, only moves
// travel (MOVE, ACK), each client keeps its own board, and a game ends with END
// and then BYE.
package othellomove

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
)

// Protocol is this protocol's id.
const Protocol = "othello-move"

// Info is the protocol as taikai registers it. Its clock is a total time
// per side with a byoyomi, which START and ACK report.
var Info = engines.Protocol{
	ConnectTimeout: 60 * time.Second, // the course's OCaml clients build an opening book before they connect
	Name:           Protocol, Game: "othello", Transport: engines.TCP, Tallies: true,
	New:      func(c engines.Stream, cfg engines.SeatConfig) engines.Seat { return New(c, cfg) },
	Clock:    engines.Clock{Total: 600 * time.Second, Byoyomi: 500 * time.Millisecond},
	WireName: token,
}

func init() { engines.RegisterProtocol(Info) }

// Seat is one client's connection. It can play several games in a row
// (Begin ... EndGame, Begin ... End), as the reference server did.
type Seat struct {
	*protocol.Base
	color   games.Color
	tallies [2]engines.Tally // this engine's and the opponent's, before this game

	mu      sync.Mutex
	name    string // from OPEN
	playing bool   // between START and END
	myTurn  bool
	buf     []byte
}

// New wraps the connection of the client playing cfg.Color.
func New(c engines.Stream, cfg engines.SeatConfig) *Seat {
	s := &Seat{Base: protocol.NewBase(c), color: cfg.Color, tallies: cfg.Tallies}
	s.Reader(func() {
		var f [][]byte
		s.ReadLoop(s.invalid, func(line []byte, at time.Time) bool {
			f = protocol.Fields(line, f)
			return s.handle(f, at)
		})
	})
	return s
}

// Traits: the client passes itself, an illegal move loses at once, and the
// protocol has no way to tell a client the server moved for it.
func (s *Seat) Traits() engines.Traits {
	return engines.Traits{IllegalLoses: true, ForfeitOnTimeout: true}
}

// Nick is the name the client sent with OPEN.
func (s *Seat) Nick() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// handle acts on one line's tokens; false when the reader should stop.
func (s *Seat) handle(f [][]byte, at time.Time) bool {
	s.mu.Lock()
	mine, named := s.myTurn, s.name != ""
	s.mu.Unlock()
	switch {
	case string(f[0]) == "OPEN" && len(f) == 2 && !named:
		// The first line of a client; it may arrive after START was sent.
		s.mu.Lock()
		s.name = string(f[1])
		s.mu.Unlock()
		return true
	case string(f[0]) == "MOVE" && len(f) == 2 && mine:
		mv := string(f[1])
		switch {
		case mv == "PASS":
			return s.Emit(engines.Action{Kind: engines.Attempt, Move: games.PassMove, At: at})
		case mv == "GIVEUP":
			s.Emit(engines.Action{Kind: engines.Left, Reason: games.ReasonResign, At: at})
			return false
		}
		if x, y, ok := parseSquare(mv); ok {
			return s.Emit(engines.Action{Kind: engines.Attempt, Move: games.Move{X: x, Y: y}, At: at})
		}
	}
	// Anything that is not a well-formed MOVE in one's turn loses the game.
	return s.invalid(at)
}

// invalid reports a line that loses the game (INVALID_COMMAND). Before the game
// starts it is only counted.
func (s *Seat) invalid(at time.Time) bool {
	s.mu.Lock()
	playing := s.playing
	s.mu.Unlock()
	if !playing {
		return s.Emit(engines.Action{Kind: engines.Violation, What: "invalid_command", At: at})
	}
	s.Emit(engines.Action{Kind: engines.Left, Reason: games.ReasonIllegal, Cause: games.CauseInvalidCommand, At: at})
	return false
}

// parseSquare reads a coordinate: column letter then row digit, either case.
func parseSquare(s string) (x, y int, ok bool) {
	if len(s) != 2 {
		return 0, 0, false
	}
	c, r := s[0]|0x20, s[1]
	if c < 'a' || c > 'h' || r < '1' || r > '8' {
		return 0, 0, false
	}
	return int(c - 'a'), int(r - '1'), true
}

// appendMove writes a move in upper case (column letter, row digit) or PASS.
func appendMove(b []byte, m games.Move) []byte {
	if m.Pass {
		return append(b, "PASS"...)
	}
	return append(b, byte('A'+m.X), byte('1'+m.Y))
}

// Begin writes START <BLACK|WHITE> <opponent> <ms>, after the opening's
// moves as MOVE lines when the game starts from one (PROTOCOLS.md,
// "Openings").
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	s.mu.Lock()
	s.playing = true
	s.myTurn = st.Turn == s.color
	s.mu.Unlock()
	b := s.buf[:0]
	for _, p := range st.Opening {
		b = append(b, "MOVE "...)
		b = appendMove(b, p.Move)
		b = append(b, '\n')
	}
	b = append(b, "START "...)
	b = append(b, colorWord(s.color)...)
	b = append(b, ' ')
	b = append(b, token(st.Opponent)...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, st.Remaining.Milliseconds(), 10)
	b = append(b, '\n')
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

func colorWord(c games.Color) string {
	if c == games.White {
		return "WHITE"
	}
	return "BLACK"
}

// keywords are the words the course's clients lex as keywords, not names.
var keywords = []string{"BLACK", "WHITE", "WIN", "LOSE", "TIE", "OPEN", "END", "MOVE", "START", "ACK", "BYE", "PASS", "GIVEUP"}

// token makes a name one token of the grammar that the course's OCaml
// clients lex as a name (issue 16): spaces become '_', a name that would lex
// as an integer gets a letter in front ("6321120", a student number, is sent
// as "n6321120"), and a keyword gets a '_' after it ("WHITE" is sent as
// "WHITE_").
func token(name string) string {
	w := strings.Join(strings.Fields(name), "_")
	if w == "" {
		return "-"
	}
	if _, err := strconv.Atoi(w); err == nil {
		return "n" + w
	}
	for _, k := range keywords {
		if strings.EqualFold(w, k) {
			return w + "_"
		}
	}
	return w
}

// Update acknowledges the client's move with its remaining time and relays the
// opponent's. The move that ends the game gets no ACK, and a final pass is not
// relayed: END follows.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	over := u.Turn == games.None
	s.mu.Lock()
	s.myTurn = u.Turn == s.color
	s.mu.Unlock()
	b := s.buf[:0]
	for _, m := range u.Moves {
		switch {
		case m.Color == s.color:
			if !over {
				b = append(b, "ACK "...)
				b = strconv.AppendInt(b, u.Remaining.Milliseconds(), 10)
				b = append(b, '\n')
			}
		case !(over && m.Move.Pass):
			b = append(b, "MOVE "...)
			b = appendMove(b, m.Move)
			b = append(b, '\n')
		}
	}
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

// Refuse answers a move the referee did not take. In this protocol a refused
// move loses, so the referee ends the game instead; only a move that came too
// late reaches here, and END follows.
func (s *Seat) Refuse(ctx context.Context, m games.Move, r games.Refusal) error {
	return nil
}

// Relay drops chat: the protocol has none.
func (s *Seat) Relay(ctx context.Context, from games.Color, nick, text string) error { return nil }

// OpponentLeft writes nothing: END says it.
func (s *Seat) OpponentLeft(ctx context.Context) error { return nil }

// End writes END and then BYE: a launched engine plays one game.
func (s *Seat) End(ctx context.Context, r engines.Ending) error {
	if r.Reason == games.ReasonAborted {
		return nil
	}
	b := s.appendEnd(s.buf[:0], r)
	b = append(b, "BYE"...)
	for _, rec := range byeTallies(s.tallies, r) {
		b = append(b, ' ')
		b = append(b, token(rec.Name)...)
		// score = wins - losses, as the reference server sends (PROTOCOLS.md §2).
		for _, n := range []int{rec.Wins - rec.Losses, rec.Wins, rec.Losses} {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(n), 10)
		}
	}
	b = append(b, '\n')
	s.buf = b
	return s.SendLast(ctx, b)
}

// byeTallies returns the records BYE reports, this game included: this
// engine's first.
func byeTallies(before [2]engines.Tally, r engines.Ending) [2]engines.Tally {
	own, opp := before[0], before[1]
	switch r.Verdict {
	case engines.Win:
		own.Wins++
		opp.Losses++
	case engines.Lose:
		own.Losses++
		opp.Wins++
	}
	return [2]engines.Tally{own, opp}
}

// EndGame writes END only, for a connection that plays another game (Begin again).
func (s *Seat) EndGame(ctx context.Context, r engines.Ending) error {
	b := s.appendEnd(s.buf[:0], r)
	s.buf = b
	return s.SendUnlessGone(ctx, b)
}

func (s *Seat) appendEnd(b []byte, r engines.Ending) []byte {
	s.mu.Lock()
	s.playing, s.myTurn = false, false
	s.mu.Unlock()
	return protocol.AppendEnd(b, r.Verdict.Word("WIN", "LOSE", "TIE"), r, wireReason(r))
}

// wireReason maps a game-end reason to the protocol's END reason.
func wireReason(r engines.Ending) string {
	switch r.Reason {
	case games.ReasonNormal:
		return "DOUBLE_PASS"
	case games.ReasonTimeout:
		return "TIMEOUT"
	case games.ReasonResign:
		return "GIVEUP"
	case games.ReasonIllegal:
		if r.Cause == games.CauseInvalidCommand {
			return "INVALID_COMMAND"
		}
		return "INVALID_MOVE"
	}
	// A closed or flooded connection: "the connection closing loses (INVALID_COMMAND)".
	return "INVALID_COMMAND"
}
