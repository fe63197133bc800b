package checkers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
)

// English draughts perft from the start position: Aart Bik, "perft for 8x8
// checkers", TalkChess forum, 8 May 2009
// (http://www.talkchess.com/forum3/viewtopic.php?t=27814): 7, 49, 302, 1469,
// 7361, 36768, 179740, 845931. The seed rules differ only in crowning, which
// cannot happen in 8 plies, so they give the same figures.
func TestPerft(t *testing.T) {
	want := []int64{1, 7, 49, 302, 1469, 7361, 36768, 179740, 845931}
	for _, r := range []Rule{English, Seed} {
		for d, n := range want {
			if testing.Short() && d > 6 {
				break
			}
			if got := Perft(Start(r), d); got != n {
				t.Errorf("%v perft(%d) = %d, want %d", r, d, got, n)
			}
		}
	}
}

func pos(t *testing.T, fen string, r Rule) Position {
	t.Helper()
	p, err := ParseFEN(fen, r)
	if err != nil {
		t.Fatalf("%s: %v", fen, err)
	}
	return p
}

func moveStrings(p Position) []string {
	var out []string
	for _, m := range p.Moves(nil) {
		out = append(out, m.String())
	}
	slices.Sort(out)
	return out
}

func TestMoves(t *testing.T) {
	for _, c := range []struct {
		name string
		fen  string
		rule Rule
		want []string
	}{
		{"first moves", "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", English,
			[]string{"10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"}},
		{"white men move up", "W:W22:B1", Seed, []string{"22-17", "22-18"}},
		{"capture is mandatory", "B:W14:B9,11", Seed, []string{"9x18"}},
		{"a multi-jump goes to its end", "B:W6,15:B1", Seed, []string{"1x10x19"}},
		{"every branch of a multi-jump", "B:W6,7,15,16:B2", English, []string{"2x11x18", "2x11x20", "2x9"}},
		{"men do not capture backwards", "B:W6:B10", English, []string{"10-14", "10-15"}},
		{"a king captures backwards", "B:W6:BK10", English, []string{"10x1"}},
		{"a king moves both ways", "B:W32:BK14", English, []string{"14-10", "14-17", "14-18", "14-9"}},
		// As a king on 31 it could go on over 27 to 24; crowning ends the move.
		{"crowning ends the capture (english)", "B:W26,27:B22", English, []string{"22x31"}},
		{"a seed man on the far row stops too", "B:W26,27:B22", Seed, []string{"22x31"}},
		{"a seed man on the far row cannot move", "B:W5:B30", Seed, nil},
		{"a blocked man", "B:W13,17:B9", Seed, []string{"9-14"}},
		{"all blocked", "W:W29:B22,25", English, nil},
		{"a king's branches", "B:W6,7,14,15:BK1", English, []string{"1x10x17", "1x10x19", "1x10x3"}},
		// Round the four and back to its own square; no piece is jumped twice.
		{"a king's ring", "B:W14,15,22,23:BK10", English, []string{"10x17x26x19x10", "10x19x26x17x10"}},
	} {
		p := pos(t, c.fen, c.rule)
		if got := moveStrings(p); !slices.Equal(got, c.want) {
			t.Errorf("%s (%s): moves %v, want %v", c.name, c.fen, got, c.want)
		}
	}
}

func TestPlay(t *testing.T) {
	// A man crowns on the far row (english) and not under the seed rules.
	for _, r := range []Rule{English, Seed} {
		p := pos(t, "B:W5:B26", r)
		m, ok := p.Find(Square(25), []Square{Square(29)})
		if !ok {
			t.Fatalf("%v: 26-30 not found", r)
		}
		p.Play(m)
		king := p.At(Square(29).X(), Square(29).Y()) == 2
		if king != (r == English) {
			t.Errorf("%v: after 26-30 the piece is a king: %v", r, king)
		}
	}
	// A capture removes the pieces and resets the quiet count.
	p := pos(t, "B:W6,15:B1", English)
	p.Quiet = 30
	m, _ := p.Find(0, []Square{9, 18})
	p.Play(m)
	if p.White != 0 || p.Black != bit(18) || p.Turn != games.White || p.Quiet != 0 {
		t.Errorf("after 1x10x19: %s quiet %d", p.FEN(), p.Quiet)
	}
}

