#!/usr/bin/env python3
"""checkers_board.py -- taikai test client for `checkers-board`, written from
PROTOCOLS.md section 4 alone (squares, rules, score, lines).

Start:  checkers_board.py HOST PORT
Env:    TAIKAI_SEED  seed for its choice among moves (default: random)
        FAULT        misbehave on purpose from own move number FAULT_AT (default 3):
                       silent     never answer                  -> END LOSE .. timeout
                       garbage    `HELLO WORLD`, again on every ERROR 4
                                                                -> END LOSE .. illegal
                       illegal    a path that is not a move (a man backwards or
                                  onto a piece), again on every ERROR 2
                                                                -> END LOSE .. illegal
                       nocapture  at the first turn from FAULT_AT where a capture is
                                  due and a plain move exists, the plain move,
                                  again on every ERROR 5        -> END LOSE .. illegal
                       drop       close the socket and exit 0 (no END)
                       crash      exit 3 before connecting (no END)

Plays: NICK py-checkers, then the capture that takes the most pieces (ties by
the seeded random), else a random plain move.

Checks (any failure: one line on stderr with PROTOCOL VIOLATION, exit 2):
 - `START <1|-1> <seed|english>` first and once; the first BOARD is the start
   position (black men 1-12, white men 21-32);
 - every `LAST <path>` is a legal move of the side to move on its own board,
   written with `-` for a plain move and `x` for a capture, and is its own
   move when it just moved; every BOARD (32 values in -2..2) equals its own
   board after the LASTs;
 - every `TURN <c>` names the side to move on its own board, which has a move;
   no TURN when the side to move has none;
 - no ERROR unless it misbehaved on purpose, and then the ERROR number for it;
 - `END <WIN|LOSE|DRAW> <own> <opp> <reason>`: without a fault the reason is
   normal, its board has no move for the side to move (or, english, 80 plies
   without a capture or a man moving), own/opp are the scores (seed: the
   evaluation of section 4; english: pieces) and the verdict follows the rule;
   after a fault it is LOSE with the fault's reason; the server closes after.
Exit 0: as expected; 2: protocol violation; 3: the fault never took effect.
"""
import os
import random
import socket
import sys

DIRS = [(-1, -1), (1, -1), (-1, 1), (1, 1)]


def fail(msg):
    sys.stderr.write("PROTOCOL VIOLATION: %s\n" % msg)
    sys.exit(2)


def sq_xy(n):
    y = (n - 1) // 4
    return 2 * ((n - 1) % 4) + (1 if y % 2 == 0 else 0), y


def xy_sq(x, y):
    return y * 4 + x // 2 + 1


