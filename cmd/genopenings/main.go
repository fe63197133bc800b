// Command genopenings writes taikai's built-in opening suites (games/openings/suites),
// the same files on every run: fixed-depth searches, no clock, a fixed seed.
//
//	go run ./cmd/genopenings -out games/openings/suites
//
// Othello, in the spirit of the XOT list: every position after -plies plies
// from the start, one of each set of positions that are images of each other
// under the symmetries of the start position, scored by othello-alphabeta's
// search at -depth for the side to move, kept when the score is within
// -margin of even; -n of them are drawn with the seed.
//
// Gomoku, per rule set on 15x15: three stones (black, white, black; white to
// move) in the central 7x7, black's first in the central 3x3, one of each set of
// symmetric images, every stone allowed under the rule; -n of them drawn with
// the seed. Two stones of a colour make no four and no open three, so none
// holds an immediate win or a forced threat sequence. Their balance is
// measured, not searched per opening: white to move against black's extra
// stone is close to even (see the suite's header). Filters that looked
// plausible (black's stones apart, white's touching one) made it worse.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/taikai-dev/taikai/engines/builtin/othelloai"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
	"github.com/taikai-dev/taikai/games/othello"
)

func main() {
	out := flag.String("out", "suites", "directory to write the suites to")
	plies := flag.Int("plies", 8, "othello: plies from the start")
	depth := flag.Int("depth", 6, "othello: search depth of the balance score")
	margin := flag.Int("margin", 0, "othello: largest |score| kept (0: the tightest that keeps -n)")
	n := flag.Int("n", 2000, "othello: openings kept")
	ng := flag.Int("ngomoku", 600, "gomoku: openings kept per rule")
	seed := flag.Uint64("seed", 17, "seed of the draw")
	only := flag.String("only", "", "write one suite only: othello or gomoku")
	flag.Parse()
	if *only == "" || *only == "othello" {
		text, err := othelloSuite(*plies, *depth, *margin, *n, *seed)
		if err != nil {
			log.Fatal(err)
		}
		write(*out, "othello.txt", text)
	}
	if *only == "" || *only == "gomoku" {
		g, _ := games.Lookup("gomoku")
		for _, rule := range g.Rules {
			text, err := gomokuSuite(rule, *ng, *seed)
			if err != nil {
				log.Fatal(err)
			}
			write(*out, "gomoku-"+rule+".txt", text)
		}
	}
}

func write(dir, name, text string) {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s (%d lines)", name, strings.Count(text, "\n"))
}

// ---- Othello ----

type othelloCand struct {
	moves []othello.Square
	score int
}

