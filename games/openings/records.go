package openings

import (
	"io"
	"strings"

	"github.com/taikai-dev/taikai/games"
)

// FromRecords turns the games of a record file (GGF, PSQ: the game's
// games.RecordFormat with extension ext) into the text of a suite for a
// board of size, one opening a line: each game's first plies moves, or all
// of them if plies is 0 (points keep their place from the top-left corner).
// Parse then checks them; its "line N" is the file's game N.
func FromRecords(game string, size int, ext string, r io.Reader, plies int) (string, error) {
	f, ok := games.RecordFormatOf(game, ext)
	if !ok || f.Read == nil {
		return "", games.Invalid("format", "%s games have no %q record format to import", game, ext)
	}
	if plies < 0 {
		return "", games.Invalid("plies", "plies %d: want 0 (every move) or more", plies)
	}
	list, err := f.Read(r)
	if err != nil {
		return "", games.Invalid("text", "%s: %v", f.Title, err)
	}
	var sb strings.Builder
	for i, moves := range list {
		if plies > 0 && len(moves) > plies {
			moves = moves[:plies]
		}
		if len(moves) == 0 {
			return "", games.Invalid("text", "%s: game %d has no move", f.Title, i+1)
		}
		sb.WriteString(Format(game, size, moves))
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}

// ParseFile reads a suite file: taikai's text, or a record file of the game
// named by its extension (".ggf" Othello, ".psq" Gomoku, ".pdn" checkers), whose
// games become openings, cut to plies moves (0: whole).
func ParseFile(name, game, rule string, size int, r io.Reader, plies int) (*Suite, error) {
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = name[i+1:]
	}
	if _, ok := games.RecordFormatOf(game, ext); !ok {
		return Parse(name, game, rule, size, r)
	}
	text, err := FromRecords(game, size, ext, r, plies)
	if err != nil {
		return nil, err
	}
	return Parse(name, game, rule, size, strings.NewReader(text))
}