class Board:
    def __init__(self, rule):
        self.rule = rule
        self.cells = {}  # (x, y) -> 1, 2, -1, -2
        for n in range(1, 13):
            self.cells[sq_xy(n)] = 1
        for n in range(21, 33):
            self.cells[sq_xy(n)] = -1
        self.turn = 1
        self.quiet = 0

    def values(self):
        return [self.cells.get(sq_xy(n), 0) for n in range(1, 33)]

    def forward(self, v):
        if abs(v) == 2:
            return DIRS
        return DIRS[2:] if v > 0 else DIRS[:2]

    def moves(self):
        """Every legal move as a list of squares (start first) and a capture flag."""
        caps = []
        for (x, y), v in list(self.cells.items()):
            if v * self.turn > 0:
                self._jumps(x, y, v, [xy_sq(x, y)], set(), (x, y), caps)
        if caps:
            return [(p, True) for p in caps]
        return self.plain()

    def plain(self):
        """The plain moves of the side to move, as if capturing were not mandatory."""
        out = []
        for (x, y), v in self.cells.items():
            if v * self.turn <= 0:
                continue
            for dx, dy in self.forward(v):
                t = (x + dx, y + dy)
                if 0 <= t[0] < 8 and 0 <= t[1] < 8 and t not in self.cells:
                    out.append(([xy_sq(x, y), xy_sq(*t)], False))
        return out

    def _jumps(self, x, y, v, path, taken, start, out):
        found = False
        for dx, dy in self.forward(v):
            over, land = (x + dx, y + dy), (x + 2 * dx, y + 2 * dy)
            if not (0 <= land[0] < 8 and 0 <= land[1] < 8):
                continue
            if self.cells.get(over, 0) * self.turn >= 0 or over in taken:
                continue
            if land in self.cells and land != start:
                continue
            found = True
            far = 7 if v > 0 else 0
            if self.rule == "english" and abs(v) == 1 and land[1] == far:
                out.append(path + [xy_sq(*land)])  # crowned: the move ends
                continue
            self._jumps(land[0], land[1], v, path + [xy_sq(*land)], taken | {over}, start, out)
        if not found and len(path) > 1:
            out.append(path)

    def play(self, path):
        legal = self.moves()
        if (path, True) not in legal and (path, False) not in legal:
            fail("move %s is not legal here (legal: %s)" % (path, [p for p, _ in legal]))
        capture = (path, True) in legal
        x, y = sq_xy(path[0])
        v = self.cells.pop((x, y))
        moved_man = abs(v) == 1
        for a, b in zip(path, path[1:]):
            (ax, ay), (bx, by) = sq_xy(a), sq_xy(b)
            if abs(bx - ax) == 2:
                self.cells.pop(((ax + bx) // 2, (ay + by) // 2))
        ex, ey = sq_xy(path[-1])
        if self.rule == "english" and abs(v) == 1 and ey == (7 if v > 0 else 0):
            v *= 2
        self.cells[(ex, ey)] = v
        self.quiet = 0 if capture or moved_man else self.quiet + 1
        self.turn = -self.turn
        return capture

    def score(self, side):
        """Section 4's score of side (1 black, -1 white)."""
        total = 0
        for (x, y), v in self.cells.items():
            if v * side <= 0:
                continue
            back = 0 if side > 0 else 7
            s = 20 + 5 * abs(y - back)
            behind = -1 if side > 0 else 1
            for dx in (-1, 1):
                if self.cells.get((x + dx, y + behind), 0) * side > 0:
                    s += 10
            threatened = False
            for dx, dy in DIRS:
                a, land = (x + dx, y + dy), (x - dx, y - dy)
                av = self.cells.get(a, 0)
                if av * side >= 0 or not (0 <= land[0] < 8 and 0 <= land[1] < 8) or land in self.cells:
                    continue
                jump_dy = -dy  # the attacker jumps from a over (x, y) to land
                if abs(av) == 2 or (av > 0 and jump_dy > 0) or (av < 0 and jump_dy < 0):
                    threatened = True
            if threatened:
                s -= 10
            if y == 7 - back:
                s += 50
            total += s
        return total


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: checkers_board.py HOST PORT\n")
        return 1
    fault = os.environ.get("FAULT", "")
    fault_at = int(os.environ.get("FAULT_AT", "3"))
    rng = random.Random(os.environ.get("TAIKAI_SEED"))
    if fault == "crash":
        return 3
    sock = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)
    sock.sendall(b"NICK py-checkers\n")
    f = sock.makefile("rb")
    me = None
    board = None
    boards = 0
    own_moves = 0
    sent = None  # our last path, until its LAST
    faulted = None  # the ERROR number the fault expects, once it took effect
    errors = {"garbage": "4", "illegal": "2", "nocapture": "5"}

    def send(line):
        sock.sendall((line + "\n").encode())

    def misbehave(kind):
        nonlocal faulted
        if kind == "garbage":
            send("HELLO WORLD")
        elif kind == "illegal":
            # A man backwards, or onto a piece: never legal.
            for (x, y), v in board.cells.items():
                if v * me == 1:
                    back = (x + 1, y - me) if 0 <= x + 1 < 8 else (x - 1, y - me)
                    if 0 <= back[1] < 8:
                        send("MOVE %d-%d" % (xy_sq(x, y), xy_sq(*back)))
                        break
            else:
                send("MOVE 1-5")
        elif kind == "nocapture":
            send("MOVE " + "-".join(map(str, board.plain()[0][0])))
        faulted = errors[kind]

    while True:
        raw = f.readline()
        if not raw:
            fail("connection closed before END")
        if len(raw) > 4096 or not raw.endswith(b"\n"):
            fail("bad line %r" % raw[:80])
        tok = raw.decode().split()
        if not tok:
            continue
        cmd = tok[0]
        if cmd == "START":
            if me is not None or len(tok) != 3 or tok[1] not in ("1", "-1") or tok[2] not in ("seed", "english"):
                fail("bad START %r" % raw)
            me, board = int(tok[1]), Board(tok[2])
        elif cmd == "LAST":
            if board is None or len(tok) != 2:
                fail("bad LAST %r" % raw)
            text = tok[1]
            capture = "x" in text
            path = [int(t) for t in text.replace("x", "-").split("-")]
            mover = board.turn
            was_capture = board.play(path)
            if capture != was_capture or ("-" in text and "x" in text):
                fail("LAST %s written with the wrong separator" % text)
            if mover == me and sent is not None and path != sent:
                fail("LAST %s is not our move %s" % (text, sent))
            if mover == me:
                sent = None
        elif cmd == "BOARD":
            if board is None or len(tok) != 33:
                fail("bad BOARD %r" % raw)
            vals = [int(t) for t in tok[1:]]
            if any(v < -2 or v > 2 for v in vals):
                fail("BOARD value out of range %r" % raw)
            if vals != board.values():
                fail("BOARD %s differs from ours %s" % (vals, board.values()))
            boards += 1
        elif cmd == "TURN":
            if len(tok) != 2 or int(tok[1]) != board.turn:
                fail("TURN %r but %d is to move" % (raw, board.turn))
            if not board.moves():
                fail("TURN although the side to move has no move")
            if board.turn != me:
                continue
            own_moves += 1
            if fault and own_moves >= fault_at and faulted is None:
                if fault == "silent":
                    faulted = "timeout"
                    continue
                if fault == "drop":
                    sock.close()
                    return 0
                if fault == "nocapture":
                    legal = board.moves()
                    if not (legal[0][1] and board.plain()):
                        pass  # wait for a turn where a capture is due and a plain move exists
                    else:
                        misbehave(fault)
                        continue
                else:
                    misbehave(fault)
                    continue
            if faulted == "timeout":
                fail("TURN after we timed out")
            legal = board.moves()
            most = max(len(p) for p, _ in legal)
            best = [p for p, c in legal if not c or len(p) == most]
            path = rng.choice(best)
            sep = "x" if legal[0][1] else "-"
            sent = path
            send("MOVE " + sep.join(map(str, path)))
        elif cmd == "ERROR":
            if len(tok) != 2 or faulted is None or tok[1] != faulted:
                fail("ERROR %r (fault %r)" % (raw, fault))
            misbehave(fault)
        elif cmd == "SAY" or cmd == "CLOSE":
            pass
        elif cmd == "END":
            if len(tok) != 5 or tok[1] not in ("WIN", "LOSE", "DRAW"):
                fail("bad END %r" % raw)
            verdict, own, opp, reason = tok[1], int(tok[2]), int(tok[3]), tok[4]
            if fault:
                want = {"silent": "timeout", "garbage": "illegal", "illegal": "illegal", "nocapture": "illegal"}[fault]
                if faulted is None:
                    sys.stderr.write("the fault never took effect: %r\n" % raw)
                    return 3
                if verdict != "LOSE" or reason != want:
                    fail("END %r after fault %s, want LOSE %s" % (raw, fault, want))
            else:
                if reason != "normal":
                    fail("END %r without a fault" % raw)
                drawn = board.rule == "english" and board.quiet >= 80
                if board.moves() and not drawn:
                    fail("END normal while %d has a move" % board.turn)
                if board.rule == "seed":
                    mine, theirs = board.score(me), board.score(-me)
                    want = "WIN" if mine > theirs else "LOSE" if mine < theirs else "DRAW"
                else:
                    mine = sum(1 for v in board.cells.values() if v * me > 0)
                    theirs = sum(1 for v in board.cells.values() if v * me < 0)
                    want = "DRAW" if drawn and board.moves() else ("LOSE" if board.turn == me else "WIN")
                if (own, opp) != (mine, theirs) or verdict != want:
                    fail("END %r, want %s %d %d" % (raw, want, mine, theirs))
            try:
                after = f.readline()
            except ConnectionResetError:
                after = b""  # the server closed with our last garbage unread
            if after:
                fail("a line after END: %r" % after)
            sys.stderr.write("game over: %s after %d boards\n" % (raw.decode().strip(), boards))
            return 0
        else:
            fail("unknown line %r" % raw)


if __name__ == "__main__":
    sys.exit(main())
