// Package builtin holds taikai's built-in engines: real TCP clients of the
// classroom protocols, run as `taikai engine NAME --host H --port P`. The move
// choice lives in the pure packages othelloai, gomokuai and checkersai; this
// package speaks the wire.
package builtin

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taikai-dev/taikai/engines"
)

// Options configure a built-in engine run.
type Options struct {
	Engine     string        // built-in name
	Protocol   string        // wire protocol
	Host       string        // server address
	Port       int           // server port
	Color      string        // black or white (gomoku-turn needs it; others learn it from START)
	Name       string        // name sent with NICK or OPEN
	MoveTime   time.Duration // thinking time per move
	Rule       string        // gomoku rule
	BoardOrder string        // othello-board: column or row
	Seed       uint64        // random seed; 0 for a random one
	Delay      time.Duration // sleep this long before every answer (a slow client, for tests)
	Dial       time.Duration // how long to keep trying to connect
}

// Usage is the help text of `taikai engine`.
const Usage = `usage: taikai engine NAME --host H --port P [flags]

Runs a built-in engine as a client of a taikai server (or any server of its
protocol). Built-ins:
%s
Flags:
`

// Main runs `taikai engine` with the arguments after "engine" and returns the
// exit status.
func Main(args []string, stderr io.Writer) int {
	opt, err := ParseArgs(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "taikai engine:", err)
		return 2
	}
	if err := Run(opt); err != nil {
		fmt.Fprintf(stderr, "taikai engine %s: %v\n", opt.Engine, err)
		return 1
	}
	return 0
}

// ParseArgs reads the command line of `taikai engine`. It accepts the
// othello-move client's flags too (-H host -p port -n name).
func ParseArgs(args []string, stderr io.Writer) (Options, error) {
	var opt Options
	fs := flag.NewFlagSet("engine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		var list strings.Builder
		for _, b := range engines.Builtins() {
			fmt.Fprintf(&list, "  %-18s %s (%s)\n", b.Name, b.About, strings.Join(b.Protocols, ", "))
		}
		fmt.Fprintf(stderr, Usage, list.String())
		fs.PrintDefaults()
	}
	fs.StringVar(&opt.Host, "host", "127.0.0.1", "server `address`")
	fs.StringVar(&opt.Host, "H", "127.0.0.1", "server `address` (othello-move style)")
	fs.IntVar(&opt.Port, "port", 0, "server `port`")
	fs.IntVar(&opt.Port, "p", 0, "server `port` (othello-move style)")
	fs.StringVar(&opt.Protocol, "protocol", "", "wire `protocol` (default: the engine's first)")
	pbrainFlag := fs.Bool("pbrain", false, "be a Gomocup brain on standard input and output (same as --protocol pbrain)")
	nboardFlag := fs.Bool("nboard", false, "be an NBoard engine on standard input and output (same as --protocol nboard)")
	fs.StringVar(&opt.Color, "color", os.Getenv("TAIKAI_COLOR"), "`black|white`; gomoku-turn needs it (also -b / -w)")
	black := fs.Bool("b", false, "play black (gomoku-turn)")
	white := fs.Bool("w", false, "play white (gomoku-turn)")
	fs.StringVar(&opt.Name, "name", "", "`name` sent to the server (default: the engine's)")
	fs.StringVar(&opt.Name, "n", "", "`name` (othello-move style)")
	ms := fs.Int64("time-ms", 0, "thinking time per move in `ms` (default 1000)")
	fs.StringVar(&opt.Rule, "rule", os.Getenv("TAIKAI_RULE"), "gomoku `rule`: seed, freestyle, standard, renju")
	fs.StringVar(&opt.BoardOrder, "board-order", os.Getenv("TAIKAI_BOARD_ORDER"), "othello-board cell `order`: column or row")
	fs.Uint64Var(&opt.Seed, "seed", 0, "random `seed` (default: random)")
	fs.DurationVar(&opt.Delay, "delay", 0, "sleep this `long` before every answer (a slow client)")
	fs.DurationVar(&opt.Dial, "dial", 10*time.Second, "keep trying to connect this `long`")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs.Usage()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return opt, flag.ErrHelp
		}
		return opt, errors.New("name the built-in engine first")
	}
	opt.Engine = args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return opt, err
	}
	if fs.NArg() > 0 {
		return opt, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	b, ok := engines.LookupBuiltin(opt.Engine)
	if !ok {
		return opt, fmt.Errorf("unknown built-in %q, want one of %s", opt.Engine, strings.Join(engines.BuiltinNames(), ", "))
	}
	if *pbrainFlag {
		opt.Protocol = "pbrain"
	}
	if *nboardFlag {
		opt.Protocol = "nboard"
	}
	if opt.Protocol == "" {
		opt.Protocol = b.Protocols[0]
	}
	if !slices.Contains(b.Protocols, opt.Protocol) {
		return opt, fmt.Errorf("%s does not speak %q (it speaks %s)", opt.Engine, opt.Protocol, strings.Join(b.Protocols, ", "))
	}
	if p, _ := engines.LookupProtocol(opt.Protocol); p.Transport != engines.Stdio && (opt.Port <= 0 || opt.Port > 65535) {
		return opt, fmt.Errorf("--port: want 1-65535, got %d", opt.Port)
	}
	switch {
	case *black:
		opt.Color = "black"
	case *white:
		opt.Color = "white"
	}
	if opt.Name == "" {
		opt.Name = opt.Engine
	}
	opt.MoveTime = time.Duration(*ms) * time.Millisecond
	if opt.MoveTime <= 0 {
		opt.MoveTime = time.Second
	}
	if opt.Seed == 0 {
		opt.Seed = rand.Uint64()
	}
	return opt, nil
}

