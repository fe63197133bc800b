package builtin_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin"
	"github.com/taikai-dev/taikai/games/othello"
)

func TestParseArgs(t *testing.T) {
	// The othello-move client's own flags work too.
	opt, err := builtin.ParseArgs([]string{"othello-alphabeta", "--protocol", "othello-move", "-H", "10.0.0.2", "-p", "3000", "-n", "ab"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Host != "10.0.0.2" || opt.Port != 3000 || opt.Name != "ab" || opt.Protocol != "othello-move" || opt.MoveTime != time.Second {
		t.Errorf("parsed %+v", opt)
	}
	opt, err = builtin.ParseArgs([]string{"gomoku-threat", "--port", "10000", "-w", "--time-ms", "250"}, io.Discard)
	if err != nil || opt.Color != "white" || opt.MoveTime != 250*time.Millisecond || opt.Protocol != "gomoku-turn" {
		t.Errorf("parsed %+v, %v", opt, err)
	}
	for _, bad := range [][]string{
		{},
		{"stockfish", "--port", "1"},
		{"othello-random"},
		{"othello-random", "--port", "1", "--protocol", "gomoku-turn"},
		{"othello-random", "--port", "1", "extra"},
	} {
		if _, err := builtin.ParseArgs(bad, io.Discard); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}

// The othello-board client answers only its own TURN, from the board that
// came with it: it keeps every BOARD, but parses one only when it is to move.
func TestOthelloBoardAnswersItsTurnFromTheLatestBoard(t *testing.T) {
	start := func() (net.Conn, *bufio.Reader, chan error) {
		c, r, done := runBuiltin(t, "othello-random")
		if nick, err := r.ReadString('\n'); err != nil || nick != "NICK othello-random\n" {
			t.Fatalf("first line %q, %v", nick, err)
		}
		return c, r, done
	}
	board := func(b othello.Board) string {
		s := "BOARD"
		for _, c := range b.Cells(othello.ColumnMajor) {
			s += " " + strconv.Itoa(int(c))
		}
		return s + "\n"
	}

	c, r, done := start()
	// Two positions with white to move and no legal move in common: black
	// opened with d3 in one, with e6 in the other.
	first, second := othello.New(), othello.New()
	if _, err := first.Play(othello.At(3, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Play(othello.At(4, 5)); err != nil {
		t.Fatal(err)
	}
	if first.Legal()&second.Legal() != 0 {
		t.Fatal("the two positions share a legal move for white")
	}
	// Black's turn on the first board is not the client's (it plays white),
	// then white is to move on the second, sent with a leading blank (a form
	// the client's fast path for BOARD does not take).
	fmt.Fprintf(c, "START -1\n%sTURN 1\n %sTURN -1\n", board(first), board(second))
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var x, y int
	if _, err := fmt.Sscanf(line, "PUT %d %d\n", &x, &y); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	if second.Legal()&(1<<othello.At(x, y)) == 0 {
		t.Errorf("answer %q is not a legal move for white on the second board", line)
	}
	c.Close()
	if err := waitBuiltin(t, done); err != nil {
		t.Errorf("client after the server closed: %v", err)
	}

	// A TURN for the client before any BOARD is the server's mistake: the
	// client says so and leaves rather than play on an empty board.
	c, _, done = start()
	defer c.Close()
	fmt.Fprintf(c, "START 1\nTURN 1\n")
	if err := waitBuiltin(t, done); err == nil || !strings.Contains(err.Error(), "TURN before any BOARD") {
		t.Errorf("client after a TURN without BOARD: %v", err)
	}
}

// runBuiltin runs a built-in engine in this process as a client of a
// loopback listener, with args after its name, and returns its connection
// (with a 10 s deadline) and the channel its end comes on.
func runBuiltin(t *testing.T, engine string, args ...string) (net.Conn, *bufio.Reader, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	opt, err := builtin.ParseArgs(append([]string{engine, "--port", port}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- builtin.Run(opt) }()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c), done
}

// waitBuiltin waits, at most 10 s, for a built-in run by runBuiltin to end.
func waitBuiltin(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("client still running 10 s after the server closed or ended the game")
		return nil
	}
}

// A slow gomoku-turn client whose put of one turn reaches the server after
// its next "your turn" (the server played the first turn for it) gets that
// put's reply where it expects the board: an accepted put ends the new turn,
// a refused one is followed by the board; a board asked for in the turn
// before and answered late is not taken for a put's reply. Before, "1" read
// as a board row made the client exit with an error.
func TestGomokuTurnLateAnswers(t *testing.T) {
	c, r, done := runBuiltin(t, "gomoku-random", "-b")
	defer c.Close()
	expect := func(prefix string) string {
		t.Helper()
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("client sent %q (%v), want %q...", line, err, prefix)
		}
		return line
	}
	board := strings.Repeat("+++++\n", 5)

	// Turn 1: the client's put is overtaken by turn 2; it was accepted in
	// turn 2, so the client's get of turn 2 gets no answer.
	fmt.Fprint(c, "your turn\n")
	expect("get text")
	fmt.Fprint(c, board)
	expect("put ")
	fmt.Fprint(c, "your turn\n1\n")
	expect("get text")
	// Turn 3: its put is overtaken by turn 4 and refused in it (occupied):
	// the board of turn 4 follows, and the client plays from it.
	fmt.Fprint(c, "your turn\n")
	expect("get text")
	fmt.Fprint(c, board)
	expect("put ")
	fmt.Fprint(c, "your turn\n2\n")
	expect("get text")
	fmt.Fprint(c, board)
	expect("put ")
	// Its put of turn 4 is answered only after a late board (of a get the
	// client sent for nothing): the client reads past it to the reply.
	fmt.Fprint(c, board+"1\n")
	// Turn 5, played normally: the client is in step.
	fmt.Fprint(c, "your turn\n")
	expect("get text")
	fmt.Fprint(c, board)
	expect("put ")
	fmt.Fprint(c, "1\n")
	c.Close()
	if err := waitBuiltin(t, done); err != nil {
		t.Errorf("client: %v", err)
	}
}
