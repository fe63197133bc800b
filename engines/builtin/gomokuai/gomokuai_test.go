package gomokuai_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/gomokuai"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// moveTime is the deadline Threat gets in these tests: short, since it is meant
// to answer in well under a millisecond, and half of it may go to the search.
const moveTime = 2 * time.Millisecond

// position sets up a diagram on a board of the given size: rows of '.', 'X'
// (black), 'O' (white) and '?' (points of interest, returned in raster order),
// spaces ignored, centred on the board.
func position(tb testing.TB, size int, diagram string) (*gomoku.Board, []gomoku.Point) {
	tb.Helper()
	var rows []string
	for line := range strings.SplitSeq(diagram, "\n") {
		if line = strings.Join(strings.Fields(line), ""); line != "" {
			rows = append(rows, line)
		}
	}
	b, err := gomoku.NewBoard(size)
	if err != nil {
		tb.Fatal(err)
	}
	ox, oy := (size-len(rows[0]))/2, (size-len(rows))/2
	var marks []gomoku.Point
	for y, r := range rows {
		for x, c := range r {
			switch c {
			case 'X':
				b.Put(gomoku.Black, ox+x, oy+y)
			case 'O':
				b.Put(gomoku.White, ox+x, oy+y)
			case '?':
				marks = append(marks, gomoku.Point{X: ox + x, Y: oy + y})
			case '.':
			default:
				tb.Fatalf("diagram row %q: unknown cell %q", r, c)
			}
		}
	}
	return b, marks
}

func TestThreatPositions(t *testing.T) {
	cases := []struct {
		name    string
		rule    gomoku.Rule
		me      games.Color
		diagram string
		want    string // "any": one of the '?' points; "none": none of them
	}{
		{"completes its open four", gomoku.Seed, gomoku.Black, `
			. . . . . . . . .
			. . . . . . . O .
			. ? X X X X ? . .
			. . . . O . O . .
			. . . . . . . . .`, "any"},
		{"completes its split four", gomoku.Renju, gomoku.White, `
			. . . . . . . . .
			. X . X . X . . .
			. O O ? O O X . .
			. . X . . . . . .
			. . . . . . . . .`, "any"},
		{"blocks the opponent's four", gomoku.Seed, gomoku.White, `
			. . . . . . . . .
			. . O . . . . . .
			. O X X X X ? . .
			. . . O . . . . .
			. . . . . . . . .`, "any"},
		{"blocks the opponent's split four", gomoku.Freestyle, gomoku.Black, `
			. . . . . . . . .
			. . . . X . . . .
			. X O O ? O O . .
			. . . . X . . . .
			. . . . . . . . .`, "any"},
		{"wins rather than blocks", gomoku.Seed, gomoku.White, `
			. . . . . . . . .
			. X X X X . . . .
			. ? O O O O ? X .
			. . . . . . . . .
			. . . . . . . . .`, "any"},
		{"blocks an open three", gomoku.Seed, gomoku.White, `
			. . . . . . . . .
			. . . . . . . . .
			. . ? X X X ? . .
			. . . . O . . . .
			. . . . . . . . .`, "any"},
		{"never its own forbidden double-three", gomoku.Seed, gomoku.Black, `
			. . . . . . . . .
			. . . . . . . . .
			. . X X ? . . . .
			. . . . X . . . .
			. . . . X . . . .
			. . . . . . O . .
			. . . . . . . O .`, "none"},
		{"never black's forbidden double-four under renju", gomoku.Renju, gomoku.Black, `
			. . . . . . . . .
			. . . . . . . . .
			. X . X ? X . X .
			. . . . . . O . .
			. . . . . . . O .`, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(20) {
				b, marks := position(t, 15, c.diagram)
				rng := rand.New(rand.NewPCG(seed, 1))
				got := gomokuai.Threat(b, c.rule, c.me, rng, time.Now().Add(moveTime))
				if v := b.Check(c.rule, c.me, got.X, got.Y); v != games.Allowed {
					t.Fatalf("Threat(%v, %v) = %v, which Check calls %v on\n%s", c.rule, c.me, got, v, b)
				}
				if in := slices.Contains(marks, got); in != (c.want == "any") {
					t.Fatalf("Threat(%v, %v) = %v, want %s of %v on\n%s", c.rule, c.me, got, c.want, marks, b)
				}
			}
		})
	}
}

