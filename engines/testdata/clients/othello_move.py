#!/usr/bin/env python3
"""othello_move.py -- taikai test client for the `othello-move` protocol
(PROTOCOLS.md section 2; board, start position and first player from section 1).

Start:  othello_move.py -H HOST -p PORT -n NAME
Env:    TAIKAI_SEED     seed for breaking ties between moves (default: random)
        FAULT           misbehave on purpose at own move number FAULT_AT
                        (default 3; passes count as moves):
                          illegal  MOVE to an occupied square  -> expects END LOSE .. INVALID_MOVE
                          badpass  MOVE PASS although a move exists (waits for
                                   a turn with a move)         -> expects END LOSE .. INVALID_MOVE
                          garbage  sends `HELLO WORLD`        -> expects END LOSE .. INVALID_COMMAND
                          close    closes the socket and exits 0
                          giveup   MOVE GIVEUP                 -> expects END LOSE .. GIVEUP
                          slow     sleeps FAULT_SLEEP_MS (default 2000) before
                                   every own move from then on -> expects END LOSE .. TIMEOUT
                        then BYE (or START for another game, with the same fault).

Plays: sends `OPEN <name>`, keeps its own 8x8 board (white d4 e5, black e4 d5,
black first; `C4` = column letter, row digit), plays a legal move (a corner if
one is legal, else the most flips, ties by the seeded random), `MOVE PASS`
exactly when it has no legal move. After END, a `START` starts a new game.

Checks (any failure: one line on stderr, exit 2):
 - lines: at most 4096 bytes, no partial line at EOF, keywords exactly as in
   the grammar (upper case), tokens split on spaces/tabs, empty lines
   ignored, exact token counts (START 4, ACK 2, MOVE 2, END 5);
 - the first line is START, `START <BLACK|WHITE> <opponent> <ms>` with integer
   ms; START again only right after END;
 - every relayed `MOVE <mv>` comes only when the opponent is to move, is upper
   case, and is legal on its own board; `MOVE PASS` only when the opponent has
   no legal move and never as a second consecutive PASS (that must be END
   DOUBLE_PASS); a relayed `MOVE GIVEUP` must be followed by END WIN .. GIVEUP;
 - `ACK <ms>` after each own move except the one that ends the game (a PASS
   answering a PASS) and except a deliberate fault; ms is an integer, not
   above the previous remaining time (START's ms, then the last ACK), and at
   least the locally measured thinking time below it (5 ms tolerance: the
   server's clock runs from writing the prompt to reading the move, which
   contains the client's own interval, measured from reading the prompt to
   just before sending the move, so that a pause after the send cannot
   inflate it);
 - `END <WIN|LOSE|TIE> <mine> <theirs> <reason>`: integer counts 0..64 with
   sum <= 64, reason one of DOUBLE_PASS INVALID_MOVE INVALID_COMMAND GIVEUP
   TIMEOUT; TIE only with DOUBLE_PASS; with DOUBLE_PASS the last two moves
   were passes (its own PASS answering a PASS, or the opponent had no move
   after its own PASS), the counts equal its board's, and WIN/LOSE/TIE
   matches them; without a deliberate fault INVALID_MOVE / INVALID_COMMAND /
   GIVEUP must be WIN; TIMEOUT must be WIN only while the opponent was to move
   and LOSE only while it was to move, and LOSE TIMEOUT is rejected when the
   remaining time minus the most the server can have measured (time since its
   previous send) is still above zero; after a deliberate fault the END must be
   LOSE with the matching reason;
 - after END comes `BYE (<name> <score> <wins> <losses>)+` (integer score,
   wins and losses >= 0) or START; the server closes after BYE (no more lines,
   within 60 s);
 - 60 s without data from the server is an error.
Exit 0: game(s) ended as expected; 2: protocol violation; 3: the requested
FAULT never took effect (game ended first; not a server error); 1: usage or
local error.
"""
import argparse
import os
import random
import re
import select
import socket
import sys
import time

