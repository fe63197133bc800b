package engines

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Human is the protocol name of a person's seat (issue 39): the moves come
// from the browser through the API, not from a process. A person is stored
// as an unlisted engine of this protocol; the runner launches nothing for it.
const Human = "human"

// Errors of a person's move that the referee never sees.
var (
	// ErrNotYourTurn: the person moved while the other side was to move.
	ErrNotYourTurn = errors.New("it is not your turn")
	// ErrGameOver: the game has ended.
	ErrGameOver = errors.New("the game is over")
	// ErrNotBegun: the game has not begun (its engine is starting).
	ErrNotBegun = errors.New("the game has not begun yet")
)

// RefusedError is a person's move the rules refused; the game goes on.
// Detail is the rule's pattern, if it names one ("double three").
type RefusedError struct {
	Why    games.Refusal
	Detail string
}

func (e *RefusedError) Error() string {
	if e.Detail != "" {
		return "the move was refused: " + e.Why.String() + ": " + e.Detail
	}
	return "the move was refused: " + e.Why.String()
}

// PersonState is what a person's seat knows of its game, for the page that
// shows it: the position after the last move, whose turn it is, and the
// moves the person may make when it is theirs.
type PersonState struct {
	Color games.Color
	Turn  games.Color // None before the game begins and once it is over
	Plies int         // moves played, the opening's and passes included
	Moves []games.Ply // the moves played, in order
	Board [][]int8    // rows of At(x, y)
	// Choices are the person's legal moves (and forbidden points) when it
	// is their turn; empty otherwise.
	Choices games.Choices
	Begun   bool
	Ended   bool
	Ending  Ending
	// Version counts the changes, for a page that waits for the next.
	Version int64
}

// Person is a person's seat in one game: the referee drives it as it drives
// an engine's adapter (Begin, Update, Refuse, End), and the person's moves
// come in through Move and Resign, which call the referee's handler as an
// adapter's reader goroutine does.
type Person struct {
	color games.Color

	play sync.Mutex // one move or resignation at a time

	mu      sync.Mutex
	handle  func(Action)
	state   PersonState
	refused *games.Refusal // the referee's answer to the attempt being handled
	changed chan struct{}  // closed and replaced at every change
}

// NewPerson returns the seat of a person playing color.
func NewPerson(color games.Color) *Person {
	return &Person{color: color, state: PersonState{Color: color}, changed: make(chan struct{})}
}

// Traits: a person's refused moves never lose (a misclick is not a loss),
// a person whose clock runs out has left the board (they resign), and the
// server passes for a person who has no move.
func (p *Person) Traits() Traits { return Traits{Person: true, AutoPass: true} }

// Listen keeps the referee's handler for the person's moves.
func (p *Person) Listen(handle func(Action)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handle = handle
}

// Begin records the start position.
func (p *Person) Begin(_ context.Context, s Start) error {
	p.set(s.Board, s.Turn, func(st *PersonState) {
		st.Begun = true
		st.Moves = append([]games.Ply(nil), s.Opening...)
	})
	return nil
}

// Update records the position and, on the person's turn, their choices.
func (p *Person) Update(_ context.Context, u Update) error {
	p.set(u.Board, u.Turn, func(st *PersonState) {
		// A new slice: a State taken before shares the old one's array.
		st.Moves = append(st.Moves[:len(st.Moves):len(st.Moves)], u.Moves...)
	})
	return nil
}