// White threatens to make an open four on the bottom row; a one-ply scorer
// blocks it. Black has a win by fours: (2,2) makes a four down column 2, whose
// block is forced, and an open three across row 2 that the next move turns
// into an open four. Threat must find it and play only fours until it wins.
func TestThreatFindsFourChain(t *testing.T) {
	b, _ := position(t, 15, `
		. . . . . . . . . . . .
		. . . . . . . . . . . .
		. . . X X . . . . . . .
		. . X . . . . . . . . .
		. . X . . . X . . . . .
		. . X . . . X . . . . .
		. . O . . . X . . . . .
		. . . . . . O . . . . .
		. . . . . . . . . . . .
		. . . . . . . . . . . .
		. . . . . . . O O O . .
		. . . . . . . . . . . .`)
	start := b.String()
	rng := rand.New(rand.NewPCG(1, 1))
	for range 12 {
		p := gomokuai.Threat(b, gomoku.Seed, gomoku.Black, rng, time.Now().Add(100*time.Millisecond))
		if b.Wins(gomoku.Seed, gomoku.Black, p.X, p.Y) {
			return
		}
		b.Put(gomoku.Black, p.X, p.Y)
		if fivePoints(b, gomoku.Seed, gomoku.Black) == 0 {
			t.Fatalf("black played %v, which is not a four, from\n%s\nreaching\n%s", p, start, b)
		}
		q := gomokuai.Threat(b, gomoku.Seed, gomoku.White, rng, time.Now().Add(100*time.Millisecond))
		b.Put(gomoku.White, q.X, q.Y)
	}
	t.Errorf("black did not win by fours from\n%s\nreaching\n%s", start, b)
}

// fivePoints counts the points where s would make a winning five.
func fivePoints(b *gomoku.Board, r gomoku.Rule, s games.Color) int {
	n := 0
	for y := range b.Size() {
		for x := range b.Size() {
			if b.Wins(r, s, x, y) {
				n++
			}
		}
	}
	return n
}

