package builtin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/othelloai"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// chooseOthello picks a move for the side to move of b. The move was given
// at received, and must reach the server within budget of that: the search
// leaves a safety margin for a busy machine (the answer still has to be
// written, and this process to be scheduled), and the engine logs on stderr
// what it found and why it stopped.
func (c *client) chooseOthello(b *othello.Board, received time.Time, budget time.Duration) othello.Square {
	switch c.opt.Engine {
	case "othello-random":
		return othelloai.Random(b, c.rng)
	case "othello-greedy":
		return othelloai.Greedy(b, c.rng)
	}
	deadline := received.Add(budget - safetyMargin(budget))
	ch := othelloai.AlphaBetaChoice(b, deadline, c.rng)
	why := fmt.Sprintf("depth %d", ch.Depth)
	switch {
	case ch.Solved:
		why = fmt.Sprintf("endgame solved, final disc difference %+d", ch.Score)
	case ch.Nodes == 0:
		why = "the only move"
	}
	c.moves++
	fmt.Fprintf(os.Stderr, "taikai engine: move %d %s after %d ms of %d ms (%s, %d nodes; the search stops at half the time left after a %d ms margin)\n",
		c.moves, ch.Square, time.Since(received).Milliseconds(), budget.Milliseconds(), why, ch.Nodes, safetyMargin(budget).Milliseconds())
	return ch.Square
}

// safetyMargin is the part of a move's time the search never uses: half of
// it. A loaded machine may run the engine late twice: before it reads the
// move (which its clock cannot see) and during its search. Measured with two
// busy loops beside the match at 100 ms a move, a margin of a fifth lost 7
// games of 59 on time; with half, see docs/COMMANDS.md, "taikai engine".
func safetyMargin(budget time.Duration) time.Duration {
	return budget / 2
}

// othelloBoard plays the classroom protocol: the board comes before every turn.
func (c *client) othelloBoard() error {
	order, err := othello.ParseOrder(c.opt.BoardOrder)
	if err != nil {
		return err
	}
	if err := c.send([]byte("NICK " + c.opt.Name + "\n")); err != nil {
		return err
	}
	var (
		me    games.Color
		cells [64]games.Color
		f     [][]byte
		board []byte // the last BOARD line, parsed only when the turn is ours
	)
	for {
		line, err := c.line()
		if err == io.EOF {
			return nil // the server closes after END; also when the opponent left
		}
		if err != nil {
			return err
		}
		if len(line) > 5 && string(line[:5]) == "BOARD" && (line[5] == ' ' || line[5] == '\t') {
			// Kept, not parsed: both sides get every board, and only the side
			// to move needs it.
			board = append(board[:0], line...)
			continue
		}
		if f = protocol.Fields(line, f); len(f) == 0 {
			continue
		}
		switch string(f[0]) {
		case "START":
			if len(f) != 2 {
				return fmt.Errorf("bad START line %q", line)
			}
			n, err := atoi(f[1])
			if err != nil || (n != 1 && n != -1) {
				return fmt.Errorf("bad START line %q", line)
			}
			me = games.Color(n)
		case "BOARD": // in a form the test above does not take
			board = append(board[:0], line...)
		case "TURN":
			received := time.Now() // the move is ours from here: the clock runs
			if len(f) != 2 {
				return fmt.Errorf("bad TURN line %q", line)
			}
			if n, _ := atoi(f[1]); games.Color(n) != me || me == othello.Empty {
				continue
			}
			if len(board) == 0 {
				return errors.New("TURN before any BOARD")
			}
			f = protocol.Fields(board, f)
			if len(f) != 65 {
				return fmt.Errorf("BOARD with %d cells, want 64", len(f)-1)
			}
			for i := range 64 {
				n, err := atoi(f[i+1])
				if err != nil || n < -1 || n > 1 {
					return fmt.Errorf("bad BOARD cell %d: %q", i, f[i+1])
				}
				cells[i] = games.Color(n)
			}
			c.wait()
			b := othello.FromCells(cells, order, me)
			s := c.chooseOthello(&b, received, c.opt.MoveTime)
			if s == othello.Pass {
				continue // the server passes for us
			}
			if err := c.put(s); err != nil {
				return err
			}
		case "ERROR":
			// Our move was refused (a server with another board order?): try any
			// legal move rather than stall until the clock runs out.
			if len(f) == 2 && string(f[1]) == "2" {
				b := othello.FromCells(cells, order, me)
				if s := othelloai.Random(&b, c.rng); s != othello.Pass {
					if err := c.put(s); err != nil {
						return err
					}
				}
			}
		case "END":
			return nil
		}
	}
}

