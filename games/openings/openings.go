// Package openings holds opening suites: lists of short move sequences from a
// game's start position, from which a match starts its game pairs (each
// opening played twice, colours swapped), so that deterministic engines do
// not replay the same game, and a suite's balance cancels out between the two
// games of a pair.
//
// A suite is text, one opening a line, in the game's notation: Othello
// `f5d6c3` (squares a1-h8, rows from the top; spaces or commas between moves
// allowed), Gomoku `h8 i9 h10` (renju coordinates: a column letter from a, a
// row number from 1 at the bottom, so h8 is the centre of 15x15; moves may
// also run together, `h8i9h10`), checkers `11-15 23-19 8-11` (square
// numbers, spaces between moves). Blank lines and lines starting with '#' are
// skipped. Every opening is played on the game's rules when the suite is read,
// and a line that is not a legal opening is an error naming its number.
//
// The built-in suites (suites/*.txt) are written by cmd/genopenings
// (`go generate ./games/openings`); each file's header says how. Their
// balance, measured with `taikai match --openings builtin --games 200
// --move-time 50ms`: othello-alphabeta against itself, black 47.0% (an
// earlier run 50.5%); gomoku-threat against itself on freestyle, black 58.0%
// (docs/FORMATS.md, Openings).
package openings

//go:generate go run ../../cmd/genopenings -out suites

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all" // the games the suites are for
)

// Line is one opening of a suite (an opening line): the moves from the
// game's start position. (tournament.Opening is which of them a game
// started from.)
type Line struct {
	Index  int          // 0-based position in the suite
	LineNo int          // 1-based line number in the source text
	Moves  []games.Move // as the game's Rules accept them
	Text   string       // the moves in the suite's notation
}

// Suite is a list of openings for one game, rule set and board size.
type Suite struct {
	Name     string // "builtin:othello", "builtin:gomoku-freestyle", or a user's name
	Game     string
	Rule     string // as games.Game.Rule returns it ("" for othello)
	Size     int
	Openings []Line
}

// Limits on a suite.
const (
	MaxMoves = 40       // moves in one opening
	MaxLines = 100000   // lines in a suite
	MaxBytes = 10 << 20 // bytes of a suite
)

// Parse reads a suite and checks every opening on the game's rules. An error
// is a games.Error of field "openings" naming the line and the move.
func Parse(name, game, rule string, size int, r io.Reader) (*Suite, error) {
	g, ok := games.Lookup(game)
	if !ok {
		return nil, games.Invalid("game", "%s", games.Unknown(game))
	}
	rule, err := g.Rule(rule)
	if err != nil {
		return nil, games.Invalid("rule", "%s", err.Error())
	}
	if size == 0 {
		size = g.Size
	}
	if _, err := g.New(rule, size); err != nil {
		return nil, games.Invalid("size", "%s", err.Error())
	}
	s := &Suite{Name: name, Game: game, Rule: rule, Size: size}
	sc := bufio.NewScanner(io.LimitReader(r, MaxBytes+1))
	sc.Buffer(make([]byte, 4096), 64<<10)
	line, read := 0, 0
	for sc.Scan() {
		line++
		read += len(sc.Bytes()) + 1
		if read > MaxBytes {
			return nil, games.Invalid("openings", "over %d MiB", MaxBytes>>20)
		}
		if line > MaxLines {
			return nil, games.Invalid("openings", "over %d lines", MaxLines)
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		moves, err := parseLine(g, rule, size, text)
		if err != nil {
			return nil, games.Invalid("openings", "line %d: %s", line, err.Error())
		}
		s.Openings = append(s.Openings, Line{Index: len(s.Openings), LineNo: line, Moves: moves, Text: Format(game, size, moves)})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, games.Invalid("openings", "line %d: over 64 KiB", line+1)
		}
		return nil, games.Invalid("openings", "%s", err.Error())
	}
	if len(s.Openings) == 0 {
		return nil, games.Invalid("openings", "the suite has no opening (one a line, in the game's notation)")
	}
	return s, nil
}

// parseLine reads one opening and plays it on the rules.
func parseLine(g games.Game, rule string, size int, text string) ([]games.Move, error) {
	words := tokens(text)
	if len(words) > MaxMoves {
		return nil, fmt.Errorf("%d moves, at most %d", len(words), MaxMoves)
	}
	rules, err := g.New(rule, size)
	if err != nil {
		return nil, err
	}
	moves := make([]games.Move, 0, len(words))
	for i, w := range words {
		m, err := parseMove(g.Name, size, w)
		if err != nil {
			return nil, fmt.Errorf("move %d %q: %v", i+1, w, err)
		}
		if rules.Finished() || rules.Turn() == games.None {
			return nil, fmt.Errorf("move %d %q: the game is already over", i+1, w)
		}
		if why, ok := rules.Check(m); !ok {
			return nil, fmt.Errorf("move %d %q: not legal (%s)", i+1, w, why)
		}
		rules.Play(m)
		moves = append(moves, m)
	}
	if rules.Finished() || rules.Turn() == games.None || rules.CanPass() {
		return nil, errors.New("the opening leaves the side to move without a move")
	}
	return moves, nil
}