func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	b, _ := gomoku.NewBoard(15)
	if p, ok := gomokuai.Random(b, rng, nil); !ok || p != (gomoku.Point{X: 7, Y: 7}) {
		t.Errorf("Random on an empty board = %v, %v, want the centre (7,7)", p, ok)
	}
	b16, _ := gomoku.NewBoard(16)
	if p, ok := gomokuai.Random(b16, rng, nil); !ok || p != (gomoku.Point{X: 8, Y: 8}) {
		t.Errorf("Random on an empty 16x16 board = %v, %v, want (8,8)", p, ok)
	}

	// One stone: the eight neighbours, each about equally often.
	b.Put(gomoku.Black, 7, 7)
	seen := map[gomoku.Point]int{}
	for range 8000 {
		p, ok := gomokuai.Random(b, rng, nil)
		if !ok || max(abs(p.X-7), abs(p.Y-7)) != 1 {
			t.Fatalf("Random next to (7,7) = %v, %v", p, ok)
		}
		seen[p]++
	}
	for p, n := range seen {
		if n < 800 || n > 1200 {
			t.Errorf("Random chose %v %d times in 8000, want about 1000", p, n)
		}
	}
	if len(seen) != 8 {
		t.Errorf("Random chose %d distinct neighbours, want 8", len(seen))
	}

	// Refused points are not chosen again; with all neighbours refused it
	// falls back to any empty point.
	var avoid []gomoku.Point
	for range 8 {
		p, ok := gomokuai.Random(b, rng, avoid)
		if !ok || slices.Contains(avoid, p) {
			t.Fatalf("Random = %v, %v with %v avoided", p, ok, avoid)
		}
		avoid = append(avoid, p)
	}
	if p, ok := gomokuai.Random(b, rng, avoid); !ok || b.At(p.X, p.Y) != gomoku.Empty || slices.Contains(avoid, p) {
		t.Errorf("Random with every neighbour avoided = %v, %v, want another empty point", p, ok)
	}

	// Nothing left.
	small, _ := gomoku.NewBoard(5)
	for y := range 5 {
		for x := range 5 {
			if x != 2 || y != 2 {
				small.Put(gomoku.White, x, y)
			}
		}
	}
	if p, ok := gomokuai.Random(small, rng, nil); !ok || p != (gomoku.Point{X: 2, Y: 2}) {
		t.Errorf("Random with one point left = %v, %v, want (2,2)", p, ok)
	}
	if _, ok := gomokuai.Random(small, rng, []gomoku.Point{{X: 2, Y: 2}}); ok {
		t.Errorf("Random with the last point avoided: ok, want none")
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestThreatBeatsRandom plays Threat against the seed sample's random player,
// colours alternating, through gomoku.Game as a referee would.
func TestThreatBeatsRandom(t *testing.T) {
	sets := []struct {
		name  string
		rule  gomoku.Rule
		size  int
		games int
	}{
		{"seed 15x15", gomoku.Seed, 15, 200},
		{"seed 16x16", gomoku.Seed, 16, 50},
		{"renju 15x15", gomoku.Renju, 15, 50},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			wins, losses, draws, moves := 0, 0, 0, 0
			var slowest time.Duration
			for i := range set.games {
				threat := gomoku.Black
				if i%2 == 1 {
					threat = gomoku.White
				}
				rng := rand.New(rand.NewPCG(uint64(i), uint64(set.size)))
				winner, n, slow := playOne(t, set.rule, set.size, threat, rng)
				moves += n
				slowest = max(slowest, slow)
				switch winner {
				case threat:
					wins++
				case gomoku.Empty:
					draws++
				default:
					losses++
				}
			}
			t.Logf("%s: Threat won %d, lost %d, drew %d of %d games (%.1f moves a game, slowest move %v)",
				set.name, wins, losses, draws, set.games, float64(moves)/float64(set.games), slowest)
			if wins*100 < set.games*97 {
				t.Errorf("%s: Threat won %d of %d games, want at least 97%%", set.name, wins, set.games)
			}
		})
	}
}

// playOne plays a game and returns the winner, the number of moves and Threat's
// slowest move.
func playOne(tb testing.TB, r gomoku.Rule, size int, threat games.Color, rng *rand.Rand) (games.Color, int, time.Duration) {
	tb.Helper()
	g, err := gomoku.NewGame(size, r)
	if err != nil {
		tb.Fatal(err)
	}
	var slowest time.Duration
	for !g.Over() {
		if g.Turn() == threat {
			start := time.Now()
			deadline := start.Add(moveTime)
			p := gomokuai.Threat(g.Board(), r, threat, rng, deadline)
			slowest = max(slowest, time.Since(start))
			if v := g.Check(p.X, p.Y); v != games.Allowed {
				tb.Fatalf("%v: Threat as %v chose %v, Check says %v, after %v\n%s", r, threat, p, v, g.Moves(), g.Board())
			}
			g.Play(p.X, p.Y)
			continue
		}
		var avoid []gomoku.Point
		for {
			p, ok := gomokuai.Random(g.Board(), rng, avoid)
			if !ok {
				tb.Fatalf("%v: Random found no point on\n%s", r, g.Board())
			}
			if g.Play(p.X, p.Y) == games.Allowed {
				break
			}
			avoid = append(avoid, p)
		}
	}
	return g.Winner(), len(g.Moves()), slowest
}

// BenchmarkThreat answers in the middle of a game: 30 moves of Threat against
// itself on 15x15.
func BenchmarkThreat(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	g, _ := gomoku.NewGame(15, gomoku.Seed)
	for len(g.Moves()) < 30 && !g.Over() {
		p := gomokuai.Threat(g.Board(), g.Rule(), g.Turn(), rng, time.Now())
		g.Play(p.X, p.Y)
	}
	for _, search := range []time.Duration{0, 10 * time.Millisecond} {
		b.Run("search="+search.String(), func(b *testing.B) {
			for b.Loop() {
				gomokuai.Threat(g.Board(), g.Rule(), g.Turn(), rng, time.Now().Add(search))
			}
		})
	}
}
