package openings_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
)

func TestParseGood(t *testing.T) {
	s, err := openings.Parse("mine", "othello", "", 8, strings.NewReader("# a comment\r\n\r\nf5d6c3\nf5 f6, e6 f4\r\n  F5D6  \n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Openings) != 3 || s.Openings[1].LineNo != 4 || s.Openings[1].Text != "f5f6e6f4" || s.Openings[2].Text != "f5d6" {
		t.Fatalf("%+v", s.Openings)
	}
	if m := s.Openings[0].Moves[0]; m.X != 5 || m.Y != 4 {
		t.Errorf("f5 is %+v, want x 5 y 4", m)
	}
	g, err := openings.Parse("g", "gomoku", "renju", 15, strings.NewReader("h8 i9 h10\nh8i7g9\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := g.Openings[0].Moves; !m[0].Equal(games.Move{X: 7, Y: 7}) || !m[2].Equal(games.Move{X: 7, Y: 5}) || g.Openings[1].Text != "h8 i7 g9" {
		t.Errorf("gomoku: %+v", g.Openings)
	}
	// Format and Parse agree.
	back, err := openings.Parse("b", "gomoku", "renju", 15, strings.NewReader(openings.Format("gomoku", 15, g.Openings[1].Moves)))
	if err != nil || back.Openings[0].Text != g.Openings[1].Text {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

func TestParseBad(t *testing.T) {
	for _, tc := range []struct{ game, rule, text, want string }{
		{"othello", "", "f5d6\nf5d6z9\n", "line 2: move 3 \"z9\""},
		{"othello", "", "f5\nf5a1\n", "line 2: move 2 \"a1\": not legal (no_flip)"},
		{"othello", "", "f5 pass\n", "line 1: move 2 \"pass\""},
		{"othello", "", "# only a comment\n", "no opening"},
		{"othello", "", "", "no opening"},
		{"othello", "", strings.Repeat("f5", 41), "41 moves"},
		{"gomoku", "freestyle", "h8 h8\n", "line 1: move 2 \"h8\": not legal (occupied)"},
		{"gomoku", "freestyle", "h8 p8\n", "line 1: move 2 \"p8\""},
		{"gomoku", "freestyle", "h8 a1 i8 a2 j8 a3 k8 a4 l8\n", "without a move"},
		{"gomoku", "freestyle", "h8 a1 i8 a2 j8 a3 k8 a4 l8 a5\n", "already over"},
	} {
		_, err := openings.Parse("t", tc.game, tc.rule, 0, strings.NewReader(tc.text))
		var ge *games.Error
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ge) || ge.Field != "openings" {
			t.Errorf("%q: %v, want an openings error containing %q", tc.text, err, tc.want)
		}
	}
}

func TestBuiltinSuites(t *testing.T) {
	g, _ := games.Lookup("gomoku")
	for _, c := range append([][2]string{{"othello", ""}}, func() (out [][2]string) {
		for _, r := range g.Rules {
			out = append(out, [2]string{"gomoku", r})
		}
		return
	}()...) {
		s, err := openings.Builtin(c[0], c[1], 0)
		if err != nil {
			t.Fatal(err)
		}
		want := 500
		if c[0] == "othello" {
			want = 1000
		}
		if len(s.Openings) < want {
			t.Errorf("%s: %d openings, want at least %d", s.Name, len(s.Openings), want)
		}
		seen := map[string]bool{}
		for _, o := range s.Openings {
			if seen[o.Text] {
				t.Errorf("%s: %q twice", s.Name, o.Text)
			}
			seen[o.Text] = true
		}
	}
	if _, err := openings.Builtin("gomoku", "freestyle", 9); err == nil || !strings.Contains(err.Error(), "9x9") {
		t.Errorf("9x9: %v", err)
	}
}

func TestPick(t *testing.T) {
	s, err := openings.Builtin("othello", "", 8)
	if err != nil {
		t.Fatal(err)
	}
	n := len(s.Openings)
	if s.Pick(openings.OrderSequential, 5, 0, 0).Index != 5 || s.Pick(openings.OrderSequential, 5, 0, int64(n)).Index != 5 {
		t.Error("sequential does not start at start or does not wrap")
	}
	seen := map[int]bool{}
	for k := range int64(n) {
		o := s.Pick(openings.OrderRandom, 0, 42, k)
		seen[o.Index] = true
		if o2 := s.Pick(openings.OrderRandom, 0, 42, k); o2.Index != o.Index {
			t.Fatal("random is not reproducible")
		}
	}
	if len(seen) != n {
		t.Errorf("random: %d of %d openings in the first %d pairs", len(seen), n, n)
	}
	if s.Pick(openings.OrderRandom, 0, 42, 0).Index == s.Pick(openings.OrderRandom, 0, 43, 0).Index &&
		s.Pick(openings.OrderRandom, 0, 42, 1).Index == s.Pick(openings.OrderRandom, 0, 43, 1).Index {
		t.Error("the seed does not change the order")
	}
}

// The generator writes the same gomoku suites again (the Othello suite takes
// a minute of searching; it is built the same way, with fixed depths).
func TestGeneratorReproducible(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "../../cmd/genopenings", "-out", dir, "-only", "gomoku")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatal("generator did not finish in 3 minutes")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) != 4 {
		t.Fatalf("%d suites written, want 4", len(files))
	}
	for _, f := range files {
		got, _ := os.ReadFile(f)
		want, err := os.ReadFile(filepath.Join("suites", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output", filepath.Base(f))
		}
	}
}

// Checkers openings: square numbers, captures with every landing, spaces
// between moves; Format writes them back the same way.
func TestCheckersSuite(t *testing.T) {
	s, err := openings.Parse("c", "checkers", "english", 8, strings.NewReader("11-15 22-18 15x22 25x18\n9-13\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Openings) != 2 || len(s.Openings[0].Moves) != 4 || openings.Format("checkers", 8, s.Openings[0].Moves) != "11-15 22-18 15x22 25x18" {
		t.Fatalf("suite %+v", s.Openings)
	}
	if _, err := openings.Parse("c", "checkers", "english", 8, strings.NewReader("11-15 22-18 12-16\n")); err == nil || !strings.Contains(err.Error(), "line 1: move 3") {
		t.Errorf("a capture due, a plain move: %v", err)
	}
}
