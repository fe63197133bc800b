// Package games is the vocabulary every layer of taikai shares: colours,
// moves, game-end reasons, outcomes, the record of a played game, the Rules
// the referee needs of a game, and the registry of games. The games
// themselves (games/othello, games/gomoku) register here; storage, the web
// layer, the referee and the wire adapters all import this package and none
// of them imports another for these words.
package games

import (
	"errors"
	"slices"
	"time"
)

// Color is a side: Black (1) moves first, White (-1). None means nobody, for
// example the side to move once the game is over, or the winner of a draw.
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

// Index is 0 for black and 1 for white, for arrays of both sides.
func (c Color) Index() int {
	if c == White {
		return 1
	}
	return 0
}

// ColorAt is the side of index i (0 black, 1 white).
func ColorAt(i int) Color {
	if i == 1 {
		return White
	}
	return Black
}

// ParseColor reads "black" or "white".
func ParseColor(s string) (Color, error) {
	switch s {
	case "black":
		return Black, nil
	case "white":
		return White, nil
	}
	return None, errors.New(`want "black" or "white"`)
}

// Point is a cell or an intersection: column X, row Y, 0-based from the
// top-left.
type Point struct{ X, Y int }

// Move is a move of any game. A stone-placing game (Othello, Gomoku) puts a
// stone at (X, Y); a game whose moves are paths (checkers) starts at (X, Y)
// and visits Path in order. A pass has Pass set and no coordinates. Each game
// prints and parses its moves in its own notation (Game.Notation).
type Move struct {
	X, Y int
	Pass bool
	Path []Point
}

// Equal reports whether two moves are the same.
func (m Move) Equal(o Move) bool {
	return m.X == o.X && m.Y == o.Y && m.Pass == o.Pass && slices.Equal(m.Path, o.Path)
}

// PassMove is the move of a side that cannot move but whose game goes on.
var PassMove = Move{X: -1, Y: -1, Pass: true}

// Refusal says why the rules (or the referee) refused a move.
type Refusal int8

// Reasons a move is refused.
const (
	Occupied    Refusal = iota + 1 // a stone is already there
	OffBoard                       // outside the board
	NoFlip                         // Othello: flips nothing
	Forbidden                      // Gomoku: forbidden by the rule (three-three, ...)
	PassRefused                    // a pass while a move exists
	NotYourTurn                    // the move came when it was not the side's turn
	IllegalMove                    // checkers: not a move of the side's pieces (wrong piece, direction, path)
	MustCapture                    // checkers: a capture was due (or its sequence went on) and the move is not it
)

// Allowed is the zero Refusal: nothing refuses the move.
const Allowed Refusal = 0

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
	case IllegalMove:
		return "illegal_move"
	case MustCapture:
		return "must_capture"
	}
	return "refused"
}

// Game-end reasons (PROTOCOLS.md, "Game-end reasons"): stored, shown, and sent
// where a protocol has a slot for them.
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
	// ReasonMemory: the engine went over its sandbox's memory limit (the
	// kernel killed a process of it); it loses.
	ReasonMemory = "memory"
)

// Reasons lists every game-end reason.
var Reasons = []string{ReasonNormal, ReasonTimeout, ReasonIllegal, ReasonDisconnect, ReasonClose, ReasonResign, ReasonNoConnect, ReasonCrash, ReasonMemory, ReasonAborted}

// Causes refine a reason, for protocols that tell them apart on the wire.
const (
	CauseInvalidMove    = "invalid_move"    // an illegal move or pass
	CauseInvalidCommand = "invalid_command" // a line that is not a move where one was due
	CauseMaxErrors      = "max_errors"      // too many refused commands
	// CauseAfterRefused: a timeout in a turn whose move the rules refused
	// (the engine waited after its refused move).
	CauseAfterRefused = "after_refused"
	CauseFlood        = "flood"  // too many lines, or a line without end
	CauseFolder       = "folder" // stopped for filling its persistent folder over its bound
	CauseServer       = "server" // aborted: the server's own failure (no descriptor, no memory), played again
	CauseIdle         = "idle"   // a person's seat resigned: no move for the server's --play-idle
)

// Outcome is how a game ended.
type Outcome struct {
	Winner Color // None: a draw (or nobody, for an aborted game)
	Reason string
	Cause  string
	Loser  Color // the side the reason is about (timeout, illegal, ...), None for normal ends
}

// Result is a finished game's result as stored and sent: the side that
// won, or a draw.
type Result string

// Results of a game.
const (
	BlackWon Result = "black"
	WhiteWon Result = "white"
	Drawn    Result = "draw"
)

// Result names the outcome as stored: BlackWon, WhiteWon or Drawn; "" for
// an aborted game, which has none.
func (o Outcome) Result() Result {
	if o.Reason == ReasonAborted {
		return ""
	}
	return ResultOf(o.Winner)
}

// ResultOf names a winner as stored: BlackWon, WhiteWon or Drawn.
func ResultOf(winner Color) Result {
	switch winner {
	case Black:
		return BlackWon
	case White:
		return WhiteWon
	}
	return Drawn
}

// Ply is a move as it was played: by whom, how long it took.
type Ply struct {
	Color Color
	Move
	Auto    bool // made by the server: a forced pass, or a move for a side out of time
	MS      int64
	Elapsed time.Duration // the clock's reading, as exact as it was measured (not stored)
	// Note is what the engine said about its move, where its protocol lets
	// it (an NBoard engine's evaluation, a Gomocup brain's MESSAGEs); "" if
	// nothing. Several notes are kept one a line, in order (a protocol's
	// lines hold no newline); MoveView shows the last and lists them all.
	Note string
}

// Violations counts one side's refused commands by kind.
type Violations map[string]int

// Record is a played game as the referee leaves it and the store keeps it.
type Record struct {
	Moves      []Ply
	Outcome    Outcome
	Violations [2]Violations // black, white
	Stones     [2]int        // black's and white's pieces on the board at the end
}

// Board is a read-only view of a position, valid only during the call it is
// passed to: whoever needs it later copies what it needs.
type Board interface {
	Size() int
	// At returns 1 for a black piece, -1 for white, 0 for empty; 2 and -2
	// for a promoted piece (a checkers king).
	At(x, y int) int8
}

// Rules are one game in progress as the referee plays it.
type Rules interface {
	Board
	// Turn is the side to move, None once the game is over.
	Turn() Color
	// Check says whether the side to move may make m.
	Check(m Move) (Refusal, bool)
	// Play makes a move that Check accepted.
	Play(m Move)
	// MustPass: the side to move has no move but the game goes on.
	MustPass() bool
	// CanPass: the side to move has no move (passing is legal), game over or not.
	CanPass() bool
	// Finished: the position is final.
	Finished() bool
	// Winner of a finished position, None for a draw.
	Winner() Color
	// Stones returns the pieces of each colour.
	Stones() (black, white int)
	// Random picks a uniformly random allowed move for the side to move.
	Random(r Rand) Move
	// Highlight returns the points to mark at the end (a five in a row), or nil.
	Highlight() []Point
}

// Scorer is implemented by Rules whose score at the end is not the piece
// count (checkers under the seed rules): the referee sends it in END.
type Scorer interface {
	Score() (black, white int)
}

// Rand is the source of random moves (math/rand/v2's *Rand).
type Rand interface{ IntN(n int) int }