MAXLINE = 4096
TIMEOUT_S = 60
TOL_MS = 5
COLS = "ABCDEFGH"
REASONS = ("DOUBLE_PASS", "INVALID_MOVE", "INVALID_COMMAND", "GIVEUP", "TIMEOUT")
FAULT_REASON = {"illegal": "INVALID_MOVE", "badpass": "INVALID_MOVE", "garbage": "INVALID_COMMAND",
                "giveup": "GIVEUP", "slow": "TIMEOUT", "close": None}
INT_RE = re.compile(r"^-?[0-9]+$")
SQ_RE = re.compile(r"^[A-Ha-h][1-8]$")
DIRS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
CORNERS = {(0, 0), (7, 0), (0, 7), (7, 7)}


class Violation(Exception):
    pass


class FaultNotExercised(Exception):
    pass


# ---- Othello rules ---------------------------------------------------------
def start_board():
    b = [0] * 64                         # index y*8+x; 1 black, -1 white
    b[3 * 8 + 3] = -1                    # d4 white
    b[4 * 8 + 4] = -1                    # e5 white
    b[3 * 8 + 4] = 1                     # e4 black
    b[4 * 8 + 3] = 1                     # d5 black
    return b


def flips(b, x, y, c):
    if b[y * 8 + x] != 0:
        return []
    out = []
    for dx, dy in DIRS:
        run = []
        cx, cy = x + dx, y + dy
        while 0 <= cx < 8 and 0 <= cy < 8 and b[cy * 8 + cx] == -c:
            run.append((cx, cy))
            cx, cy = cx + dx, cy + dy
        if run and 0 <= cx < 8 and 0 <= cy < 8 and b[cy * 8 + cx] == c:
            out.extend(run)
    return out


def legal_moves(b, c):
    res = {}
    for y in range(8):
        for x in range(8):
            f = flips(b, x, y, c)
            if f:
                res[(x, y)] = f
    return res


def apply_move(b, x, y, c, f):
    b[y * 8 + x] = c
    for fx, fy in f:
        b[fy * 8 + fx] = c


def sq(x, y):
    return "%s%d" % (COLS[x], y + 1)


def count(b, c):
    return sum(1 for v in b if v == c)


def cname(c):
    return "BLACK" if c == 1 else "WHITE"


