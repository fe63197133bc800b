#!/usr/bin/env python3
"""gomoku_text.py -- taikai test client for the `gomoku-turn` protocol
(PROTOCOLS.md section 3), reading the board with `get text`.

Start:  gomoku_text.py ADDRESS PORT -b|-w
        -b = player 0 (black, `@`), -w = player 1 (white, `o`).
Env:    TAIKAI_END_MESSAGE=1  the server sends `end <win|lose|draw> <reason>`
                              before closing, and the client requires it
        TAIKAI_SIZE           optional: if set, the board must have this size
        TAIKAI_SEED           seed for the move choice (default: random)

Plays: waits for `your turn`, sends `get text`, reads N lines of N characters
(N from the first line), and puts a stone on the empty point that makes its
longest own line (ties random), else a random empty point 8-adjacent to any
stone, the centre on an empty board. On its 3rd turn it first probes `put` on
an occupied point (expects `2`) and `put N 0` (expects `3`).

Checks (any failure: one line on stderr, exit 2):
 - every server line is exactly `your turn`, a put reply `1`..`4`, a board
   row, or (only with TAIKAI_END_MESSAGE=1) `end <win|lose|draw> <reason>`
   with a game-end reason from PROTOCOLS.md; no line over 4096 bytes; no
   partial line or partial board before the connection closes;
 - `get text`: N in 5..25 (and equal to TAIKAI_SIZE if set), the same N on
   every turn, N rows of exactly N characters from `+@o`; every stone this
   client placed is still there, every opponent stone seen before is still
   there; new own stones it did not place are accepted as server
   auto-placements (timeout) and logged; stone counts alternate (black:
   opp == own, white: opp == own + 1 when it is to move); no run of exactly
   five of either colour while the game goes on; the board is not full;
 - put replies: `2`/`3` for a point it knows is empty and on the board is an
   error; `4` is accepted (it tries another point) unless the point makes
   exactly five (never forbidden); the occupied probe must get `2`, the
   off-board probe `3`;
 - after an accepted move that makes exactly five the game must end (EOF, or
   `end win normal` with TAIKAI_END_MESSAGE=1), not `your turn`;
 - with TAIKAI_END_MESSAGE=1 the final line must come before EOF and nothing
   may follow it;
 - 30 s without data from the server is an error.
EOF at a line/board boundary (optionally after the end line) is the normal
game end: exit 0. This includes EOF instead of a `get text` or `put` reply
(the game may end at any time: resign, disconnect, timeouts); with
TAIKAI_END_MESSAGE=1 the end line may also stand in place of such a reply.
A refused write (server already closed) is logged and the following read
decides. Exit 1: usage or local error.
"""
import os
import random
import socket
import sys

MAXLINE = 4096
REASONS = {"normal", "timeout", "illegal", "disconnect", "close", "resign",
           "no_connect", "crash", "aborted"}
DIRS = ((1, 0), (0, 1), (1, 1), (1, -1))


class Violation(Exception):
    pass


class GameOver(Exception):
    pass