// set copies what it needs of b, which is valid only during the call.
func (p *Person) set(b games.Board, turn games.Color, more func(*PersonState)) {
	n := b.Size()
	rows := make([][]int8, n)
	for y := range n {
		rows[y] = make([]int8, n)
		for x := range n {
			rows[y][x] = b.At(x, y)
		}
	}
	var ch games.Choices
	if r, ok := b.(games.Rules); ok && turn == p.color {
		ch = games.ChoicesOf(r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state.Board, p.state.Turn, p.state.Choices = rows, turn, ch
	more(&p.state)
	p.state.Plies = len(p.state.Moves)
	p.notify()
}

// notify wakes every State waiter; p.mu is held.
func (p *Person) notify() {
	p.state.Version++
	close(p.changed)
	p.changed = make(chan struct{})
}

// Refuse records the referee's refusal of the move being handled.
func (p *Person) Refuse(_ context.Context, _ games.Move, r games.Refusal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = &r
	return nil
}

// Relay: a person's seat has no chat.
func (p *Person) Relay(context.Context, games.Color, string, string) error { return nil }

// OpponentLeft: the ending says it.
func (p *Person) OpponentLeft(context.Context) error { return nil }

// End records how the game ended.
func (p *Person) End(_ context.Context, e Ending) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state.Ended, p.state.Ending, p.state.Turn, p.state.Choices = true, e, games.None, games.Choices{}
	p.notify()
	return nil
}

// Nick: a person is known by their registered name.
func (p *Person) Nick() string { return "" }

// Close ends the seat: a move after it is refused with ErrGameOver.
func (p *Person) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.state.Ended {
		p.state.Ended = true
		p.state.Turn = games.None
		p.state.Choices = games.Choices{}
		p.notify()
	}
	return nil
}

// State returns what the seat knows now, and a channel closed at its next
// change.
func (p *Person) State() (PersonState, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, p.changed
}

// Move plays the person's move: it returns once the referee has accepted it
// (nil) or refused it (*RefusedError); ErrNotYourTurn and ErrGameOver never
// reach the referee, so a click out of turn is not counted against anyone.
// Before the game begins it waits for the beginning, until ctx is done
// (ErrNotBegun).
func (p *Person) Move(ctx context.Context, m games.Move) error {
	p.play.Lock()
	defer p.play.Unlock()
	handle, err := p.ready(ctx, true)
	if err != nil {
		return err
	}
	st, _ := p.State()
	// The referee answers on this goroutine, before handle returns: with
	// Refuse, with Update, or by ending the game.
	handle(Action{Kind: Attempt, Move: m, At: time.Now()})
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.refused != nil:
		e := &RefusedError{Why: *p.refused}
		if e.Why == games.Forbidden && !m.Pass {
			e.Detail = st.Choices.Foul(games.Point{X: m.X, Y: m.Y})
		}
		return e
	case p.state.Plies == st.Plies:
		// Neither refused nor played: the clock had run out (the person
		// resigned as idle) as the move came.
		return ErrGameOver
	}
	return nil
}

// ready waits for the game to begin and returns the referee's handler, or
// why the person cannot act now; p.play is held.
func (p *Person) ready(ctx context.Context, move bool) (func(Action), error) {
	// Before the game begins (its engine connecting), wait for it.
	p.waitFor(ctx, func(st PersonState) bool { return st.Begun || st.Ended })
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = nil
	switch {
	case p.state.Ended:
		return nil, ErrGameOver
	case !p.state.Begun || p.handle == nil:
		return nil, ErrNotBegun
	case move && p.state.Turn != p.color:
		return nil, ErrNotYourTurn
	}
	return p.handle, nil
}

// waitFor waits until the seat's state is as ok wants, or ctx is done.
func (p *Person) waitFor(ctx context.Context, ok func(PersonState) bool) {
	for {
		st, changed := p.State()
		if ok(st) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// Resign gives the game up.
func (p *Person) Resign(ctx context.Context) error {
	p.play.Lock()
	defer p.play.Unlock()
	handle, err := p.ready(ctx, false)
	if err != nil {
		return err
	}
	handle(Action{Kind: Left, Reason: games.ReasonResign})
	// The referee tells the seats the end from its own goroutine: wait for
	// it, so that the answer shows the game over.
	p.waitFor(ctx, func(st PersonState) bool { return st.Ended })
	return nil
}