# ---- connection --------------------------------------------------------------
class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.eof = False
        self.last_send = time.monotonic()

    def has_buffered_line(self):
        return b"\n" in self.buf

    def _fill(self, what):
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise Violation("no data from the server for %d s while %s" % (TIMEOUT_S, what))
        except ConnectionResetError:
            print("# connection reset by server")
            data = b""
        if not data:
            self.eof = True
        self.buf += data
        return len(data)

    def read_tokens(self, what):
        """Next non-empty line as (text, tokens), or None on EOF at a line boundary."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                if i > MAXLINE:
                    raise Violation("line longer than %d bytes while %s" % (MAXLINE, what))
                raw, self.buf = self.buf[:i], self.buf[i + 1:]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise Violation("line %r is not UTF-8 while %s" % (raw[:60], what))
                toks = [t for t in re.split(r"[ \t]+", text) if t != ""]
                if not toks:
                    continue                      # empty lines are ignored
                print("< " + text)
                return text, toks
            if len(self.buf) > MAXLINE:
                raise Violation("line longer than %d bytes while %s" % (MAXLINE, what))
            if self.eof or self._fill(what) == 0:
                if self.buf.strip(b" \t"):
                    raise Violation("connection closed in the middle of a line (%r, no newline) while %s"
                                    % (self.buf[:60], what))
                return None

    def send(self, text):
        print("> " + text, flush=True)
        self.last_send = time.monotonic()
        try:
            self.sock.sendall((text + "\n").encode("ascii"))
        except (BrokenPipeError, ConnectionResetError) as e:
            print("# write refused (%s): server has closed" % e)

    def wait_readable(self, seconds):
        """Sleep up to `seconds`, returning early (True) if the server sends something."""
        if self.has_buffered_line() or self.eof:
            return True
        r, _, _ = select.select([self.sock], [], [], seconds)
        return bool(r)


# ---- one game -------------------------------------------------------------------
class Game:
    def __init__(self, client, colour, opponent, ms):
        self.c = client
        self.me = colour
        self.opp = -colour
        self.opponent = opponent
        self.board = start_board()
        self.to_move = 1
        self.remaining = ms
        self.own_moves = 0
        self.awaiting = None          # 'ack' | 'end' | 'move' | 'mine' (sleep interrupted)
        self.last_was_pass = False    # the last move played (either side) was PASS
        self.my_last_pass = False     # my last move was PASS
        self.prompt_time = None       # when I saw the line giving me the move
        self.bound_start = None       # the server's clock for my move started after this
        self.think_ms = 0.0
        self.fault_sent = None        # expected END reason after a deliberate fault
        self.slow = False
        self.slept = 0
        self.opp_gave_up = False

    # -- my move --
    def my_turn(self, prompt_time):
        cl = self.c
        self.prompt_time = prompt_time
        self.bound_start = cl.conn.last_send
        self.own_moves += 1
        legal = legal_moves(self.board, self.me)
        fault = cl.fault
        at = self.own_moves >= cl.fault_at
        if fault == "slow" and at:
            self.slow = True
        if self.slow:
            self.slept += 1
            print("# FAULT=slow: sleeping %d ms" % cl.fault_sleep_ms)
            if cl.conn.wait_readable(cl.fault_sleep_ms / 1000.0):
                print("# server spoke while I was sleeping")
                self.awaiting = "mine"
                return
        if fault and fault != "slow" and at and self.fault_sent is None:
            if fault == "close":
                print("# FAULT=close: closing the connection at own move %d" % self.own_moves)
                cl.conn.sock.close()
                sys.exit(0)
            if fault == "illegal":
                occupied = [(x, y) for y in range(8) for x in range(8) if self.board[y * 8 + x] != 0]
                x, y = cl.rng.choice(occupied)
                cl.conn.send("MOVE " + sq(x, y))
            elif fault == "badpass" and legal:
                cl.conn.send("MOVE PASS")
            elif fault == "garbage":
                cl.conn.send("HELLO WORLD")
            elif fault == "giveup":
                cl.conn.send("MOVE GIVEUP")
            if fault != "badpass" or legal:
                print("# FAULT=%s sent at own move %d" % (fault, self.own_moves))
                self.fault_sent = FAULT_REASON[fault]
                self.awaiting = "end"
                return
        if not legal:
            ends = self.last_was_pass
            cl.conn.send("MOVE PASS")
            self.think_ms = (cl.conn.last_send - prompt_time) * 1000.0  # up to just before sendall: a lower bound
            self.last_was_pass = True
            self.my_last_pass = True
            self.awaiting = "end" if ends else "ack"
            return
        corners = [m for m in legal if m in CORNERS]
        pool = corners or list(legal)
        most = max(len(legal[m]) for m in pool)
        best = sorted(m for m in pool if len(legal[m]) == most)
        x, y = cl.rng.choice(best)
        apply_move(self.board, x, y, self.me, legal[(x, y)])
        cl.conn.send("MOVE " + sq(x, y))
        self.think_ms = (cl.conn.last_send - prompt_time) * 1000.0  # up to just before sendall: a lower bound
        self.last_was_pass = False
        self.my_last_pass = False
        self.awaiting = "ack"

    # -- server lines --
    def on_ack(self, text, toks):
        if self.awaiting != "ack":
            if self.fault_sent:
                raise Violation("got %r after my deliberate fault (expected END LOSE .. %s)" % (text, self.fault_sent))
            if self.awaiting == "end":
                raise Violation("got ACK for my PASS answering a PASS: that must end the game (END .. DOUBLE_PASS, no ACK)")
            raise Violation("unexpected ACK %r: no move of mine is waiting for one" % text)
        if len(toks) != 2 or not INT_RE.match(toks[1]):
            raise Violation("bad ACK line %r (expected `ACK <ms>` with integer ms)" % text)
        ms = int(toks[1])
        if ms > self.remaining:
            raise Violation("ACK %d is above my previous remaining time %d" % (ms, self.remaining))
        if ms > self.remaining - self.think_ms + TOL_MS:
            raise Violation("ACK %d: only %d ms charged, but I alone spent %.0f ms on the move (previous remaining %d)"
                            % (ms, self.remaining - ms, self.think_ms, self.remaining))
        self.remaining = ms
        self.to_move = self.opp
        self.awaiting = "move"

    def on_move(self, text, toks, now):
        if self.awaiting != "move":
            if self.fault_sent:
                raise Violation("got %r after my deliberate fault (expected END LOSE .. %s)" % (text, self.fault_sent))
            if self.awaiting == "ack":
                raise Violation("got opponent's %r but expected ACK for my move" % text)
            raise Violation("got opponent's %r while it is not the opponent's turn" % text)
        if self.opp_gave_up:
            raise Violation("got %r after the opponent's MOVE GIVEUP (expected END WIN .. GIVEUP)" % text)
        if len(toks) != 2:
            raise Violation("bad MOVE line %r (expected `MOVE <mv>`)" % text)
        mv = toks[1]
        legal = legal_moves(self.board, self.opp)
        if mv == "PASS":
            if legal:
                raise Violation("opponent's PASS relayed although it has legal moves (%s)"
                                % " ".join(sq(x, y) for (x, y) in sorted(legal, key=lambda m: (m[1], m[0]))))
            if self.last_was_pass:
                raise Violation("second consecutive PASS relayed as MOVE: the server must end the game with END .. DOUBLE_PASS")
            self.last_was_pass = True
        elif mv == "GIVEUP":
            print("# opponent gave up")
            self.opp_gave_up = True
            return
        elif SQ_RE.match(mv):
            if mv != mv.upper():
                raise Violation("relayed move %r is not upper case (the server must send upper case)" % mv)
            x, y = COLS.index(mv[0]), int(mv[1]) - 1
            if (x, y) not in legal:
                raise Violation("opponent's move %s is illegal on my board (%s)"
                                % (mv, "occupied" if self.board[y * 8 + x] else "flips nothing"))
            apply_move(self.board, x, y, self.opp, legal[(x, y)])
            self.last_was_pass = False
        else:
            raise Violation("bad relayed move %r (expected [A-H][1-8], PASS or GIVEUP)" % mv)
        self.to_move = self.me
        self.my_turn(now)

    def on_end(self, text, toks, now):
        cl = self.c
        if len(toks) != 5:
            raise Violation("bad END line %r (expected `END <WIN|LOSE|TIE> <mine> <theirs> <reason>`)" % text)
        _, r, mine, theirs, reason = toks
        if r not in ("WIN", "LOSE", "TIE"):
            raise Violation("bad END result %r (WIN, LOSE or TIE)" % r)
        if not INT_RE.match(mine) or not INT_RE.match(theirs):
            raise Violation("END stone counts %r %r are not integers" % (mine, theirs))
        mine, theirs = int(mine), int(theirs)
        if mine < 0 or theirs < 0 or mine + theirs > 64:
            raise Violation("END stone counts %d %d are impossible on an 8x8 board" % (mine, theirs))
        if reason not in REASONS:
            raise Violation("END reason %r is not one of %s" % (reason, " ".join(REASONS)))
        if r == "TIE" and reason != "DOUBLE_PASS":
            raise Violation("END TIE with reason %s: only a normal (DOUBLE_PASS) end can be a tie" % reason)
        if self.opp_gave_up and (r, reason) != ("WIN", "GIVEUP"):
            raise Violation("after the opponent's MOVE GIVEUP got %r (expected END WIN .. GIVEUP)" % text)
        my_clock = self.awaiting in ("ack", "end", "mine")
        if reason == "TIMEOUT":
            if r == "WIN" and self.awaiting != "move":
                raise Violation("END WIN .. TIMEOUT while it was my move (the opponent's clock was not running)")
            if r == "LOSE":
                if not my_clock:
                    raise Violation("END LOSE .. TIMEOUT while the opponent was to move (my clock was not running)")
                most = (now - self.bound_start) * 1000.0
                if self.remaining - most > TOL_MS:
                    raise Violation("END LOSE .. TIMEOUT but at most %.0f ms can have been charged for this move "
                                    "and %d ms remained" % (most, self.remaining))
        if self.fault_sent:
            if (r, reason) != ("LOSE", self.fault_sent):
                raise Violation("after my deliberate FAULT=%s expected END LOSE .. %s, got %r"
                                % (cl.fault, self.fault_sent, text))
            print("# FAULT=%s answered as expected" % cl.fault)
            return
        if self.slow and (r, reason) == ("LOSE", "TIMEOUT"):
            print("# FAULT=slow answered as expected")
            return
        if reason == "DOUBLE_PASS":
            opp_blocked = not legal_moves(self.board, self.opp)
            me_blocked = not legal_moves(self.board, self.me)
            if self.awaiting == "end":
                pass                                   # my PASS answered the opponent's PASS
            elif self.awaiting == "move" and self.my_last_pass and opp_blocked:
                pass                                   # opponent had to pass after my PASS
            else:
                raise Violation("END .. DOUBLE_PASS without two consecutive passes (my last move %s, opponent %s)"
                                % ("PASS" if self.my_last_pass else "a stone",
                                   "has no move" if opp_blocked else "still has moves"))
            if not (opp_blocked and me_blocked):
                raise Violation("END .. DOUBLE_PASS but a side still has a legal move on my board")
            bm, bt = count(self.board, self.me), count(self.board, self.opp)
            if (mine, theirs) != (bm, bt):
                raise Violation("END counts %d %d differ from my board's %d %d" % (mine, theirs, bm, bt))
            want = "WIN" if bm > bt else "LOSE" if bm < bt else "TIE"
            if r != want:
                raise Violation("END %s but the counts %d %d mean %s" % (r, mine, theirs, want))
        elif reason in ("INVALID_MOVE", "INVALID_COMMAND", "GIVEUP"):
            if r != "WIN":
                raise Violation("END %s .. %s although I made no fault" % (r, reason))
        if cl.fault == "slow" and self.slow:
            cl.not_exercised.append("FAULT=slow: slept before %d moves but the game ended with %r (last ACK %d ms); "
                                    "raise FAULT_SLEEP_MS or lower the time" % (self.slept, text, self.remaining))
        elif cl.fault:
            cl.not_exercised.append("FAULT=%s: the game ended (%r) before own move %d with the fault"
                                    % (cl.fault, text, cl.fault_at))


# ---- session ---------------------------------------------------------------------
class Client:
    def __init__(self, conn, name, rng, fault, fault_at, fault_sleep_ms):
        self.conn = conn
        self.name = name
        self.rng = rng
        self.fault = fault
        self.fault_at = fault_at
        self.fault_sleep_ms = fault_sleep_ms
        self.not_exercised = []
        self.games = 0

    def start_game(self, text, toks):
        if len(toks) != 4 or toks[1] not in ("BLACK", "WHITE") or not INT_RE.match(toks[3]):
            raise Violation("bad START line %r (expected `START <BLACK|WHITE> <opponent> <ms>`)" % text)
        self.games += 1
        colour = 1 if toks[1] == "BLACK" else -1
        g = Game(self, colour, toks[2], int(toks[3]))
        print("# game %d: I am %s against %s with %s ms" % (self.games, cname(colour), toks[2], toks[3]))
        if colour == 1:
            g.my_turn(time.monotonic())
        else:
            g.awaiting = "move"
        return g

    def check_bye(self, text, toks):
        rest = toks[1:]
        if not rest or len(rest) % 4 != 0:
            raise Violation("bad BYE line %r (expected `BYE (<name> <score> <wins> <losses>)+`)" % text)
        for i in range(0, len(rest), 4):
            name, score, wins, losses = rest[i:i + 4]
            if not (INT_RE.match(score) and INT_RE.match(wins) and INT_RE.match(losses)):
                raise Violation("BYE entry %r: score, wins and losses must be integers" % " ".join(rest[i:i + 4]))
            if int(wins) < 0 or int(losses) < 0:
                raise Violation("BYE entry %r has a negative win/loss count" % " ".join(rest[i:i + 4]))

    def run(self):
        self.conn.send("OPEN " + self.name)
        game = None
        state = "open"                    # open | game | ended
        while True:
            what = {"open": "waiting for START", "game": "playing", "ended": "waiting for BYE or START"}[state]
            got = self.conn.read_tokens(what)
            now = time.monotonic()
            if got is None:
                if state == "open":
                    raise Violation("connection closed before START")
                if state == "game":
                    raise Violation("connection closed during the game without END")
                raise Violation("connection closed after END without BYE")
            text, toks = got
            kw = toks[0]
            if kw == "START":
                if state == "game":
                    raise Violation("START during a game (no END)")
                game = self.start_game(text, toks)
                state = "game"
            elif kw == "BYE":
                if state != "ended":
                    raise Violation("BYE %s" % ("before any START" if state == "open" else "during a game (no END)"))
                self.check_bye(text, toks)
                more = self.conn.read_tokens("waiting for the server to close after BYE")
                if more is not None:
                    raise Violation("line %r after BYE (the server closes after BYE)" % more[0])
                print("# closed after BYE, %d game(s)" % self.games)
                return
            elif state != "game":
                raise Violation("expected %s, got %r" % ("START" if state == "open" else "BYE or START", text))
            elif kw == "ACK":
                game.on_ack(text, toks)
            elif kw == "MOVE":
                game.on_move(text, toks, now)
            elif kw == "END":
                game.on_end(text, toks, now)
                state = "ended"
            else:
                raise Violation("unknown or misplaced line %r during the game" % text)


def main():
    ap = argparse.ArgumentParser(description="taikai othello-move test client")
    ap.add_argument("-H", dest="host", required=True)
    ap.add_argument("-p", dest="port", type=int, required=True)
    ap.add_argument("-n", dest="name", required=True)
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    if not args.name or any(ch in args.name for ch in " \t\r\n"):
        print("othello_move: error: the name must be one token", file=sys.stderr)
        return 1
    fault = os.environ.get("FAULT") or None
    if fault is not None and fault not in FAULT_REASON:
        print("othello_move: error: FAULT must be one of %s" % " ".join(FAULT_REASON), file=sys.stderr)
        return 1
    try:
        fault_at = int(os.environ.get("FAULT_AT") or 3)
        fault_sleep_ms = int(os.environ.get("FAULT_SLEEP_MS") or 2000)
    except ValueError:
        print("othello_move: error: FAULT_AT and FAULT_SLEEP_MS must be integers", file=sys.stderr)
        return 1
    seed = os.environ.get("TAIKAI_SEED") or str(random.SystemRandom().randrange(1 << 30))
    rng = random.Random(seed)
    try:
        sock = socket.create_connection((args.host, args.port), timeout=TIMEOUT_S)
    except OSError as e:
        print("othello_move: error: cannot connect to %s port %d: %s" % (args.host, args.port, e), file=sys.stderr)
        return 1
    sock.settimeout(TIMEOUT_S)
    print("# connected to %s:%d as %s, seed=%s%s" % (args.host, args.port, args.name, seed,
                                                      ", FAULT=%s at %d" % (fault, fault_at) if fault else ""))
    client = Client(Conn(sock), args.name, rng, fault, fault_at, fault_sleep_ms)
    try:
        client.run()
    except Violation as v:
        print("othello_move: PROTOCOL VIOLATION (game %d): %s" % (client.games, v), file=sys.stderr)
        return 2
    except OSError as e:
        print("othello_move: error: %s" % e, file=sys.stderr)
        return 1
    finally:
        sock.close()
    if client.not_exercised:
        print("othello_move: fault not exercised (not a server error): %s" % client.not_exercised[0], file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
