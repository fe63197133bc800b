package builtin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/checkersai"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/checkers"
)

// chooseCheckers picks a move for the side to move of p, logging on stderr
// what it found.
func (c *client) chooseCheckers(p *checkers.Position, received time.Time, budget time.Duration) (checkers.Move, bool) {
	switch c.opt.Engine {
	case "checkers-random":
		return checkersai.Random(p, c.rng)
	case "checkers-minimax":
		return checkersai.Minimax(p, checkersai.MinimaxDepth, c.rng)
	}
	ch, ok := checkersai.AlphaBeta(p, received.Add(budget-safetyMargin(budget)), c.rng)
	if !ok {
		return checkers.Move{}, false
	}
	c.moves++
	why := fmt.Sprintf("depth %d, score %+d", ch.Depth, ch.Score)
	if ch.Only {
		why = "the only move"
	}
	fmt.Fprintf(os.Stderr, "taikai engine: move %d %s after %d ms of %d ms (%s, %d nodes)\n",
		c.moves, ch.Move, time.Since(received).Milliseconds(), budget.Milliseconds(), why, ch.Nodes)
	return ch.Move, true
}

// checkersBoard plays checkers-board (PROTOCOLS.md §4): the board comes
// before every turn, the answer is MOVE and the whole path.
func (c *client) checkersBoard() error {
	if err := c.send([]byte("NICK " + c.opt.Name + "\n")); err != nil {
		return err
	}
	var (
		me   games.Color
		rule checkers.Rule
		pos  checkers.Position
		have bool // a BOARD has come
		f    [][]byte
	)
	for {
		line, err := c.tokens(&f)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch string(f[0]) {
		case "START":
			if len(f) != 3 {
				return fmt.Errorf("bad START line %q", line)
			}
			n, err := atoi(f[1])
			if err != nil || (n != 1 && n != -1) {
				return fmt.Errorf("bad START line %q", line)
			}
			me = games.Color(n)
			if rule, err = checkers.ParseRule(string(f[2])); err != nil {
				return err
			}
		case "BOARD":
			if len(f) != 33 {
				return fmt.Errorf("BOARD with %d squares, want 32", len(f)-1)
			}
			pos = checkers.Position{Rule: rule}
			for i := range 32 {
				n, err := atoi(f[i+1])
				if err != nil || n < -2 || n > 2 {
					return fmt.Errorf("bad BOARD square %d: %q", i+1, f[i+1])
				}
				b := uint32(1) << i
				switch {
				case n > 0:
					pos.Black |= b
				case n < 0:
					pos.White |= b
				}
				if n == 2 || n == -2 {
					pos.Kings |= b
				}
			}
			have = true
		case "TURN":
			received := time.Now()
			if len(f) != 2 {
				return fmt.Errorf("bad TURN line %q", line)
			}
			if n, _ := atoi(f[1]); games.Color(n) != me || me == games.None {
				continue
			}
			if !have {
				return errors.New("TURN before any BOARD")
			}
			c.wait()
			// The server does not send the move-count of the English draw
			// rule; the search treats the position as fresh.
			pos.Turn = me
			m, ok := c.chooseCheckers(&pos, received, c.opt.MoveTime)
			if !ok {
				continue
			}
			if err := c.send([]byte("MOVE " + m.String() + "\n")); err != nil {
				return err
			}
		case "ERROR":
			// Refused (a server that sees the board otherwise?): try any legal
			// move rather than stall until the clock runs out.
			if have && me != games.None {
				pos.Turn = me
				if m, ok := checkersai.Random(&pos, c.rng); ok {
					if err := c.send([]byte("MOVE " + m.String() + "\n")); err != nil {
						return err
					}
				}
			}
		case "END":
			return nil
		}
	}
}