// tokens splits a line into moves: at spaces and commas, and where a letter
// follows a digit in a word that begins with a letter ("f5d6" is f5 d6,
// "h8i9" is h8 i9; checkers' "22x15x8" is one move).
func tokens(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' }) {
		if unicode.IsDigit(rune(f[0])) {
			out = append(out, f)
			continue
		}
		start := 0
		for i := 1; i < len(f); i++ {
			if unicode.IsLetter(rune(f[i])) && unicode.IsDigit(rune(f[i-1])) {
				out = append(out, f[start:i])
				start = i
			}
		}
		out = append(out, f[start:])
	}
	return out
}

// parseMove reads one move: Othello's square, or Gomoku's renju coordinate.
func parseMove(game string, size int, w string) (games.Move, error) {
	if strings.EqualFold(w, "pass") {
		return games.Move{}, errors.New("a pass cannot be part of an opening")
	}
	if game != "gomoku" {
		g, _ := games.Lookup(game)
		return g.ParseMove(w)
	}
	if len(w) < 2 {
		return games.Move{}, errors.New("want a column letter and a row number (h8)")
	}
	col := unicode.ToLower(rune(w[0]))
	row, err := strconv.Atoi(w[1:])
	x := int(col - 'a')
	if col < 'a' || col > 'z' || err != nil || x >= size || row < 1 || row > size {
		return games.Move{}, fmt.Errorf("want a column letter a-%c and a row number 1-%d (h8)", 'a'+size-1, size)
	}
	return games.Move{X: x, Y: size - row}, nil
}

// Format writes moves in the suite notation: "f5d6c3", "h8 i9 h10" or
// "11-15 23-19".
func Format(game string, size int, moves []games.Move) string {
	var b strings.Builder
	for i, m := range moves {
		if game == "gomoku" {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteByte(byte('a' + m.X))
			b.WriteString(strconv.Itoa(size - m.Y))
			continue
		}
		t := games.Text(game, m)
		if i > 0 && t != "" && unicode.IsDigit(rune(t[0])) {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// Opening orders (the tournament settings' openings.order).
const (
	OrderRandom     = "random"
	OrderSequential = "sequential"
)

// Pick returns the opening of game pair pair (from 0): in order "sequential"
// the suite's openings from start on, wrapping; in order "random" a fixed
// permutation of the suite drawn from seed, so that every opening is played
// once before any is played again, and a tournament that resumes plays the
// same openings.
func (s *Suite) Pick(order string, start int, seed uint64, pair int64) Line {
	n := int64(len(s.Openings))
	k := (int64(start) + pair) % n
	if order == OrderRandom {
		perm := rand.New(rand.NewPCG(seed, 0x6f70656e696e6773)).Perm(int(n))
		k = int64(perm[k])
	}
	return s.Openings[k]
}

//go:embed suites/*.txt
var builtins embed.FS

// Builtin returns the suite shipped with taikai for a game and rule on the
// game's default board.
func Builtin(game, rule string, size int) (*Suite, error) {
	g, ok := games.Lookup(game)
	if !ok {
		return nil, errors.New(games.Unknown(game))
	}
	rule, err := g.Rule(rule)
	if err != nil {
		return nil, err
	}
	if size == 0 {
		size = g.Size
	}
	file := game
	if rule != "" {
		file += "-" + rule
	}
	if size != g.Size {
		return nil, fmt.Errorf("no built-in suite for %s on %dx%d (the built-in suites are for %dx%d): upload one", file, size, size, g.Size, g.Size)
	}
	if s, ok := parsed.Load(file); ok {
		return s.(*Suite), nil
	}
	f, err := builtins.Open("suites/" + file + ".txt")
	if err != nil {
		return nil, fmt.Errorf("no built-in suite for %s", file)
	}
	defer f.Close()
	s, err := Parse("builtin:"+file, game, rule, size, f)
	if err != nil {
		return nil, fmt.Errorf("built-in suite %s: %w", file, err)
	}
	parsed.Store(file, s)
	return s, nil
}

// parsed holds the built-in suites once read; callers do not change them.
var parsed sync.Map
