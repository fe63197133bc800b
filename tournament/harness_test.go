package tournament

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// client is a scripted protocol client on a real loopback connection.
type client struct {
	tb   testing.TB
	name string
	c    net.Conn
	r    *bufio.Reader
}

func (c *client) send(line string) {
	c.tb.Helper()
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		c.tb.Fatalf("%s: send %q: %v", c.name, line, err)
	}
}

func (c *client) sendRaw(b []byte) {
	c.tb.Helper()
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.c.Write(b); err != nil {
		c.tb.Fatalf("%s: send %d bytes: %v", c.name, len(b), err)
	}
}

// readLine reads one line (with its "\n") within the deadline.
func (c *client) readLine() (string, error) {
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	return c.r.ReadString('\n')
}

// expect reads the next lines and checks them byte for byte.
func (c *client) expect(want ...string) {
	c.tb.Helper()
	for _, w := range want {
		got, err := c.readLine()
		if err != nil {
			c.tb.Fatalf("%s: want %q, read error %v (got %q)", c.name, w, err, got)
		}
		if got != w+"\n" {
			c.tb.Fatalf("%s: got line %q, want %q", c.name, got, w+"\n")
		}
	}
}

// expectEOF checks that the server closed the connection with nothing more.
func (c *client) expectEOF() {
	c.tb.Helper()
	got, err := c.readLine()
	if err == nil || got != "" {
		c.tb.Fatalf("%s: want the connection closed, got %q (err %v)", c.name, got, err)
	}
}

// expectQuiet checks that nothing arrives for a while.
func (c *client) expectQuiet(d time.Duration) {
	c.tb.Helper()
	c.c.SetReadDeadline(time.Now().Add(d))
	if got, err := c.r.ReadString('\n'); err == nil || got != "" {
		c.tb.Fatalf("%s: want silence, got %q", c.name, got)
	}
}

// game connects two scripted clients to seats of the given protocols and runs a
// referee over them in the background.
type game struct {
	black, white *client
	ref          *Referee
	done         chan games.Outcome
	cancel       context.CancelFunc
	handled      [2]chan engines.Action // each seat's events, once the referee has handled them
}

// observed passes a seat's events to the referee and then to handled, so that
// a test can wait until a line that has no reply has been judged.
type observed struct {
	engines.Seat
	handled chan engines.Action
}

func (o observed) Listen(handle func(engines.Action)) {
	o.Seat.Listen(func(ev engines.Action) {
		handle(ev)
		select {
		case o.handled <- ev:
		default: // nobody looks: drop it
		}
	})
}

// waitHandled returns the next n events of seat i that the referee has
// handled, waiting for them. Every event since the game began is kept, so a
// test that waits must have taken the ones before.
func (g *game) waitHandled(tb testing.TB, i, n int) []engines.Action {
	tb.Helper()
	var evs []engines.Action
	for range n {
		select {
		case ev := <-g.handled[i]:
			evs = append(evs, ev)
		case <-time.After(10 * time.Second):
			tb.Fatalf("seat %d: %d of %d events handled within 10s: %+v", i, len(evs), n, evs)
		}
	}
	return evs
}

func startGame(tb testing.TB, set Settings, protos [2]string) *game {
	tb.Helper()
	if err := set.Validate(); err != nil {
		tb.Fatal(err)
	}
	var clients [2]*client
	var seats [2]engines.Seat
	var handled [2]chan engines.Action
	names := [2]engines.Engine{{Name: "engine-b"}, {Name: "engine-w"}}
	for i, name := range []string{"black", "white"} {
		cc, sc := protocoltest.TCPPair(tb)
		clients[i] = &client{tb: tb, name: name, c: cc, r: bufio.NewReader(cc)}
		handled[i] = make(chan engines.Action, 1024)
		seats[i] = observed{newSeat(protos[i], sc, engines.SeatConfig{Color: games.ColorAt(i), Options: set.Options, Tallies: tallies([2]engines.Tally{}, names, i)}), handled[i]}
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &game{
		black: clients[0], white: clients[1], done: make(chan games.Outcome, 1), cancel: cancel, handled: handled,
		ref: &Referee{
			Settings: set, Seats: seats,
			Clocks: [2]clockSpec{set.clockFor(protos[0]), set.clockFor(protos[1])},
			Names:  [2]string{names[0].Name, names[1].Name},
		},
	}
	go func() {
		out := g.ref.Run(ctx)
		for _, s := range seats {
			s.Close()
		}
		g.done <- out
	}()
	tb.Cleanup(func() {
		cancel()
		for _, c := range clients {
			c.c.Close()
		}
		select {
		case <-g.done:
		case <-time.After(10 * time.Second):
			tb.Error("referee did not stop")
		}
	})
	return g
}

// wait returns the outcome once the referee has finished.
// wantViolations checks one seat's violation counts.
func wantViolations(tb testing.TB, seat string, got, want games.Violations) {
	tb.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Errorf("%s violations %v, want %v", seat, got, want)
	}
}

func (g *game) wait(tb testing.TB) games.Outcome {
	tb.Helper()
	select {
	case out := <-g.done:
		g.done <- out // for Cleanup
		return out
	case <-time.After(30 * time.Second):
		tb.Fatal("game did not end within 30s")
	}
	return games.Outcome{}
}

// boardLine formats a BOARD line the way §1 specifies, independently of the
// adapter: 64 cells, index 8*x + y.
func boardLine(b *othello.Board) string {
	var sb strings.Builder
	sb.WriteString("BOARD")
	for x := range 8 {
		for y := range 8 {
			fmt.Fprintf(&sb, " %d", b.At(x, y))
		}
	}
	return sb.String()
}
