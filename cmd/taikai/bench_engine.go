package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/othelloai"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// benchEngine is the engine `taikai bench` plays with when time matters: an
// othello-board client that answers a random legal move a set time after its
// turn reached it, or never answers and writes down how late the server's
// flag falls as it sees it. Times are the kernel's receive times where it
// gives them (TCP on Linux), so that they leave out this process's own
// scheduling. It is the bench's own, so that no engine of
// taikai's keeps a switch only the bench uses.
type benchEngine struct {
	delay time.Duration // answer this long after reading TURN
	clock time.Duration // silent: the clock the server runs on it
	flags string        // silent: file the flag's lateness goes to, one line each
	times string        // file each answer's own time goes to: from TURN's arrival to writing PUT
}

// benchEngineCommand is how the bench starts it.
func benchEngineCommand(self string, args ...string) []string {
	return append([]string{self, "bench", "engine", "--host", "{host}", "--port", "{port}"}, args...)
}

// runBenchEngine runs `taikai bench engine`.
func runBenchEngine(args []string, stderr io.Writer) int {
	var (
		e    benchEngine
		host string
		port int
	)
	fs := flag.NewFlagSet("bench engine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: taikai bench engine --host H --port P [flags]\n\nThe othello-board client taikai bench plays its timed games with.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&host, "host", "127.0.0.1", "server `address`")
	fs.IntVar(&port, "port", 0, "server `port`")
	fs.DurationVar(&e.delay, "delay", 0, "answer this `long` after the move arrived")
	fs.StringVar(&e.flags, "flags", "", "never answer; append how late each flag falls to `file`")
	fs.DurationVar(&e.clock, "clock", 0, "with --flags: the `time` per move the server gives")
	fs.StringVar(&e.times, "times", "", "append each answer's time, from its turn's arrival to writing it, to `file`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 10*time.Second)
	if err != nil {
		fmt.Fprintln(stderr, "taikai bench engine:", err)
		return 1
	}
	defer c.Close()
	if err := e.play(c); err != nil {
		fmt.Fprintln(stderr, "taikai bench engine:", err)
		return 1
	}
	return 0
}

// play speaks othello-board until the server closes.
func (e *benchEngine) play(c net.Conn) error {
	var flags, times *os.File
	for _, out := range []struct {
		path string
		f    **os.File
	}{{e.flags, &flags}, {e.times, &times}} {
		if out.path == "" {
			continue
		}
		f, err := os.OpenFile(out.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		*out.f = f
	}
	if _, err := io.WriteString(c, "NICK bench\n"); err != nil {
		return err
	}
	var (
		// The server's own reader: on Linux it gives the kernel's receive
		// time of each line, so that the engine's times leave out its own
		// late wake-ups.
		rd    = protocol.NewConn(c)
		rng   = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		me    games.Color
		board string
		given time.Time // silent: when the move was ours; zero if it is not
	)
	for {
		b, now, err := rd.ReadLine()
		if err == protocol.ErrLineTooLong {
			continue
		}
		if err != nil {
			return nil // the server closed: the game is over
		}
		rd.Invited() // the server's lines are no flood
		line := string(b)
		if !given.IsZero() {
			// The first line after a move we let pass is the server's
			// word that it flagged us and moved.
			fmt.Fprintf(flags, "%d\n", now.Sub(given)-e.clock)
			given = time.Time{}
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "START":
			if len(f) > 1 {
				n, _ := strconv.Atoi(f[1])
				me = games.Color(n)
			}
		case "BOARD":
			board = line
		case "TURN":
			if n, _ := strconv.Atoi(f[len(f)-1]); games.Color(n) != me {
				continue
			}
			if flags != nil {
				given = now
				continue
			}
			s, err := randomMove(board, me, rng)
			if err != nil {
				return err
			}
			if s == othello.Pass {
				continue // the server passes for us
			}
			time.Sleep(time.Until(now.Add(e.delay)))
			sent := time.Now()
			if _, err := fmt.Fprintf(c, "PUT %d %d\n", s.X(), s.Y()); err != nil {
				return err
			}
			if times != nil {
				fmt.Fprintf(times, "%d\n", sent.Sub(now))
			}
		case "END":
			return nil
		}
	}
}

// randomMove picks a legal move for me on an othello-board BOARD line.
func randomMove(line string, me games.Color, rng *rand.Rand) (othello.Square, error) {
	f := strings.Fields(line)
	if len(f) != 65 {
		return othello.Pass, fmt.Errorf("BOARD with %d cells, want 64", len(f)-1)
	}
	var cells [64]games.Color
	for i := range cells {
		n, err := strconv.Atoi(f[i+1])
		if err != nil {
			return othello.Pass, fmt.Errorf("BOARD cell %d: %q", i, f[i+1])
		}
		cells[i] = games.Color(n)
	}
	b := othello.FromCells(cells, othello.ColumnMajor, me)
	return othelloai.Random(&b, rng), nil
}