class Client:
    def __init__(self, sock, black, end_message, want_size, rng):
        self.sock = sock
        self.black = black
        self.own_ch = "@" if black else "o"
        self.opp_ch = "o" if black else "@"
        self.end_message = end_message
        self.want_size = want_size
        self.rng = rng
        self.buf = b""
        self.eof = False
        self.n = None
        self.own = set()
        self.opp = set()
        self.auto = 0
        self.turns = 0
        self.five = None  # own accepted move that made exactly five

    # ---- I/O -------------------------------------------------------------
    def _fill(self, what):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise Violation("no data from the server for 30 s while %s" % what)
        except ConnectionResetError:
            print("# connection reset by server")
            data = b""
        if not data:
            self.eof = True
        self.buf += data
        return len(data)

    def read_line(self, what):
        """One line without '\\n', or None on EOF at a line boundary."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                if i > MAXLINE:
                    raise Violation("line longer than %d bytes while %s" % (MAXLINE, what))
                raw, self.buf = self.buf[:i], self.buf[i + 1:]
                try:
                    return raw.decode("ascii")
                except UnicodeDecodeError:
                    raise Violation("non-ASCII line %r while %s" % (raw[:60], what))
            if len(self.buf) > MAXLINE:
                raise Violation("line longer than %d bytes while %s" % (MAXLINE, what))
            if self.eof or self._fill(what) == 0:
                if self.buf:
                    raise Violation("connection closed in the middle of a line (%r, no newline) while %s"
                                    % (self.buf[:60], what))
                return None

    def send_line(self, text):
        print("> " + text, flush=True)
        try:
            self.sock.sendall((text + "\n").encode("ascii"))
        except (BrokenPipeError, ConnectionResetError) as e:
            print("# write refused (%s): server has closed" % e)

    # ---- game end ----------------------------------------------------------
    def game_over(self):
        if self.end_message:
            raise Violation("connection closed without the final `end <win|lose|draw> <reason>` line "
                            "(TAIKAI_END_MESSAGE=1)")
        print("# game over: connection closed after %d turns (own %d stones, %d auto-placed; opponent %d)"
              % (self.turns, len(self.own), self.auto, len(self.opp)))
        raise GameOver()

    def handle_end_line(self, line):
        print("< " + line)
        if not self.end_message:
            raise Violation("unexpected line %r (the server sends nothing before closing unless "
                            "end_message is on)" % line[:60])
        tok = line.split(" ")
        tok = [t for t in tok if t != ""]
        if len(tok) != 3 or tok[0] != "end":
            raise Violation("bad end line %r (expected `end <win|lose|draw> <reason>`)" % line[:60])
        if tok[1] not in ("win", "lose", "draw"):
            raise Violation("bad result %r in end line (win, lose or draw)" % tok[1])
        if tok[2] not in REASONS:
            raise Violation("unknown game-end reason %r in end line" % tok[2])
        if self.five is not None and (tok[1], tok[2]) != ("win", "normal"):
            raise Violation("own move %s made exactly five but the end line says '%s %s'"
                            % (self.five, tok[1], tok[2]))
        rest = self.read_line("waiting for EOF after the end line")
        if rest is not None:
            raise Violation("data after the end line: %r" % rest[:60])
        print("# game over: %s %s after %d turns" % (tok[1], tok[2], self.turns))
        raise GameOver()

    def read_reply(self, what):
        line = self.read_line(what)
        if line is None:
            self.game_over()
        if line.startswith("end"):
            self.handle_end_line(line)
        print("< " + line)
        return line

    # ---- board -------------------------------------------------------------
    def read_board(self):
        what = "reading the `get text` board"
        first = self.read_line(what)
        if first is None:
            self.game_over()
        if first.startswith("end"):
            self.handle_end_line(first)
        n = len(first)
        if not 5 <= n <= 25:
            raise Violation("first board row %r has length %d, not a board size 5..25" % (first[:60], n))
        if self.want_size is not None and n != self.want_size:
            raise Violation("board is %dx%d but TAIKAI_SIZE=%d" % (n, n, self.want_size))
        if self.n is not None and n != self.n:
            raise Violation("board size changed from %d to %d" % (self.n, n))
        self.n = n
        rows = [first]
        while len(rows) < n:
            line = self.read_line(what)
            if line is None:
                raise Violation("connection closed after %d of %d rows of `get text`" % (len(rows), n))
            rows.append(line)
        for y, row in enumerate(rows):
            if len(row) != n:
                raise Violation("`get text` row %d has %d characters, expected %d: %r" % (y, len(row), n, row[:60]))
            for x, c in enumerate(row):
                if c not in "+@o":
                    raise Violation("`get text` character %r at (%d,%d) is not +, @ or o" % (c, x, y))
        print("< [%d rows]" % n)
        return rows

    def check_board(self, rows):
        new_opp = 0
        for y, row in enumerate(rows):
            for x, c in enumerate(row):
                p = (x, y)
                if p in self.own and c != self.own_ch:
                    raise Violation("own stone at (%d,%d) shows as %r in `get text` (expected %r)"
                                    % (x, y, c, self.own_ch))
                if p in self.opp and c != self.opp_ch:
                    raise Violation("opponent stone at (%d,%d) seen earlier shows as %r in `get text` (expected %r)"
                                    % (x, y, c, self.opp_ch))
                if c == self.own_ch and p not in self.own:
                    self.own.add(p)
                    self.auto += 1
                    print("# own stone at (%d,%d) not placed by me: server auto-placement" % p)
                if c == self.opp_ch and p not in self.opp:
                    self.opp.add(p)
                    new_opp += 1
                    print("# opponent stone at (%d,%d)" % p)
        no, np_ = len(self.own), len(self.opp)
        if (np_ != no) if self.black else (np_ != no + 1):
            raise Violation("stone counts do not alternate: %s to move with %d own and %d opponent stones "
                            "(new opponent stones since last look: %d)"
                            % ("black" if self.black else "white", no, np_, new_opp))
        for stones, who in ((self.own, "own"), (self.opp, "opponent")):
            f = self.exact_five(stones)
            if f is not None:
                raise Violation("%s stones make exactly five from (%d,%d) but the game goes on" % ((who,) + f))
        if no + np_ == self.n * self.n:
            raise Violation("`your turn` on a full board")

    def on_board(self, x, y):
        return 0 <= x < self.n and 0 <= y < self.n

    def run_through(self, stones, x, y, dx, dy):
        k = 1
        cx, cy = x + dx, y + dy
        while (cx, cy) in stones:
            k += 1
            cx, cy = cx + dx, cy + dy
        cx, cy = x - dx, y - dy
        while (cx, cy) in stones:
            k += 1
            cx, cy = cx - dx, cy - dy
        return k

    def longest_with(self, x, y):
        s = self.own | {(x, y)}
        return max(self.run_through(s, x, y, dx, dy) for dx, dy in DIRS)

    def makes_exact_five(self, x, y):
        s = self.own | {(x, y)}
        return any(self.run_through(s, x, y, dx, dy) == 5 for dx, dy in DIRS)

    def exact_five(self, stones):
        for (x, y) in sorted(stones):
            for dx, dy in DIRS:
                if (x - dx, y - dy) in stones:
                    continue
                if self.run_through(stones, x, y, dx, dy) == 5:
                    return (x, y)
        return None

    # ---- play --------------------------------------------------------------
    def choose(self, refused):
        n = self.n
        occupied = self.own | self.opp
        empty = [(x, y) for y in range(n) for x in range(n)
                 if (x, y) not in occupied and (x, y) not in refused]
        if not empty:
            raise Violation("every empty point was answered 4 (forbidden)")
        if not occupied and (n // 2, n // 2) in empty:
            return (n // 2, n // 2)
        # extend own longest line
        best, best_len = [], 1
        for (x, y) in empty:
            if not any((x + dx, y + dy) in self.own for dx in (-1, 0, 1) for dy in (-1, 0, 1)):
                continue
            k = self.longest_with(x, y)
            if k > best_len:
                best, best_len = [(x, y)], k
            elif k == best_len:
                best.append((x, y))
        if best:
            return self.rng.choice(best)
        adj = [(x, y) for (x, y) in empty
               if any((x + dx, y + dy) in occupied for dx in (-1, 0, 1) for dy in (-1, 0, 1))]
        return self.rng.choice(adj or empty)

    def probes(self):
        occupied = sorted(self.own | self.opp)
        if occupied:
            x, y = occupied[0]
            self.send_line("put %d %d" % (x, y))
            r = self.read_reply("waiting for the reply to a put on an occupied point")
            if r != "2":
                raise Violation("put %d %d on an occupied point answered %r, expected 2" % (x, y, r[:60]))
        self.send_line("put %d 0" % self.n)
        r = self.read_reply("waiting for the reply to an off-board put")
        if r != "3":
            raise Violation("put %d 0 (off the board) answered %r, expected 3" % (self.n, r[:60]))

    def play_move(self):
        refused = set()
        while True:
            x, y = self.choose(refused)
            self.send_line("put %d %d" % (x, y))
            r = self.read_reply("waiting for the reply to put")
            if r == "1":
                self.own.add((x, y))
                if self.makes_exact_five(x, y):
                    self.five = (x, y)
                    print("# (%d,%d) makes five" % (x, y))
                return
            if r == "2":
                raise Violation("put %d %d answered 2 (occupied) but the point is empty on the board just read"
                                % (x, y))
            if r == "3":
                raise Violation("put %d %d answered 3 (off the board) but the point is on an %dx%d board"
                                % (x, y, self.n, self.n))
            if r == "4":
                if self.makes_exact_five(x, y):
                    raise Violation("put %d %d answered 4 (forbidden) but it makes exactly five, "
                                    "which is never forbidden" % (x, y))
                refused.add((x, y))
                continue
            raise Violation("put reply %r is not 1, 2, 3 or 4" % r[:60])

    def run(self):
        while True:
            line = self.read_line("waiting for `your turn`")
            if line is None:
                self.game_over()
            if line.startswith("end"):
                self.handle_end_line(line)
            print("< " + line)
            if line != "your turn":
                raise Violation("expected `your turn`, got %r" % line[:60])
            if self.five is not None:
                raise Violation("got `your turn` after own move %s made exactly five: the game should have ended"
                                % (self.five,))
            self.turns += 1
            self.send_line("get text")
            rows = self.read_board()
            self.check_board(rows)
            if self.turns == 3:
                self.probes()
            self.play_move()


def main(argv):
    if len(argv) != 4 or argv[3] not in ("-b", "-w"):
        print("usage: gomoku_text.py ADDRESS PORT -b|-w", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(line_buffering=True)
    host, port, black = argv[1], argv[2], argv[3] == "-b"
    end_message = os.environ.get("TAIKAI_END_MESSAGE") == "1"
    want_size = None
    if os.environ.get("TAIKAI_SIZE"):
        try:
            want_size = int(os.environ["TAIKAI_SIZE"])
        except ValueError:
            print("gomoku_text: error: TAIKAI_SIZE is not an integer", file=sys.stderr)
            return 1
    seed = os.environ.get("TAIKAI_SEED") or str(random.SystemRandom().randrange(1 << 30))
    rng = random.Random(seed)
    try:
        sock = socket.create_connection((host, int(port)), timeout=30)
    except (OSError, ValueError) as e:
        print("gomoku_text: error: cannot connect to %s port %s: %s" % (host, port, e), file=sys.stderr)
        return 1
    sock.settimeout(30)
    print("# connected to %s:%s as %s, seed=%s%s" % (host, port, "player 0 (black)" if black else "player 1 (white)",
                                                      seed, ", end_message" if end_message else ""), flush=True)
    client = Client(sock, black, end_message, want_size, rng)
    try:
        client.run()
    except GameOver:
        sys.stdout.flush()
        return 0
    except Violation as v:
        sys.stdout.flush()
        print("gomoku_text: PROTOCOL VIOLATION (turn %d): %s" % (client.turns, v), file=sys.stderr)
        return 2
    except OSError as e:
        sys.stdout.flush()
        print("gomoku_text: error: %s" % e, file=sys.stderr)
        return 1
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