// othelloSuite enumerates, dedupes, scores and draws.
func othelloSuite(plies, depth, margin, n int, seed uint64) (string, error) {
	seen := map[[2]uint64]bool{}
	var cands []othelloCand
	var walk func(b othello.Board, moves []othello.Square)
	walk = func(b othello.Board, moves []othello.Square) {
		if len(moves) == plies {
			if b.Legal() == 0 {
				return // a pass or the end: not an opening
			}
			key := canonical(b)
			if seen[key] {
				return
			}
			seen[key] = true
			cands = append(cands, othelloCand{moves: slices.Clone(moves)})
			return
		}
		legal := b.Legal()
		for legal != 0 {
			sq := othello.Square(trailing(legal))
			legal &= legal - 1
			next := b
			if _, err := next.Play(sq); err != nil {
				panic(err)
			}
			walk(next, append(moves, sq))
		}
	}
	walk(othello.New(), nil)
	for i := range cands {
		b := othello.New()
		for _, sq := range cands[i].moves {
			b.Play(sq)
		}
		cands[i].score = othelloai.Evaluate(&b, depth)
	}
	slices.SortStableFunc(cands, func(a, b othelloCand) int { return abs(a.score) - abs(b.score) })
	if margin == 0 {
		margin = abs(cands[min(n, len(cands))-1].score)
	}
	var kept []othelloCand
	for _, c := range cands {
		if abs(c.score) <= margin {
			kept = append(kept, c)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	rng.Shuffle(len(kept), func(i, j int) { kept[i], kept[j] = kept[j], kept[i] })
	kept = kept[:min(n, len(kept))]
	var b strings.Builder
	fmt.Fprintf(&b, "# taikai's built-in Othello opening suite: %d openings.\n", len(kept))
	fmt.Fprintf(&b, "# Written by `go run ./cmd/genopenings -plies %d -depth %d -n %d -seed %d`:\n", plies, depth, n, seed)
	fmt.Fprintf(&b, "# of the %d positions after %d plies (one of each set of symmetric images),\n", len(cands), plies)
	fmt.Fprintf(&b, "# those scored within %d of even by othello-alphabeta's search at depth %d\n", margin, depth)
	fmt.Fprintf(&b, "# for the side to move (its evaluation's units), drawn with the seed.\n")
	for _, c := range kept {
		var line strings.Builder
		for _, sq := range c.moves {
			line.WriteString(sq.String())
		}
		b.WriteString(line.String() + "\n")
	}
	return b.String(), nil
}

// canonical is the least of a position's images under the symmetries of the
// start position: identity, the two diagonal flips, the half turn.
func canonical(b othello.Board) [2]uint64 {
	black, white := b.Bitboards()
	best := [2]uint64{black, white}
	for _, f := range []func(uint64) uint64{flipDiag, flipAnti, rot180} {
		k := [2]uint64{f(black), f(white)}
		if k[0] < best[0] || (k[0] == best[0] && k[1] < best[1]) {
			best = k
		}
	}
	return best
}

func mapBits(x uint64, f func(col, row int) (int, int)) uint64 {
	var r uint64
	for x != 0 {
		i := trailing(x)
		x &= x - 1
		c, w := f(i%8, i/8)
		r |= 1 << (w*8 + c)
	}
	return r
}

func flipDiag(x uint64) uint64 { return mapBits(x, func(c, r int) (int, int) { return r, c }) }
func flipAnti(x uint64) uint64 { return mapBits(x, func(c, r int) (int, int) { return 7 - r, 7 - c }) }
func rot180(x uint64) uint64   { return mapBits(x, func(c, r int) (int, int) { return 7 - c, 7 - r }) }

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ---- Gomoku ----

// gomokuSuite enumerates three-stone openings in the central 5x5.
func gomokuSuite(rule string, n int, seed uint64) (string, error) {
	const size, c = 15, 7
	g, _ := games.Lookup("gomoku")
	var area []games.Point
	for y := c - 3; y <= c+3; y++ {
		for x := c - 3; x <= c+3; x++ {
			area = append(area, games.Point{X: x, Y: y})
		}
	}
	seen := map[string]bool{}
	var kept [][]games.Move
	for _, b1 := range area {
		if max(abs(b1.X-c), abs(b1.Y-c)) > 1 {
			continue // black's first stone in the central 3x3
		}
		for _, w := range area {
			for _, b2 := range area {
				if b1 == w || b2 == w || b2 == b1 {
					continue
				}
				moves := []games.Move{{X: b1.X, Y: b1.Y}, {X: w.X, Y: w.Y}, {X: b2.X, Y: b2.Y}}
				key := gomokuKey(moves, size)
				if seen[key] {
					continue
				}
				seen[key] = true
				rules, err := g.New(rule, size)
				if err != nil {
					return "", err
				}
				ok := true
				for _, m := range moves {
					if _, legal := rules.Check(m); !legal {
						ok = false
						break
					}
					rules.Play(m)
				}
				if !ok || rules.Finished() {
					continue
				}
				kept = append(kept, moves)
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	rng.Shuffle(len(kept), func(i, j int) { kept[i], kept[j] = kept[j], kept[i] })
	kept = kept[:min(n, len(kept))]
	var b strings.Builder
	fmt.Fprintf(&b, "# taikai's built-in Gomoku opening suite for rule %s on 15x15: %d openings.\n", rule, len(kept))
	fmt.Fprintf(&b, "# Written by `go run ./cmd/genopenings -ngomoku %d -seed %d`: three stones\n", n, seed)
	fmt.Fprintf(&b, "# (black, white, black; white to move) in the central 7x7, black's first in the\n")
	fmt.Fprintf(&b, "# central 3x3, one of each set of symmetric images, all allowed under the rule\n")
	fmt.Fprintf(&b, "# (two stones of a colour make no four and no open three), drawn with the seed.\n")
	for _, m := range kept {
		b.WriteString(openings.Format("gomoku", size, m) + "\n")
	}
	return b.String(), nil
}

// gomokuKey is the least of the moves' images under the 8 symmetries of the
// square board (black's and white's stones as sets).
func gomokuKey(moves []games.Move, size int) string {
	var best string
	for s := range 8 {
		var bl, wh []string
		for i, m := range moves {
			x, y := m.X, m.Y
			if s&1 != 0 {
				x = size - 1 - x
			}
			if s&2 != 0 {
				y = size - 1 - y
			}
			if s&4 != 0 {
				x, y = y, x
			}
			p := fmt.Sprintf("%02d%02d", x, y)
			if i%2 == 0 {
				bl = append(bl, p)
			} else {
				wh = append(wh, p)
			}
		}
		slices.Sort(bl)
		slices.Sort(wh)
		k := strings.Join(bl, ",") + "|" + strings.Join(wh, ",")
		if best == "" || k < best {
			best = k
		}
	}
	return best
}