// tokens reads the next line that is not blank into f and returns the line;
// io.EOF when the server closed the connection.
func (c *client) tokens(f *[][]byte) ([]byte, error) {
	for {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if *f = protocol.Fields(line, *f); len(*f) > 0 {
			return line, nil
		}
	}
}

func (c *client) put(s othello.Square) error {
	c.out = append(c.out[:0], "PUT "...)
	c.out = strconv.AppendInt(c.out, int64(s.X()), 10)
	c.out = append(c.out, ' ')
	c.out = strconv.AppendInt(c.out, int64(s.Y()), 10)
	c.out = append(c.out, '\n')
	return c.send(c.out)
}

// othelloMove plays the move-exchange protocol: only moves travel, each side
// keeps its own board.
func (c *client) othelloMove() error {
	if err := c.send([]byte("OPEN " + c.opt.Name + "\n")); err != nil {
		return err
	}
	var (
		b         = othello.New() // MOVE lines before START are the game's opening
		me        games.Color
		started   bool
		remaining time.Duration
		f         [][]byte
	)
	for {
		line, err := c.tokens(&f)
		received := time.Now() // a START or MOVE gives us the move: the clock runs
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch string(f[0]) {
		case "START":
			if len(f) != 4 {
				return fmt.Errorf("bad START line %q", line)
			}
			switch string(f[1]) {
			case "BLACK":
				me = othello.Black
			case "WHITE":
				me = othello.White
			default:
				return fmt.Errorf("bad START colour %q", f[1])
			}
			ms, err := atoi(f[3])
			if err != nil {
				return fmt.Errorf("bad START time %q", f[3])
			}
			remaining = time.Duration(ms) * time.Millisecond
			started = true
			if b.Turn() == me {
				if err := c.moveMove(&b, received, remaining); err != nil {
					return err
				}
			}
		case "ACK":
			if len(f) == 2 {
				if ms, err := atoi(f[1]); err == nil {
					remaining = time.Duration(ms) * time.Millisecond
				}
			}
		case "MOVE":
			if len(f) != 2 {
				return fmt.Errorf("bad MOVE line %q", line)
			}
			s, err := othello.ParseSquare(string(f[1]))
			if err != nil {
				return fmt.Errorf("opponent move: %v", err)
			}
			if _, err := b.Play(s); err != nil {
				return fmt.Errorf("move %s: %v", s, err)
			}
			if started && b.Turn() == me {
				if err := c.moveMove(&b, received, remaining); err != nil {
					return err
				}
			}
		case "END":
			// BYE follows, or a new game on a connection that plays on.
			b, started = othello.New(), false
		case "BYE":
			return nil
		}
	}
}

// moveMove chooses, plays and sends our move.
func (c *client) moveMove(b *othello.Board, received time.Time, remaining time.Duration) error {
	if b.Turn() == othello.Empty {
		return errors.New("no side to move")
	}
	c.wait()
	budget := c.opt.MoveTime
	if remaining > 0 {
		// Spread the total clock over the moves still to come.
		if share := remaining / time.Duration(b.Empties()/2+2); share < budget {
			budget = share
		}
	}
	budget = max(budget, 5*time.Millisecond)
	s := c.chooseOthello(b, received, budget)
	if _, err := b.Play(s); err != nil {
		return fmt.Errorf("own move %s: %v", s, err)
	}
	return c.send([]byte("MOVE " + strings.ToUpper(s.String()) + "\n"))
}
