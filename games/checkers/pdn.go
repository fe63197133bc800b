package checkers

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// PDN is the Portable Draughts Notation, what checkers programs and
// databases read: tags [Event], [Date], [Black], [White], [Result] and, for
// the English rules, [GameType "21"] (English draughts); a game of the seed
// rules is not an English game (its men never crown) and says so in a
// [Variant] tag instead. Then the moves, numbered by Black's, in the square
// notation ("11-15", "22x15x8": every landing of a capture), and the result:
// "1-0" (Black won), "0-1", "1/2-1/2".
var PDN = games.RecordFormat{
	Ext: "pdn", Title: "PDN (checkers programs)", ContentType: "text/plain; charset=utf-8",
	Write: writePDN, Read: readPDN,
}

func pdnTag(s string) string { return strings.NewReplacer(`"`, "'", "\\", "/", "\n", " ").Replace(s) }

func writePDN(w io.Writer, gs []games.RecordGame) error {
	bw := bufio.NewWriter(w)
	for i, g := range gs {
		if i > 0 {
			bw.WriteString("\n")
		}
		result := "1/2-1/2"
		switch g.Winner {
		case games.Black:
			result = "1-0"
		case games.White:
			result = "0-1"
		}
		fmt.Fprintf(bw, "[Event %q]\n[Date %q]\n[Round %q]\n[Black %q]\n[White %q]\n[Result %q]\n",
			pdnTag(g.Event), g.Date.UTC().Format("2006.01.02"), pdnTag(g.Round), pdnTag(g.Black), pdnTag(g.White), result)
		if g.Rule == "english" {
			bw.WriteString("[GameType \"21\"]\n")
		} else {
			bw.WriteString("[Variant \"taikai seed: men do not crown, the seed's score decides\"]\n")
		}
		if g.Reason != games.ReasonNormal {
			fmt.Fprintf(bw, "[Termination %q]\n", g.Reason)
		}
		col := 0
		for j, m := range g.Moves {
			tok := Notation(m.Move)
			if j%2 == 0 {
				tok = fmt.Sprintf("%d. %s", j/2+1, tok)
			}
			if col+len(tok) > 78 {
				bw.WriteString("\n")
				col = 0
			} else if col > 0 {
				bw.WriteString(" ")
				col++
			}
			bw.WriteString(tok)
			col += len(tok)
		}
		if col > 0 {
			bw.WriteString(" ")
		}
		bw.WriteString(result + "\n")
	}
	return bw.Flush()
}

// readPDN reads the moves of every game of a PDN file (tags and comments
// skipped; each game ends with its result).
func readPDN(r io.Reader) ([][]games.Move, error) {
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, err
	}
	var (
		out  [][]games.Move
		cur  []games.Move
		open bool
	)
	text := string(b)
	for line, rest := 1, text; rest != ""; line++ {
		l, after, _ := strings.Cut(rest, "\n")
		rest = after
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			continue
		}
		for _, tok := range strings.Fields(l) {
			switch {
			case tok == "1-0" || tok == "0-1" || tok == "1/2-1/2" || tok == "*" || tok == "2-0" || tok == "0-2" || tok == "1-1":
				out, cur, open = append(out, cur), nil, false
			case strings.HasSuffix(tok, "."):
				// a move number
			default:
				from, to, _, err := ParseMove(tok)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", line, err)
				}
				m := games.Move{X: from.X(), Y: from.Y()}
				for _, t := range to {
					m.Path = append(m.Path, games.Point{X: t.X(), Y: t.Y()})
				}
				cur, open = append(cur, m), true
			}
		}
	}
	if open {
		out = append(out, cur)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no game: want [tags], then moves such as 1. 11-15 23-19 and a result")
	}
	return out, nil
}
