package builtin

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/games/othello"
)

// ggfTime reads TI[m:ss] (or h:mm:ss) from a GGF game.
var ggfTime = regexp.MustCompile(`TI\[(\d+(?::\d+){0,2})`)

// nboardEngine plays Othello as an NBoard engine on standard input and
// output (protocol version 2, PROTOCOLS.md §6): nboard, set depth, set game,
// move, ping, go (answered "=== f5/eval/time"); other commands ignored.
func (c *client) nboardEngine(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	say := func(format string, a ...any) error {
		fmt.Fprintf(w, format+"\n", a...)
		return w.Flush()
	}
	b := othello.New()
	clock := time.Duration(0) // the game's time left, from TI; 0 unknown
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		received := time.Now()
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nboard":
			if err := say("set myname %s", c.opt.Name); err != nil {
				return err
			}
		case "set":
			if len(f) < 3 || f[1] != "game" {
				continue // depth, contempt: the clock limits the search
			}
			ggf := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "set"), " game"))
			games, err := othello.GGF.Read(strings.NewReader(ggf))
			if err != nil || len(games) != 1 {
				return fmt.Errorf("set game: %v", err)
			}
			b = othello.New()
			for i, m := range games[0] {
				s := othello.Pass
				if !m.Pass {
					s = othello.At(m.X, m.Y)
				}
				if _, err := b.Play(s); err != nil {
					return fmt.Errorf("set game: move %d: %v", i+1, err)
				}
			}
			clock = 0
			if m := ggfTime.FindStringSubmatch(ggf); m != nil {
				var sec int64
				for _, part := range strings.Split(m[1], ":") {
					n, _ := strconv.ParseInt(part, 10, 64)
					sec = sec*60 + n
				}
				clock = time.Duration(sec) * time.Second
			}
		case "move":
			if len(f) < 2 {
				continue
			}
			mv, _, _ := strings.Cut(f[1], "/")
			s, err := othello.ParseSquare(strings.ToLower(mv))
			if strings.EqualFold(mv, "pa") {
				s, err = othello.Pass, nil
			}
			if err != nil {
				return fmt.Errorf("move %q: %v", f[1], err)
			}
			if _, err := b.Play(s); err != nil {
				return fmt.Errorf("move %q: %v", f[1], err)
			}
		case "ping":
			if err := say("pong %s", strings.Join(f[1:], " ")); err != nil {
				return err
			}
		case "go":
			c.wait()
			budget := c.opt.MoveTime
			if clock > 0 {
				if share := clock / time.Duration(b.Empties()/2+2); share < budget {
					budget = share
				}
			}
			budget = max(budget, 5*time.Millisecond)
			s := othello.Pass
			if b.Legal() != 0 {
				s = c.chooseOthello(&b, received, budget)
			}
			// The move is not played here: the GUI sends it back (set game).
			if err := say("=== %s//%.2f", strings.ToUpper(s.String()), time.Since(received).Seconds()); err != nil {
				return err
			}
		case "quit":
			return nil
		}
	}
	return sc.Err()
}
