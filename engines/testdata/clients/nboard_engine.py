#!/usr/bin/env python3
"""nboard_engine.py -- an Othello engine for taikai's tests, written from the
NBoard protocol text (version 2, NTest's instructions/Protocol.htm) and
PROTOCOLS.md section 6 alone.

Start:  nboard_engine.py      (commands on stdin, answers on stdout)
Env:    TAIKAI_SEED  seed for its choice among legal moves
        STYLE        "edax" answers as Edax does: "=== d6 -1.00 0.0" (lower
                     case, eval and time after spaces) and an error line for
                     "nboard 2"; default "=== D6/0.00/0.01"
        THINK        "ntest": print thinking output at NTest's volume: a 60-line
                     banner at start and 24 lines a move (status, search,
                     nodestats) before its === line
        DEPTH_MS     search to the depth it is set, whatever its clock, as Edax
                     and NTest do: a move takes DEPTH_MS * 2^(depth-12) ms
                     (DEPTH_MS at depth 12, twice as long a ply deeper)
        STARTUP_MS   sleep this long before reading its input (loading a book
                     or evaluation files, as NTest does)
        FAULT        misbehave from its own move number FAULT_AT (default 3):
                       silent   never answer go          -> timeout
                       slow     sleep FAULT_SLEEP_MS first (default 3000)
                       crash    exit 3 instead of moving  -> crash
                       memory   allocate 2 GiB first   -> memory (in the sandbox)
                       illegal  answer an occupied square -> illegal
                       garbage  print junk lines, then its move

Checks (any failure: PROTOCOL VIOLATION on stderr, exit 2):
 - "nboard 2" first; "set depth <int>" before the first go;
 - "set game <GGF>": one game (;GM[Othello]...;) on the line, BO the start
   position (8 and 64 cells, black to move), every B[]/W[] move legal in
   turn (PA only when the side has no move), TI a time if present;
 - "ping <n>" answered "pong <n>" at once, n increasing;
 - "go" only after set depth and set game, when the side to move has a legal
   move; it answers with a legal move and does not play it;
 - the input ends (EOF) or says quit: exit 0.
"""
import os
import random
import re
import sys
import time

DIRS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
STYLE = os.environ.get("STYLE", "")
THINK = os.environ.get("THINK", "")
FAULT = os.environ.get("FAULT", "")
FAULT_AT = int(os.environ.get("FAULT_AT", "3"))
rng = random.Random(os.environ.get("TAIKAI_SEED"))


def fail(msg):
    sys.stderr.write("PROTOCOL VIOLATION: %s\n" % msg)
    sys.exit(2)


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def flips(board, x, y, me):
    out = []
    for dx, dy in DIRS:
        run, cx, cy = [], x + dx, y + dy
        while 0 <= cx < 8 and 0 <= cy < 8 and board[cy][cx] == -me:
            run.append((cx, cy))
            cx, cy = cx + dx, cy + dy
        if run and 0 <= cx < 8 and 0 <= cy < 8 and board[cy][cx] == me:
            out += run
    return out


def legal(board, me):
    return [(x, y) for y in range(8) for x in range(8) if board[y][x] == 0 and flips(board, x, y, me)]


