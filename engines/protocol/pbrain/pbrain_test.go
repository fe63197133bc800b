package pbrain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"testing/iotest"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/gomoku"
	"github.com/taikai-dev/taikai/internal/testkit"
)

type stream struct{ io.Reader }

func (stream) Write(b []byte) (int, error)      { return len(b), nil }
func (stream) Close() error                     { return nil }
func (stream) SetWriteDeadline(time.Time) error { return nil }

// CR LF, LF and CR alone all end a line once, also when a CR LF is split
// between two reads.
func TestLineEnds(t *testing.T) {
	in := "7,7\r\n8,8\n9,9\r10,10\r\n\r\n11,11"
	r := newCRAsLF(stream{iotest.OneByteReader(bytes.NewReader([]byte(in)))})
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "7,7\n8,8\n9,9\n10,10\n\n11,11"; string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
}

func TestAboutNick(t *testing.T) {
	for in, want := range map[string]string{
		`name="SomeBrain", version="1.0", author="Nymand", country="USA"`: "SomeBrain 1.0 by Nymand",
		`name="Rapfi", version="2024.01", author="Rapfi developers"`:      "Rapfi 2024.01",
		`name="x"`:                 "x",
		`NAME = "y" , Version="2"`: "y 2",
	} {
		if got := aboutNick(in); got != want {
			t.Errorf("%s: nick %q, want %q", in, got, want)
		}
	}
}

// capture is a brain that says nothing and whose input is kept.
type capture struct {
	io.Reader
	testkit.Buffer // what the seat sent
}

func (*capture) Close() error                     { return nil }
func (*capture) SetWriteDeadline(time.Time) error { return nil }

// INFO max_memory is the sandbox's limit less a headroom (a brain sizing its
// hash from it, as Rapfi does, was stopped by memory in every game), and
// every line taikai sends ends in CR LF, as the protocol text writes it.
func TestBeginTellsMemoryWithHeadroomInCRLF(t *testing.T) {
	for _, tc := range []struct{ limit, want int64 }{
		{1 << 30, 768 << 20},
		{64 << 20, 32 << 20},
		{0, 0},
	} {
		c := &capture{Reader: bytes.NewReader(nil)}
		s := New(c, engines.SeatConfig{Color: games.Black, Rule: "freestyle", MoveTime: time.Second, MemoryBytes: tc.limit})
		board, _ := games.Lookup("gomoku")
		rules, err := board.New("freestyle", 15)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Begin(context.Background(), engines.Start{Color: games.Black, Board: rules, Turn: games.Black}); err != nil {
			t.Fatal(err)
		}
		sent := c.String()
		if want := fmt.Sprintf("INFO max_memory %d\r\n", tc.want); !strings.Contains(sent, want) {
			t.Errorf("limit %d: sent\n%q\nwant %q", tc.limit, sent, want)
		}
		if n := strings.Count(sent, "\n"); n != strings.Count(sent, "\r\n") || n < 8 {
			t.Errorf("lines not all ended in CR LF: %q", sent)
		}
	}
}

// Greet returns once the brain said OK; a brain that then exits before the
// game begins is still seen leaving by the referee's Listen; one that exits
// without OK fails Greet with ErrGone.
func TestGreet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(&capture{Reader: bytes.NewReader([]byte("MESSAGE loading\r\nOK\r\n"))}, engines.SeatConfig{Color: games.Black})
	if err := s.Greet(ctx, 15); err != nil {
		t.Fatalf("greet: %v", err)
	}
	left := make(chan engines.Action, 1)
	s.Listen(func(ev engines.Action) {
		if ev.Kind == engines.Left {
			left <- ev
		}
	})
	select {
	case ev := <-left:
		if ev.Reason != games.ReasonDisconnect {
			t.Errorf("left by %q, want disconnect", ev.Reason)
		}
	case <-ctx.Done():
		t.Fatal("the referee never saw the brain leave")
	}
	s.Close()

	s = New(&capture{Reader: bytes.NewReader([]byte("MESSAGE no\r\n"))}, engines.SeatConfig{Color: games.Black})
	if err := s.Greet(ctx, 15); !errors.Is(err, engines.ErrGone) {
		t.Errorf("a brain that left without OK: %v, want ErrGone", err)
	}
	s.Close()
}