func TestEnd(t *testing.T) {
	// English: the side to move with no move loses, pieces or not.
	p := pos(t, "W:W29:B22,25", English)
	if !p.Over() || p.Winner() != games.Black {
		t.Errorf("blocked white: over %v winner %v", p.Over(), p.Winner())
	}
	p = pos(t, "W:W:B1", English)
	if !p.Over() || p.Winner() != games.Black {
		t.Errorf("white without pieces: over %v winner %v", p.Over(), p.Winner())
	}
	// English: the move-count draw.
	p = pos(t, "B:WK29:BK1", English)
	p.Quiet = DrawPlies - 2
	p.Play(p.Moves(nil)[0])
	if p.Over() {
		t.Fatalf("over after %d quiet plies", p.Quiet)
	}
	p.Play(p.Moves(nil)[0])
	if !p.Over() || p.Winner() != games.None {
		t.Errorf("after %d quiet plies: over %v winner %v", DrawPlies, p.Over(), p.Winner())
	}
	// A man's move resets the count.
	p = pos(t, "B:WK29:B1", English)
	p.Quiet = DrawPlies - 1
	p.Play(p.Moves(nil)[0])
	if p.Quiet != 0 {
		t.Errorf("quiet %d after a man moved", p.Quiet)
	}
	// Seed: no move ends the game and the score decides, whoever is blocked.
	p = pos(t, "W:W29:B22,25", Seed) // white blocked: black 105, white 20
	if !p.Over() || p.Winner() != games.Black {
		t.Errorf("seed, blocked white: over %v winner %v", p.Over(), p.Winner())
	}
	p = pos(t, "B:W1,5:B30", Seed) // black's man on the far row cannot move: black 105, white 165
	if !p.Over() || p.Winner() != games.White {
		b, w := p.Score()
		t.Errorf("seed, blocked black: over %v winner %v (score %d-%d)", p.Over(), p.Winner(), b, w)
	}
	p = pos(t, "W:W:B32", Seed)
	if !p.Over() || p.Winner() != games.Black {
		t.Errorf("seed, no white pieces: over %v winner %v", p.Over(), p.Winner())
	}
}

// TestScore checks the seed's evaluation on positions computed by hand.
func TestScore(t *testing.T) {
	for _, c := range []struct {
		name         string
		fen          string
		rule         Rule
		black, white int
	}{
		// 12 pieces: 240; rows 0+5*4+10*4 = 60; guards: row 1 has 1+2+2+2,
		// row 2 has 2+2+2+1 friends behind, 14 * 10 = 140.
		{"start", "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", Seed, 440, 440},
		// 20 + 7 rows * 5 + 50 on the far row.
		{"far row", "W:W:B32", Seed, 105, 0},
		// Each can take the other: 20 + 15 - 10 and 20 + 15 - 10.
		{"mutual threat", "B:W18:B14", Seed, 25, 25},
		// 6 is guarded by 1 and 2: 20 + 5 + 20; 1 and 2: 20 each; white 31: 20.
		{"guards", "B:W31:B1,2,6", Seed, 85, 20},
		// A white king on 10 can take 14 backwards (to 17): 20 + 15 - 10;
		// the king: 20 + 5 rows * 5 (black men do not capture backwards).
		{"a king threatens backwards", "B:WK10:B14", English, 25, 45},
		// The same with a white man on 10: it cannot take backwards.
		{"a man does not", "B:W10:B14", English, 35, 45},
		// White on 1 (far row): 20 + 35 + 50, plus 10 for the man on 5
		// behind it; the man on 5: 20 + 30.
		{"far row and a guard", "B:W1,5:B30", Seed, 105, 165},
		// White 18 cannot take 14: its landing, 9, is taken. Black 14: 20 +
		// 15 + 10 (9 behind it); 9: 20 + 10. White 18: 20 + 15 + 10 (22
		// behind it) - 10 (14 can take it, 23 is empty); 22: 20 + 10.
		{"no threat when the landing is taken", "B:W18,22:B9,14", Seed, 45 + 30, 35 + 30},
	} {
		p := pos(t, c.fen, c.rule)
		if b, w := p.Score(); b != c.black || w != c.white {
			t.Errorf("%s (%s): score %d-%d, want %d-%d", c.name, c.fen, b, w, c.black, c.white)
		}
	}
}

