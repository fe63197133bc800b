#!/usr/bin/env python3
"""records.py -- an independent reader of GGF (Othello) and PSQ (Gomoku) files,
written from the formats' descriptions (GGS's GGF page; Piskvork's PSQ as
Piskvork writes it), not from taikai's code. It replays every game with its
own rules and prints one JSON object per game:

  GGF: {"black", "white", "re": the RE text, "moves": n, "black_discs", "white_discs"}
  PSQ: {"size", "black", "white", "code", "moves": n, "five": "black"|"white"|null}

Any malformed record, or a move its rules refuse, exits 2 with a message.
Usage: records.py ggf|psq FILE
"""
import json
import re
import sys


def fail(msg):
    sys.stderr.write("records.py: %s\n" % msg)
    sys.exit(2)


# ---- GGF / Othello ----
DIRS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


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


def has_move(board, me):
    return any(board[y][x] == 0 and flips(board, x, y, me) for y in range(8) for x in range(8))


def ggf(text):
    games = re.findall(r"\(;(.*?);\)", text, re.S)
    if not games:
        fail("no (; ... ;) game")
    for g in games:
        props = re.findall(r"([A-Z]+)\[([^\]]*)\]", g)
        if re.sub(r"([A-Z]+)\[([^\]]*)\]", "", g).strip():
            fail("text outside properties: %r" % g[:80])
        d = {}
        board = None
        me = None
        n = 0
        for key, val in props:
            if key == "GM" and val.lower() != "othello":
                fail("GM[%s]" % val)
            if key in ("PB", "PW", "RE"):
                d[key] = val
            if key == "BO":
                f = val.split()
                if f[0] != "8" or len(f) != 10:
                    fail("BO[%s]" % val)
                rows = f[1:9]
                board = [[{"-": 0, "*": 1, "O": -1}[c] for c in row] for row in rows]
                me = {"*": 1, "O": -1}[f[9]]
            if key in ("B", "W"):
                if board is None:
                    fail("a move before BO")
                side = 1 if key == "B" else -1
                if side != me:
                    fail("move %d: %s to play but %s moved" % (n + 1, me, key))
                mv = val.split("/")[0].strip().lower()
                n += 1
                if mv == "pa":
                    if has_move(board, me):
                        fail("move %d: a pass with a move available" % n)
                else:
                    x, y = ord(mv[0]) - ord("a"), int(mv[1:]) - 1
                    fl = flips(board, x, y, me) if board[y][x] == 0 else []
                    if not fl:
                        fail("move %d %s: illegal" % (n, mv))
                    board[y][x] = me
                    for cx, cy in fl:
                        board[cy][cx] = me
                me = -me
        b = sum(row.count(1) for row in board)
        w = sum(row.count(-1) for row in board)
        print(json.dumps({"black": d.get("PB"), "white": d.get("PW"), "re": d.get("RE"), "moves": n, "black_discs": b, "white_discs": w}))


# ---- PSQ / Gomoku ----
def five(board, n, x, y):
    c = board[y][x]
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        k = 1
        for s in (1, -1):
            cx, cy = x + s * dx, y + s * dy
            while 0 <= cx < n and 0 <= cy < n and board[cy][cx] == c:
                k += 1
                cx, cy = cx + s * dx, cy + s * dy
        if k >= 5:
            return True
    return False


def psq(text):
    lines = [l.strip() for l in text.splitlines()]
    i = 0
    found = False
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        m = re.fullmatch(r"Piskvorky (\d+)x(\d+), (\d+):(\d+), (\d)", lines[i])
        if not m:
            fail("line %d: %r is not a Piskvorky line" % (i + 1, lines[i]))
        found = True
        n = int(m.group(1))
        board = [[0] * n for _ in range(n)]
        me, moves, won = 1, 0, None
        i += 1
        while i < len(lines) and re.fullmatch(r"-?\d+,-?\d+(,-?\d+)?", lines[i]):
            x, y = [int(v) - 1 for v in lines[i].split(",")[:2]]
            if not (0 <= x < n and 0 <= y < n) or board[y][x]:
                fail("line %d: move %s is off the board or taken" % (i + 1, lines[i]))
            if won:
                fail("line %d: a move after five in a row" % (i + 1))
            board[y][x] = me
            moves += 1
            if five(board, n, x, y):
                won = "black" if me == 1 else "white"
            me = -me
            i += 1
        if i + 2 >= len(lines):
            fail("record ends without the names and the code")
        black, white, code = lines[i], lines[i + 1], lines[i + 2]
        i += 3
        print(json.dumps({"size": n, "black": black, "white": white, "code": int(code), "moves": moves, "five": won}))
    if not found:
        fail("no record")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("ggf", "psq"):
        sys.stderr.write("usage: records.py ggf|psq FILE\n")
        sys.exit(1)
    with open(sys.argv[2]) as f:
        (ggf if sys.argv[1] == "ggf" else psq)(f.read())
