package builtin

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/gomokuai"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// pbrainRule maps INFO rule's bitmask to a rule set: 1 exactly five, 4
// renju, else five or more (freestyle; taikai's seed rule has no bit, see
// engines/protocol/pbrain).
func pbrainRule(mask int, fallback gomoku.Rule) gomoku.Rule {
	switch {
	case mask&4 != 0:
		return gomoku.Renju
	case mask&1 != 0:
		return gomoku.Standard
	case fallback == gomoku.Seed:
		return gomoku.Seed // told by --rule (TAIKAI_RULE): the seed's bans hold
	}
	return gomoku.Freestyle
}

// pbrainBrain plays Gomoku as a Gomocup brain on standard input and output
// (the pbrain protocol, PROTOCOLS.md §5): START, INFO, BEGIN, TURN,
// BOARD ... DONE, RESTART, ABOUT, END; UNKNOWN for anything else.
func (c *client) pbrainBrain(in io.Reader, out io.Writer) error {
	w := bufio.NewWriter(out)
	say := func(format string, a ...any) error {
		fmt.Fprintf(w, format+"\n", a...)
		return w.Flush()
	}
	fallback, err := gomoku.ParseRule(c.opt.Rule)
	if err != nil {
		fallback = gomoku.Freestyle
	}
	var (
		b        *gomoku.Board
		mask     = -1
		turnMS   = c.opt.MoveTime.Milliseconds()
		timeLeft = int64(-1)
		me       = gomoku.Black
	)
	rule := func() gomoku.Rule {
		if mask < 0 {
			return fallback
		}
		return pbrainRule(mask, fallback)
	}
	move := func(received time.Time) error {
		if b == nil {
			return say("ERROR no START")
		}
		c.wait()
		budget := time.Duration(turnMS) * time.Millisecond
		if timeLeft >= 0 {
			if share := time.Duration(timeLeft/int64(max(b.Size()*b.Size()-b.Stones(), 2)/2+2)) * time.Millisecond; share < budget || budget == 0 {
				budget = share
			}
		}
		budget = max(budget, 5*time.Millisecond)
		deadline := received.Add(budget - safetyMargin(budget))
		var p gomoku.Point
		if c.opt.Engine == "gomoku-threat" {
			p = gomokuai.Threat(b, rule(), me, c.rng, deadline)
		} else {
			var avoid []gomoku.Point
			for {
				q, ok := gomokuai.Random(b, c.rng, avoid)
				if !ok {
					return say("MESSAGE no allowed point")
				}
				if !b.Forbidden(rule(), me, q.X, q.Y) {
					p = q
					break
				}
				avoid = append(avoid, q)
			}
		}
		b.Put(me, p.X, p.Y)
		return say("%d,%d", p.X, p.Y)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		received := time.Now()
		line := strings.TrimSpace(sc.Text())
		word, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(word) {
		case "":
		case "START":
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err == nil {
				b, err = gomoku.NewBoard(n)
			}
			if err != nil {
				if err := say("ERROR unsupported size %q", rest); err != nil {
					return err
				}
				continue
			}
			me = gomoku.Black
			if err := say("OK"); err != nil {
				return err
			}
		case "RESTART":
			if b != nil {
				b, _ = gomoku.NewBoard(b.Size())
			}
			if err := say("OK"); err != nil {
				return err
			}
		case "INFO":
			key, val, _ := strings.Cut(strings.TrimSpace(rest), " ")
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if err != nil {
				continue
			}
			switch key {
			case "timeout_turn":
				turnMS = n
			case "time_left":
				timeLeft = n
			case "rule":
				mask = int(n)
			}
		case "BEGIN":
			me = gomoku.Black
			if err := move(received); err != nil {
				return err
			}
		case "TURN":
			x, y, ok := pbrainPoint(rest)
			if !ok || b == nil || !b.On(x, y) || b.At(x, y) != gomoku.Empty {
				if err := say("ERROR bad TURN %q", rest); err != nil {
					return err
				}
				continue
			}
			// The side the opponent is not: on a TURN the brain plays the
			// colour the opponent's stone is not.
			if b.Stones() == 0 {
				me = gomoku.White
			}
			b.Put(-me, x, y)
			if err := move(received); err != nil {
				return err
			}
		case "BOARD":
			if b == nil {
				return fmt.Errorf("BOARD before START")
			}
			b, _ = gomoku.NewBoard(b.Size())
			var own, opp []gomoku.Point
			for sc.Scan() {
				l := strings.TrimSpace(sc.Text())
				if strings.EqualFold(l, "DONE") {
					break
				}
				f := strings.Split(l, ",")
				if len(f) != 3 {
					continue
				}
				x, y, ok := pbrainPoint(f[0] + "," + f[1])
				if !ok || !b.On(x, y) {
					continue
				}
				if strings.TrimSpace(f[2]) == "1" {
					own = append(own, gomoku.Point{X: x, Y: y})
				} else {
					opp = append(opp, gomoku.Point{X: x, Y: y})
				}
			}
			// Black moved first: the side to move is black on an even
			// number of stones, white on an odd one.
			me = gomoku.Black
			if (len(own)+len(opp))%2 == 1 {
				me = gomoku.White
			}
			for _, p := range own {
				b.Put(me, p.X, p.Y)
			}
			for _, p := range opp {
				b.Put(-me, p.X, p.Y)
			}
			if err := move(received); err != nil {
				return err
			}
		case "ABOUT":
			if err := say(`name="%s", version="1.0", author="taikai", country="JP"`, c.opt.Name); err != nil {
				return err
			}
		case "END":
			return nil
		default:
			if err := say("UNKNOWN %s", word); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

func pbrainPoint(s string) (x, y int, ok bool) {
	xs, ys, found := strings.Cut(s, ",")
	x, errx := strconv.Atoi(strings.TrimSpace(xs))
	y, erry := strconv.Atoi(strings.TrimSpace(ys))
	return x, y, found && errx == nil && erry == nil
}