def parse_game(ggf):
    m = re.fullmatch(r"\(;(.*);\)", ggf.strip())
    if not m:
        fail("set game: not one (; ... ;) game: %r" % ggf[:80])
    body = m.group(1)
    props = re.findall(r"([A-Z]+)\[([^\]]*)\]", body)
    if re.sub(r"([A-Z]+)\[([^\]]*)\]", "", body).strip():
        fail("set game: text outside properties")
    board, me, have_bo = None, None, False
    for key, val in props:
        if key == "GM" and val.lower() != "othello":
            fail("GM[%s]" % val)
        if key == "TI" and not re.fullmatch(r"\d+(:\d+){0,2}(/.*)?", val):
            fail("TI[%s]" % val)
        if key == "BO":
            f = val.split()
            cells = "".join(f[1:-1])
            if f[0] != "8" or len(cells) != 64 or f[-1] not in ("*", "O"):
                fail("BO[%s]" % val)
            board = [[{"-": 0, "*": 1, "O": -1}[cells[8 * y + x]] for x in range(8)] for y in range(8)]
            if cells != "-" * 27 + "O*" + "-" * 6 + "*O" + "-" * 27 or f[-1] != "*":
                fail("BO is not the start position with black to move: %r" % val)
            me, have_bo = 1, True
        if key in ("B", "W"):
            if not have_bo:
                fail("a move before BO")
            side = 1 if key == "B" else -1
            if side != me:
                fail("%s[%s] out of turn" % (key, val))
            mv = val.split("/")[0].strip().lower()
            if mv == "pa":
                if legal(board, me):
                    fail("PA while %s has a move" % key)
            else:
                x, y = ord(mv[0]) - ord("a"), int(mv[1]) - 1
                fl = flips(board, x, y, me) if board[y][x] == 0 else []
                if not fl:
                    fail("%s[%s] illegal" % (key, val))
                board[y][x] = me
                for cx, cy in fl:
                    board[cy][cx] = me
            me = -me
    if not have_bo:
        fail("set game without BO")
    return board, me


def main():
    time.sleep(int(os.environ.get("STARTUP_MS", "0")) / 1000)
    if THINK == "ntest":
        for i in range(60):
            say("status NTest banner line %d: loading evaluation files" % (i + 1))
    first = True
    depth = None
    board = None
    me = None
    last_ping = None
    own = 0
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        f = line.split()
        if first:
            if f != ["nboard", "2"]:
                fail("first line %r, want nboard 2" % line)
            first = False
            if STYLE == "edax":
                say("Error: unknown command nboard")  # as Edax prints, and goes on
            say("set myname py-nboard")
            continue
        if f[0] == "set" and len(f) >= 3 and f[1] == "depth":
            try:
                depth = int(f[2])
            except ValueError:
                fail("set depth %r" % f[2])
        elif f[0] == "set" and len(f) >= 3 and f[1] == "game":
            board, me = parse_game(line.split("game", 1)[1])
        elif f[0] == "ping":
            n = int(f[1])
            if last_ping is not None and n <= last_ping:
                fail("ping %d after ping %d" % (n, last_ping))
            last_ping = n
            say("pong %d" % n)
        elif f[0] == "go":
            if depth is None or board is None:
                fail("go before set depth and set game")
            moves = legal(board, me)
            if not moves:
                fail("go while the side to move has no legal move")
            own += 1
            if FAULT and own >= FAULT_AT:
                if FAULT == "silent":
                    continue
                if FAULT == "slow":
                    time.sleep(int(os.environ.get("FAULT_SLEEP_MS", "3000")) / 1000)
                if FAULT == "crash":
                    sys.exit(3)
                if FAULT == "memory":
                    keep = [b"\x01" * (64 << 20) for _ in range(32)]  # 2 GiB, every page written
                    sys.stderr.write("allocated %d MiB\n" % (len(keep) * 64))
                if FAULT == "illegal":
                    taken = [(x, y) for y in range(8) for x in range(8) if board[y][x]]
                    x, y = taken[0]
                    say("=== %s%d" % ("ABCDEFGH"[x], y + 1))
                    continue
                if FAULT == "garbage":
                    say("HELLO WORLD")
                    say("status thinking")
                    say("nodestats 1234 0.01")
            if os.environ.get("DEPTH_MS"):
                ms = int(os.environ["DEPTH_MS"]) * 2.0 ** (depth - 12)
                time.sleep(min(ms, 3600 * 1000) / 1000)
            if THINK == "ntest":
                for d in range(8):
                    say("status thinking depth %d" % d)
                    say("search d6 %d.00 0 %d@100%%" % (d, d))
                    say("nodestats %d 0.%02d" % (1000 * (d + 1), d))
            x, y = rng.choice(moves)
            sq = "abcdefgh"[x] + str(y + 1)
            if STYLE == "edax":
                say("=== %s 0.00 0.0" % sq)
            else:
                say("=== %s/0.00/0.01" % sq.upper())
        elif f[0] == "quit":
            return 0
        # anything else: "If you get a command you don't understand you should ignore the entire line."
    return 0


if __name__ == "__main__":
    sys.exit(main())
