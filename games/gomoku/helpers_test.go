package gomoku_test

import (
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// position sets up a diagram on a 15x15 board and returns the point marked '?'
// ((-1,-1) if none). Rows hold '.' empty, 'X' black, 'O' white, '?' an empty
// point asked about; spaces are ignored. The diagram is centred, so the board
// around it is empty, unless every row starts with '|': then the diagram's left
// side is the board's left edge.
func position(tb testing.TB, diagram string) (*gomoku.Board, gomoku.Point) {
	tb.Helper()
	return positionOn(tb, gomoku.DefaultSize, diagram)
}

// positionOn is position on a board of the given size.
func positionOn(tb testing.TB, size int, diagram string) (*gomoku.Board, gomoku.Point) {
	tb.Helper()
	var rows []string
	for line := range strings.SplitSeq(diagram, "\n") {
		line = strings.Join(strings.Fields(line), "")
		if line != "" {
			rows = append(rows, line)
		}
	}
	if len(rows) == 0 {
		tb.Fatalf("empty diagram")
	}
	edge := true
	for _, r := range rows {
		edge = edge && strings.HasPrefix(r, "|")
	}
	if edge {
		for i := range rows {
			rows[i] = rows[i][1:]
		}
	}
	w, h := len(rows[0]), len(rows)
	if w > size || h > size {
		tb.Fatalf("diagram %dx%d does not fit a %dx%d board", w, h, size, size)
	}
	ox, oy := (size-w)/2, (size-h)/2
	if edge {
		ox = 0
	}
	b, err := gomoku.NewBoard(size)
	if err != nil {
		tb.Fatal(err)
	}
	q := gomoku.Point{X: -1, Y: -1}
	for y, r := range rows {
		if len(r) != w {
			tb.Fatalf("diagram row %d %q: %d cells, want %d", y, r, len(r), w)
		}
		for x, c := range r {
			switch c {
			case 'X':
				b.Put(gomoku.Black, ox+x, oy+y)
			case 'O':
				b.Put(gomoku.White, ox+x, oy+y)
			case '?':
				if q.X >= 0 {
					tb.Fatalf("diagram has more than one '?'")
				}
				q = gomoku.Point{X: ox + x, Y: oy + y}
			case '.':
			default:
				tb.Fatalf("diagram row %d %q: unknown cell %q", y, r, c)
			}
		}
	}
	return b, q
}

// swapColours returns the diagram with black and white exchanged.
func swapColours(diagram string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case 'X':
			return 'O'
		case 'O':
			return 'X'
		}
		return r
	}, diagram)
}

// play makes the moves in order and fails unless each is accepted.
func play(tb testing.TB, g *gomoku.Game, moves ...gomoku.Point) {
	tb.Helper()
	for i, m := range moves {
		if v := g.Play(m.X, m.Y); v != games.Allowed {
			tb.Fatalf("move %d %v by %v: %v, want ok\n%s", i, m, g.Turn(), v, g.Board())
		}
	}
}

// pts builds points from coordinate pairs x0, y0, x1, y1, ...
func pts(xy ...int) []gomoku.Point {
	var out []gomoku.Point
	for i := 0; i+1 < len(xy); i += 2 {
		out = append(out, gomoku.Point{X: xy[i], Y: xy[i+1]})
	}
	return out
}