// Run connects and plays until the server ends the game; a pipe protocol's
// engine plays on standard input and output.
func Run(opt Options) error {
	switch opt.Protocol {
	case "pbrain":
		c := &client{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x7a1ca1))}
		return c.pbrainBrain(os.Stdin, os.Stdout)
	case "nboard":
		c := &client{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x7a1ca1))}
		return c.nboardEngine(os.Stdin, os.Stdout)
	}
	nc, err := dial(opt)
	if err != nil {
		return err
	}
	conn := nc
	defer conn.Close()
	c := &client{opt: opt, conn: conn, r: bufio.NewReaderSize(conn, 8192), rng: rand.New(rand.NewPCG(opt.Seed, 0x7a1ca1))}
	err = c.play()
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		// The server closed the connection as we wrote: the game is over
		// (a server ends a game by closing, and may do so while we think).
		return nil
	}
	return err
}

func (c *client) play() error {
	switch {
	case c.opt.Protocol == "othello-board":
		return c.othelloBoard()
	case c.opt.Protocol == "othello-move":
		return c.othelloMove()
	case c.opt.Protocol == "gomoku-turn":
		return c.gomokuTurn()
	case c.opt.Protocol == "checkers-board":
		return c.checkersBoard()
	}
	return fmt.Errorf("protocol %q not supported", c.opt.Protocol)
}

// dial connects, retrying briefly: a server may open its port a moment late.
func dial(opt Options) (net.Conn, error) {
	addr := net.JoinHostPort(opt.Host, strconv.Itoa(opt.Port))
	deadline := time.Now().Add(opt.Dial)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			return conn, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// client is one engine's connection.
type client struct {
	opt   Options
	conn  io.ReadWriteCloser
	r     *bufio.Reader
	rng   *rand.Rand
	out   []byte
	moves int // own moves so far, for the log
}

// line reads the next line without its line end; io.EOF when the server closed.
func (c *client) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errors.New("line too long from server")
	}
	if err != nil {
		if len(b) > 0 && err == io.EOF {
			return trim(b), nil
		}
		return nil, err
	}
	return trim(b), nil
}

func trim(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (c *client) send(b []byte) error {
	_, err := c.conn.Write(b)
	return err
}

// wait sleeps --delay before a move is sent: a slow client.
func (c *client) wait() {
	if c.opt.Delay > 0 {
		time.Sleep(c.opt.Delay)
	}
}

func atoi(b []byte) (int, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, errors.New("empty number")
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("bad number %q", b)
		}
		n = n*10 + int(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// RunIfEngine runs a built-in engine and exits when the process was started as
// one (`PROG engine NAME ...`). A test binary calls it first in TestMain so that
// it can stand in for the taikai binary as Launcher.Self.
func RunIfEngine() {
	if len(os.Args) > 1 && os.Args[1] == "engine" {
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
}
