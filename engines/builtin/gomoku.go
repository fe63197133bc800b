package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/gomokuai"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// gomokuTurn plays the student project's gomoku protocol: on "your turn" it asks
// for the board as text, then puts a stone until the server accepts one.
func (c *client) gomokuTurn() error {
	var me games.Color
	switch c.opt.Color {
	case "black":
		me = gomoku.Black
	case "white":
		me = gomoku.White
	default:
		return fmt.Errorf("gomoku-turn needs the colour: --color black|white, -b or -w (got %q)", c.opt.Color)
	}
	rule, err := gomoku.ParseRule(c.opt.Rule)
	if err != nil {
		return err
	}
	for {
		line, err := c.line()
		if err == io.EOF {
			return nil // the server closes both connections when the game ends
		}
		if err != nil {
			return err
		}
		if bytes.HasPrefix(line, []byte("end ")) {
			return nil
		}
		if !bytes.Equal(line, []byte("your turn")) {
			continue
		}
		// A "your turn" that arrives while a turn is being played means the
		// server played that turn for us (our time ran out). Our get or put
		// of that turn may have reached the server before the new turn (then
		// it was ignored, without a reply) or after it (then it was answered
		// in the new turn): play the new turn, as many times as it happens,
		// and take the answers as they come (see gomokuBoard, gomokuPut).
		for {
			err := c.gomokuTurnOnce(rule, me)
			if err == errNewTurn {
				continue
			}
			if err == errTurnPlayed {
				break
			}
			if err != nil {
				return err
			}
			break
		}
	}
}

// errNewTurn: "your turn" came where a board row or a put's reply was due.
var errNewTurn = errors.New("a new turn began")

// errTurnPlayed: a put of the turn before, answered in this turn, was
// accepted: this turn is played.
var errTurnPlayed = errors.New("a late put played this turn")

// isPutReply tells a put's one-digit reply.
func isPutReply(line []byte) bool {
	return len(line) == 1 && line[0] >= '1' && line[0] <= '4'
}

// isBoardRow tells a row of a board of size n.
func isBoardRow(line []byte, n int) bool {
	return len(line) == n && len(bytes.Trim(line, "+@o")) == 0
}

// gomokuTurnOnce plays one turn: get the board, choose, put until accepted.
func (c *client) gomokuTurnOnce(rule gomoku.Rule, me games.Color) error {
	c.wait()
	board, err := c.gomokuBoard()
	if err != nil {
		return err
	}
	return c.gomokuPut(board, rule, me)
}

// gomokuBoard asks for the board as text and reads it; the size is the length of
// the first line.
func (c *client) gomokuBoard() (*gomoku.Board, error) {
	var b *gomoku.Board
	if err := c.send([]byte("get text\n")); err != nil {
		return nil, err
	}
	for y, n := 0, 0; y == 0 || y < n; y++ {
		row, err := c.line()
		if err != nil {
			return nil, fmt.Errorf("read board row %d: %w", y, err)
		}
		if y == 0 && string(row) == "your turn" {
			return nil, errNewTurn
		}
		if y == 0 && isPutReply(row) {
			// The reply to a put of the turn before, answered in this one:
			// accepted, it was this turn's move (and this get, now out of
			// turn, gets no reply); refused, the board still follows.
			if string(row) == "1" {
				return nil, errTurnPlayed
			}
			y--
			continue
		}
		if y == 0 {
			n = len(row)
			if b, err = gomoku.NewBoard(n); err != nil {
				return nil, fmt.Errorf("board row %q: %v", row, err)
			}
		}
		if len(row) != n {
			return nil, fmt.Errorf("board row %d has %d cells, want %d", y, len(row), n)
		}
		for x, ch := range row {
			s := gomoku.Empty
			switch ch {
			case '@':
				s = gomoku.Black
			case 'o':
				s = gomoku.White
			case '+':
			default:
				return nil, fmt.Errorf("board row %d: unexpected %q", y, ch)
			}
			if s != gomoku.Empty {
				b.Put(s, x, y)
			}
		}
	}
	return b, nil
}

// gomokuPut sends put until the server answers 1.
func (c *client) gomokuPut(b *gomoku.Board, rule gomoku.Rule, me games.Color) error {
	var avoid []gomoku.Point
	deadline := time.Now().Add(c.opt.MoveTime)
	for range b.Size() * b.Size() {
		var p gomoku.Point
		ok := true
		if c.opt.Engine == "gomoku-threat" && len(avoid) == 0 {
			p = gomokuai.Threat(b, rule, me, c.rng, deadline)
		} else {
			p, ok = gomokuai.Random(b, c.rng, avoid)
		}
		if !ok {
			return nil // nowhere left to play: let the clock decide
		}
		c.out = append(c.out[:0], "put "...)
		c.out = strconv.AppendInt(c.out, int64(p.X), 10)
		c.out = append(c.out, ' ')
		c.out = strconv.AppendInt(c.out, int64(p.Y), 10)
		c.out = append(c.out, '\n')
		if err := c.send(c.out); err != nil {
			return err
		}
		reply, err := c.line()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		for isBoardRow(reply, b.Size()) {
			// A board asked for in the turn before and answered in this one,
			// after the board this put was chosen from: not the reply.
			if reply, err = c.line(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
		switch string(reply) {
		case "1":
			return nil
		case "your turn":
			return errNewTurn
		}
		avoid = append(avoid, p)
	}
	return nil
}
