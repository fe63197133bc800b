// Package protocol is what the referee and a wire-protocol adapter say to each
// other. An adapter (one package each below this one) turns an engine's TCP
// connection into a Seat; the referee in package tournament drives seats and
// knows nothing of wire formats, and an adapter knows nothing of tournaments.
package protocol

import (
	"context"
	"strconv"
	"time"
)

// Color is a side: Black (1) moves first, White (-1). None means nobody, for
// example the side to move once the game is over.
type Color int8

// The sides.
const (
	None  Color = 0
	Black Color = 1
	White Color = -1
)

// String returns "black", "white" or "none".
func (c Color) String() string {
	switch c {
	case Black:
		return "black"
	case White:
		return "white"
	}
	return "none"
}

// Opponent returns the other side.
func (c Color) Opponent() Color { return -c }

// Move is a placement at column X, row Y (0-based, from the top-left), or a pass.
type Move struct {
	X, Y int
	Pass bool
}

// PassMove is the move of a side that cannot place a stone.
var PassMove = Move{X: -1, Y: -1, Pass: true}

// Board is a read-only view of a position, valid only during the call it is
// passed to: an adapter that needs it later copies what it needs.
type Board interface {
	Size() int
	// At returns 1 for a black stone, -1 for white, 0 for empty.
	At(x, y int) int8
}

// Played is a move as the referee applied it.
type Played struct {
	Color Color
	Move  Move
	Auto  bool // made by the server: a forced pass, or a move for a seat out of time
}

// Start announces a game to a seat.
type Start struct {
	Color     Color
	Opponent  string        // the opponent engine's registered name
	Board     Board         // the start position
	Turn      Color         // side to move first
	Remaining time.Duration // this seat's total time, 0 if the game has no total clock
}

// Update tells a seat what happened since the last update and whose turn it is.
// If Turn is the seat's colour, writing the update gives it the move: the
// referee starts the seat's clock just before it calls Update.
type Update struct {
	Moves     []Played      // in order; usually one, a move followed by forced passes
	Board     Board         // position after Moves
	Turn      Color         // side to move, None if the game is over
	Remaining time.Duration // this seat's remaining total time (for protocols that report it)
}

// Refusal says why the referee refused a move.
type Refusal int8

// Reasons a move is refused.
const (
	Occupied    Refusal = iota + 1 // a stone is already there
	OffBoard                       // outside the board
	NoFlip                         // Othello: flips nothing
	Forbidden                      // Gomoku: forbidden by the rule (three-three, ...)
	PassRefused                    // a pass while a placement exists
	NotYourTurn                    // the move came when it was not the seat's turn
)

// String names the refusal as stored in violation counts.
func (r Refusal) String() string {
	switch r {
	case Occupied:
		return "occupied"
	case OffBoard:
		return "off_board"
	case NoFlip:
		return "no_flip"
	case Forbidden:
		return "forbidden"
	case PassRefused:
		return "pass_refused"
	case NotYourTurn:
		return "out_of_turn"
	}
	return "refused"
}

// Outcome is a game's result for one seat.
type Outcome int8

// Outcomes.
const (
	Draw Outcome = iota
	Win
	Lose
)

// Word names the outcome in a protocol's own words.
func (o Outcome) Word(win, lose, draw string) string {
	switch o {
	case Win:
		return win
	case Lose:
		return lose
	}
	return draw
}

// AppendEnd appends the end line both Othello protocols send:
// "END <word> <own> <opp> <reason>".
func AppendEnd(b []byte, word string, r Result, reason string) []byte {
	b = append(b, "END "...)
	b = append(b, word...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Own), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.Opp), 10)
	b = append(b, ' ')
	b = append(b, reason...)
	return append(b, '\n')
}

// Game-end reasons (PROTOCOLS.md, "Game-end reasons").
const (
	ReasonNormal     = "normal"
	ReasonTimeout    = "timeout"
	ReasonIllegal    = "illegal"
	ReasonDisconnect = "disconnect"
	ReasonClose      = "close"
	ReasonResign     = "resign"
	ReasonNoConnect  = "no_connect"
	ReasonCrash      = "crash"
	ReasonAborted    = "aborted"
)

// Causes refine a reason for protocols that tell them apart on the wire.
const (
	CauseInvalidMove    = "invalid_move"    // an illegal move or pass
	CauseInvalidCommand = "invalid_command" // a line that is not a move where one was due
	CauseMaxErrors      = "max_errors"      // too many refused commands
	CauseFlood          = "flood"           // too many lines, or a line without end
)

// Record is an engine's record in the current tournament, for protocols that
// report it at the end (othello-move's BYE).
type Record struct {
	Name   string
	Score  int // sum of stone differences over its games
	Wins   int
	Losses int
}

// Result tells a seat how the game ended for it.
type Result struct {
	Outcome      Outcome
	Reason       string   // one of the Reason constants
	Cause        string   // one of the Cause constants, or ""
	Own, Opp     int      // stones on the board at the end
	OpponentLeft bool     // the opponent disconnected or closed
	Records      []Record // this seat's engine first
}

// EventKind is what a client did.
type EventKind int8

// Kinds of event.
const (
	// Attempt: the client proposes a move. The referee answers it with Update
	// or Refuse (or ends the game) before its handler returns.
	Attempt EventKind = iota + 1
	// Violation: a line the protocol refused on its own (malformed, unknown,
	// out of turn); counted, and perhaps the game is lost for it.
	Violation
	// Chat: a chat line to relay to the opponent.
	Chat
	// Left: the client is gone or gave up; Reason says how.
	Left
)

// Event is something a client did, in the order it did it.
type Event struct {
	Kind   EventKind
	Move   Move      // Attempt
	At     time.Time // when the line was read
	What   string    // Violation: what was refused; Chat: the text
	Nick   string    // Chat: the sender's nickname
	Reason string    // Left: disconnect, close or resign
	Cause  string    // Left: a finer cause, e.g. CauseFlood or CauseInvalidCommand
}

// Traits are the rules of a protocol that the referee must follow.
type Traits struct {
	AutoPass     bool // the server passes for a seat with no placement (othello-board)
	IllegalLoses bool // a refused move ends the game at once (othello-move)
	// ForfeitOnTimeout: the protocol cannot tell a client that the server moved
	// for it (othello-move), so running out of time always loses.
	ForfeitOnTimeout bool
}

// Seat is one engine's connection in one game, spoken in its protocol.
// Methods other than Listen and Close are called by one goroutine at a time:
// the referee serializes its event handlers.
type Seat interface {
	Traits() Traits
	// Listen starts reading the client. handle is called for what the client
	// does, in order, on the seat's reader goroutine, and nothing more is read
	// until it returns; it may call the methods of both seats.
	Listen(handle func(Event))
	// Begin writes the start of the game.
	Begin(ctx context.Context, s Start) error
	// Update reports moves and gives the move to the side in Turn.
	Update(ctx context.Context, u Update) error
	// Refuse answers the pending Attempt: the move was not accepted.
	Refuse(ctx context.Context, m Move, r Refusal) error
	// Relay passes a chat line from a side (possibly this one) to the client.
	Relay(ctx context.Context, from Color, nick, text string) error
	// OpponentLeft tells the client its opponent is gone.
	OpponentLeft(ctx context.Context) error
	// End writes the end of the game for this seat; the connection is closed after.
	End(ctx context.Context, r Result) error
	// Nick is the name the client gave itself (NICK, OPEN), "" if none.
	Nick() string
	// Close closes the connection and waits for the seat's goroutines.
	Close() error
}