func TestNotation(t *testing.T) {
	for _, s := range []string{"11-15", "22x15x8", "1x10x19", "32-28"} {
		from, to, _, err := ParseMove(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		g := games.Move{X: from.X(), Y: from.Y()}
		for _, q := range to {
			g.Path = append(g.Path, games.Point{X: q.X(), Y: q.Y()})
		}
		if got := Notation(g); got != s {
			t.Errorf("%s printed as %s", s, got)
		}
	}
	for _, bad := range []string{"", "11", "11-15-19", "0-4", "33x24", "a-b", "11--15", "+1-5", "01-5"} {
		if _, _, _, err := ParseMove(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	for _, s := range []string{"B:W21,K22:B1,K2", "W:W:B32", "B:W5:B"} {
		if p := pos(t, s, English); p.FEN() != s {
			t.Errorf("FEN %s read back as %s", s, p.FEN())
		}
	}
	for _, bad := range []string{"", "B:W1", "X:W1:B2", "B:W1:B1", "B:W33:B2", "B:Q1:B2"} {
		if _, err := ParseFEN(bad, English); err == nil {
			t.Errorf("FEN %q parsed", bad)
		}
	}
}

// TestRules plays random games through the registered rules: every move the
// rules offer is accepted, refusals are classified, every game ends.
func TestRules(t *testing.T) {
	g, ok := games.Lookup("checkers")
	if !ok {
		t.Fatal("checkers not registered")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rule := range []string{"seed", "english"} {
		for range 200 {
			r, err := g.New(rule, 8)
			if err != nil {
				t.Fatal(err)
			}
			plies := 0
			for !r.Finished() {
				m := r.Random(rng)
				if _, ok := r.Check(m); !ok {
					t.Fatalf("%s: random move %s refused", rule, Notation(m))
				}
				if ref, ok := r.Check(games.PassMove); ok || ref != games.PassRefused {
					t.Fatalf("pass accepted")
				}
				r.Play(m)
				if plies++; plies > 2000 {
					t.Fatalf("%s: no end after %d plies", rule, plies)
				}
			}
			if r.Turn() != games.None {
				t.Fatalf("turn %v after the end", r.Turn())
			}
		}
	}
	r, _ := g.New("seed", 8)
	if ref, ok := r.Check(mustParse(t, "22-18")); ok || ref != games.IllegalMove {
		t.Errorf("white's move at black's turn: %v %v", ref, ok)
	}
	if ref, ok := r.Check(mustParse(t, "9-5")); ok || ref != games.IllegalMove {
		t.Errorf("a man backwards: %v %v", ref, ok)
	}
	if ref, ok := r.Check(mustParse(t, "9-14")); !ok {
		t.Errorf("9-14 refused: %v", ref)
	}
	// A capture due: a plain move and a stopped sequence are must_capture.
	p := pos(t, "B:W6,15,30:B1,12", Seed)
	rr := &rules{p: p}
	if ref, ok := rr.Check(mustParse(t, "12-16")); ok || ref != games.MustCapture {
		t.Errorf("plain move with a capture due: %v %v", ref, ok)
	}
	if ref, ok := rr.Check(mustParse(t, "1x10")); ok || ref != games.MustCapture {
		t.Errorf("stopped sequence: %v %v", ref, ok)
	}
	if ref, ok := rr.Check(mustParse(t, "1x10x19")); !ok {
		t.Errorf("1x10x19 refused: %v", ref)
	}
	if _, err := g.Rule("international"); err == nil {
		t.Error("rule international accepted")
	}
}

func mustParse(t *testing.T, s string) games.Move {
	t.Helper()
	m, err := parseMove(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func BenchmarkPerft6(b *testing.B) {
	for b.Loop() {
		Perft(Start(English), 6)
	}
}

func TestRefusals(t *testing.T) {
	rr := &rules{p: pos(t, "B:W6,15,30:B1,12", Seed)}
	for text, want := range map[string]games.Refusal{
		"12-16":   games.MustCapture, // a plain move while 1 must capture
		"1x10":    games.MustCapture, // the sequence goes on to 19
		"12-8":    games.IllegalMove, // a man backwards
		"1-6":     games.IllegalMove, // onto a piece
		"30-26":   games.IllegalMove, // not black's piece
		"1x10x19": 0,
	} {
		ref, ok := rr.Check(mustParse(t, text))
		if ref != want || ok != (want == 0) {
			t.Errorf("%s: %v %v, want %v", text, ref, ok, want)
		}
	}
}

// PDN: games written read back to the same moves (captures with every
// landing); the result and the rule's tag are written.
func TestPDNRoundTrip(t *testing.T) {
	g, _ := games.Lookup("checkers")
	rng := rand.New(rand.NewPCG(5, 6))
	var recs []games.RecordGame
	for i, rule := range []string{"english", "seed", "english"} {
		r, _ := g.New(rule, 8)
		var plies []games.Ply
		for !r.Finished() {
			m := r.Random(rng)
			plies = append(plies, games.Ply{Color: r.Turn(), Move: m})
			r.Play(m)
		}
		recs = append(recs, games.RecordGame{Event: "e", Round: fmt.Sprint(i + 1), Black: `b"1`, White: "w", Rule: rule, Moves: plies, Winner: r.Winner(), Reason: games.ReasonNormal})
	}
	var buf bytes.Buffer
	if err := PDN.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	got, err := PDN.Read(strings.NewReader(text))
	if err != nil || len(got) != len(recs) {
		t.Fatalf("read %d games, %v\n%s", len(got), err, text)
	}
	for i, moves := range got {
		if len(moves) != len(recs[i].Moves) {
			t.Fatalf("game %d: %d moves read, %d written", i+1, len(moves), len(recs[i].Moves))
		}
		for j, m := range moves {
			if !m.Equal(recs[i].Moves[j].Move) {
				t.Fatalf("game %d move %d: %s read, %s written", i+1, j+1, Notation(m), Notation(recs[i].Moves[j].Move))
			}
		}
	}
	if strings.Count(text, `[GameType "21"]`) != 2 || !strings.Contains(text, `[Black "b'1"]`) || !strings.Contains(text, "1. ") {
		t.Errorf("PDN:\n%s", text)
	}
	if _, err := PDN.Read(strings.NewReader("[Event \"x\"]\n1. 11-15 24-20 2. 8-33 1-0\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad square read: %v", err)
	}
}
