package gomoku

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// PSQ is Piskvork's game record (what Piskvork writes and reads, and the
// Gomocup publishes): a line "Piskvorky WxH, 11:11, 0" (the board, the two
// players' levels as Piskvork saves computer players, and 0: the first
// player began), one line "x,y,ms" per move with 1-based coordinates
// (column, then row from the top) and the milliseconds it took, then the
// black and the white player's names and a code, 0 for a game that ended on
// the board and -1 otherwise (Piskvork's "unavailable"). A file of several
// games holds one such record after another; Piskvork itself reads the first.
// PSQ has no pass: a game with one (renju, a side with no allowed point) is
// refused.
var PSQ = games.RecordFormat{
	Ext: "psq", Title: "PSQ (Piskvork, Gomocup)", ContentType: "text/plain; charset=utf-8",
	Write: writePSQ, Read: readPSQ,
}

func psqName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	return s
}

func writePSQ(w io.Writer, gs []games.RecordGame) error {
	bw := bufio.NewWriter(w)
	for _, g := range gs {
		fmt.Fprintf(bw, "Piskvorky %dx%d, 11:11, 0\n", g.Size, g.Size)
		for i, m := range g.Moves {
			if m.Pass {
				return fmt.Errorf("psq: ply %d is a pass, which PSQ cannot write", i+1)
			}
			fmt.Fprintf(bw, "%d,%d,%d\n", m.X+1, m.Y+1, max(m.MS, 0))
		}
		code := -1
		if g.Reason == games.ReasonNormal {
			code = 0
		}
		fmt.Fprintf(bw, "%s\n%s\n%d\n", psqName(g.Black), psqName(g.White), code)
	}
	return bw.Flush()
}

// readPSQ reads the moves of every record of a PSQ file.
func readPSQ(r io.Reader) ([][]games.Move, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	var (
		out  [][]games.Move
		cur  []games.Move
		size int
		in   bool // inside a record's moves
		seen bool // a record has begun (its names and code follow its moves)
		line int
	)
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(t, "Piskvorky ") {
			if in {
				out = append(out, cur)
			}
			var w, h, a, b, first int
			if n, _ := fmt.Sscanf(t, "Piskvorky %dx%d, %d:%d, %d", &w, &h, &a, &b, &first); n != 5 || w != h || w < MinSize || w > MaxSize {
				return nil, fmt.Errorf("line %d: %q: want \"Piskvorky NxN, a:b, 0\" with N %d-%d", line, t, MinSize, MaxSize)
			}
			if first != 0 {
				return nil, fmt.Errorf("line %d: the record says the second player began (%d)", line, first)
			}
			cur, size, in, seen = nil, w, true, true
			continue
		}
		if !in {
			if t == "" || seen {
				continue // the names and the code of the record before
			}
			return nil, fmt.Errorf("line %d: %q before a Piskvorky line", line, t)
		}
		f := strings.Split(t, ",")
		if len(f) < 2 || len(f) > 3 {
			in = false // the names and the code follow the moves
			out = append(out, cur)
			continue
		}
		x, errx := strconv.Atoi(strings.TrimSpace(f[0]))
		y, erry := strconv.Atoi(strings.TrimSpace(f[1]))
		if errx != nil || erry != nil {
			in = false
			out = append(out, cur)
			continue
		}
		if x < 1 || y < 1 || x > size || y > size {
			return nil, fmt.Errorf("line %d: move %d,%d is off the %dx%d board (PSQ counts from 1)", line, x, y, size, size)
		}
		cur = append(cur, games.Move{X: x - 1, Y: y - 1})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if in {
		out = append(out, cur)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no record: want a line \"Piskvorky 15x15, 11:11, 0\"")
	}
	return out, nil
}
