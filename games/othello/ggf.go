package othello

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// GGF is the Generic Game Format of GGS, which NBoard and GGS read
// (https://www.skatgame.net/mburo/ggsa/ggf): one game per "(; ... ;)", its
// properties KEY[value]. taikai writes GM[Othello], PC[taikai], DT (UTC),
// PB, PW, TI (a total clock only: GGF has no per-move clock), TY[8], RE (the
// disc difference from black's side, "+4.000"; a game lost otherwise than on
// the board is ±64 with ":t" for a timeout, ":r" for any other forfeit),
// BO (the start position, black to move) and one B[...] or W[...] per ply,
// "f5//1.23": the move, no evaluation, the seconds it took ("PA" a pass).
var GGF = games.RecordFormat{
	Ext: "ggf", Title: "GGF (NBoard, GGS)", ContentType: "text/plain; charset=utf-8",
	Write: writeGGF, Read: readGGF,
}

// GGFStart is BO's start position: rows a1-h1 to a8-h8, then the side to
// move (black).
const GGFStart = "8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *"

func ggfText(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", "\\", "/").Replace(s)
}

func writeGGF(w io.Writer, gs []games.RecordGame) error {
	bw := bufio.NewWriter(w)
	for _, g := range gs {
		fmt.Fprintf(bw, "(;GM[Othello]PC[taikai]DT[%s]PB[%s]PW[%s]", g.Date.UTC().Format("2006.01.02_15:04:05.UTC"), ggfText(g.Black), ggfText(g.White))
		if g.TotalTimeMS > 0 {
			s := g.TotalTimeMS / 1000
			fmt.Fprintf(bw, "TI[%d:%02d]", s/60, s%60)
		}
		fmt.Fprintf(bw, "TY[8]RE[%s]BO[%s]", ggfResult(g), GGFStart)
		for _, m := range g.Moves {
			side := "B"
			if m.Color == games.White {
				side = "W"
			}
			mv := "PA"
			if !m.Pass {
				mv = At(m.X, m.Y).String()
			}
			fmt.Fprintf(bw, "%s[%s//%.2f]", side, mv, float64(m.MS)/1000)
		}
		bw.WriteString(";)\n")
	}
	return bw.Flush()
}

// ggfResult is RE: from black's side.
func ggfResult(g games.RecordGame) string {
	if g.Reason == games.ReasonNormal {
		return fmt.Sprintf("%+d.000", g.Stones[0]-g.Stones[1])
	}
	flag := ":r"
	if g.Reason == games.ReasonTimeout {
		flag = ":t"
	}
	switch g.Winner {
	case games.Black:
		return "+64.000" + flag
	case games.White:
		return "-64.000" + flag
	}
	return "0.000" + flag
}

// readGGF reads the moves of every game of a GGF file. A game must start
// from the standard position with black to move (BO, if given).
func readGGF(r io.Reader) ([][]games.Move, error) {
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, err
	}
	text := string(b)
	var out [][]games.Move
	for n := 1; ; n++ {
		start := strings.Index(text, "(;")
		if start < 0 {
			break
		}
		// The end is looked for after the "(;": in "(;)" the two overlap.
		body := text[start+2:]
		end := strings.Index(body, ";)")
		if end < 0 {
			return nil, fmt.Errorf("game %d: no ;) at its end", n)
		}
		moves, err := ggfMoves(body[:end])
		if err != nil {
			return nil, fmt.Errorf("game %d: %w", n, err)
		}
		out = append(out, moves)
		text = body[end+2:]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no game: want (;GM[Othello]...;)")
	}
	return out, nil
}

func ggfMoves(body string) ([]games.Move, error) {
	var moves []games.Move
	for body = strings.TrimSpace(body); body != ""; body = strings.TrimSpace(body) {
		open := strings.IndexByte(body, '[')
		if open < 0 {
			return nil, fmt.Errorf("text %q outside a property", body)
		}
		close := strings.IndexByte(body[open:], ']')
		if close < 0 {
			return nil, fmt.Errorf("property %s has no ]", strings.TrimSpace(body[:open]))
		}
		key, val := strings.TrimSpace(body[:open]), body[open+1:open+close]
		body = body[open+close+1:]
		switch key {
		case "GM":
			if !strings.EqualFold(val, "othello") {
				return nil, fmt.Errorf("GM[%s] is not Othello", val)
			}
		case "TY":
			if !strings.HasPrefix(val, "8") || strings.ContainsAny(val[1:], "0123456789") {
				return nil, fmt.Errorf("TY[%s]: only 8x8 games", val)
			}
		case "BO":
			// The 64 cells may come in rows or in one run (NBoard's own).
			f := strings.Fields(val)
			start := strings.Fields(GGFStart)
			if len(f) < 3 || f[0] != "8" || strings.Join(f[1:len(f)-1], "") != strings.Join(start[1:9], "") || f[len(f)-1] != "*" {
				return nil, fmt.Errorf("BO[%s] is not the start position with black to move", val)
			}
		case "B", "W":
			mv, _, _ := strings.Cut(val, "/")
			mv = strings.TrimSpace(mv)
			if strings.EqualFold(mv, "pa") {
				moves = append(moves, games.PassMove)
				continue
			}
			m, err := parseMove(mv)
			if err != nil {
				return nil, fmt.Errorf("move %d %s[%s]: %v", len(moves)+1, key, val, err)
			}
			moves = append(moves, m)
		}
	}
	return moves, nil
}
