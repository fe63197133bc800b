package engines

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Stream is an engine's end of its protocol, whatever the transport: the TCP
// connection it dialled, or its standard input and output.
type Stream interface {
	io.ReadWriteCloser
	SetWriteDeadline(time.Time) error
}

// Start announces a game to a seat.
type Start struct {
	Color     games.Color
	Opponent  string        // the opponent engine's registered name
	Board     games.Board   // the start position
	Turn      games.Color   // side to move first
	Remaining time.Duration // this seat's total time, 0 if the game has no total clock
	// Opening is the moves the game started with, from the game's start
	// position, when it is played from an opening of a suite; Board is the
	// position after them. A protocol that shows the board needs nothing
	// more; one where only moves travel sends them (PROTOCOLS.md, "Openings").
	Opening []games.Ply
}

// Update tells a seat what happened since the last update and whose turn it
// is. If Turn is the seat's colour, writing the update gives it the move: the
// referee starts the seat's clock just before it calls Update.
type Update struct {
	Moves     []games.Ply   // in order; usually one, a move followed by forced passes
	Board     games.Board   // position after Moves
	Turn      games.Color   // side to move, None if the game is over
	Remaining time.Duration // this seat's remaining total time (for protocols that report it)
}

// SeatResult is a game's result for one seat.
type SeatResult int8

// Seat results.
const (
	Draw SeatResult = iota
	Win
	Lose
)

// Word names the result in a protocol's own words.
func (v SeatResult) Word(win, lose, draw string) string {
	switch v {
	case Win:
		return win
	case Lose:
		return lose
	}
	return draw
}

// Ending tells a seat how the game ended for it.
type Ending struct {
	Verdict      SeatResult
	Reason       string // a games.Reason constant
	Cause        string // a games.Cause constant, or ""
	Own, Opp     int    // pieces on the board at the end
	OpponentLeft bool   // the opponent disconnected or closed
}

// ActionKind is what a client did.
type ActionKind int8

// Kinds of action.
const (
	// Attempt: the client proposes a move. The referee answers it with Update
	// or Refuse (or ends the game) before its handler returns.
	Attempt ActionKind = iota + 1
	// Violation: a line the protocol refused on its own (malformed, unknown,
	// out of turn); counted, and perhaps the game is lost for it.
	Violation
	// Chat: a chat line to relay to the opponent.
	Chat
	// Left: the client is gone or gave up; Reason says how.
	Left
)

// Action is something a client did, in the order it did it.
type Action struct {
	Kind   ActionKind
	Move   games.Move // Attempt
	At     time.Time  // when the line arrived: the kernel's receive time where it gives one, else the read
	What   string     // Violation: what was refused; Chat: the text
	Nick   string     // Chat: the sender's nickname
	Reason string     // Left: disconnect, close or resign
	Cause  string     // Left: a finer cause, e.g. games.CauseFlood
	// Ignored: a Violation the protocol lets pass (a pipe engine's line the
	// manager skips): stored with the game's violations, not counted
	// towards max_errors.
	Ignored bool
	// Note: an Attempt's comment from the engine (its evaluation, its
	// message), recorded with the move.
	Note string
}

// Traits are the rules of a protocol that the referee must follow.
type Traits struct {
	AutoPass     bool // the server passes for a seat with no move (othello-board)
	IllegalLoses bool // a refused move ends the game at once (othello-move)
	// ForfeitOnTimeout: the protocol cannot tell a client that the server moved
	// for it (othello-move), so running out of time always loses.
	ForfeitOnTimeout bool
	// Person: the seat is a person's (Human): refused moves are counted but
	// never lose, and a clock that runs out (the person went away) is a
	// resignation, cause idle.
	Person bool
}

// Greeter is a Seat whose protocol opens with an exchange the engine answers
// before play: pbrain's START and OK, NBoard's "nboard 2" and a ping's pong.
// The runner calls Greet before the game begins, so the first move's clock
// starts only once the engine is ready: a brain loading its weights in START
// is not spending its first move's time. Greet returns once the engine has
// answered, or with an error if it left first (ErrGone) or ctx ended.
type Greeter interface {
	Greet(ctx context.Context, size int) error
}

// Unread is a Seat that can tell whether its client's input holds bytes its
// reader has not yet turned into events (TCP on Linux): the referee waits for
// them before it flags the client, since they may be a move that arrived in
// time while the server was busy elsewhere. When Unread reports true, wake
// is called once, on the reader goroutine, when the reader next waits on an
// empty socket: every whole line before that has been delivered as an
// event. wake must not block.
type Unread interface {
	Unread(wake func()) bool
}

// ErrGone: the engine closed its output or exited before it answered.
var ErrGone = errors.New("the engine closed its output")

// Seat is one engine's connection in one game, spoken in its protocol.
// Methods other than Listen and Close are called by one goroutine at a time:
// the referee serializes its event handlers.
type Seat interface {
	Traits() Traits
	// Listen starts reading the client. handle is called for what the client
	// does, in order, on the seat's reader goroutine, and nothing more is read
	// until it returns; it may call the methods of both seats.
	Listen(handle func(Action))
	// Begin writes the start of the game.
	Begin(ctx context.Context, s Start) error
	// Update reports moves and gives the move to the side in Turn.
	Update(ctx context.Context, u Update) error
	// Refuse answers the pending Attempt: the move was not accepted.
	Refuse(ctx context.Context, m games.Move, r games.Refusal) error
	// Relay passes a chat line from a side (possibly this one) to the client.
	Relay(ctx context.Context, from games.Color, nick, text string) error
	// OpponentLeft tells the client its opponent is gone.
	OpponentLeft(ctx context.Context) error
	// End writes the end of the game for this seat; the connection is closed after.
	End(ctx context.Context, e Ending) error
	// Nick is the name the client gave itself (NICK, OPEN), "" if none.
	Nick() string
	// Close closes the connection and waits for the seat's goroutines.
	Close() error
}
