#!/usr/bin/env python3
"""chooser.py -- the person's move generator for the play tests, independent of
taikai's Go rules: Othello's flips and Gomoku's board come from
cmd/taikai/testdata/records.py, checkers' moves from
engines/testdata/clients/checkers_board.py, both written from the rules'
descriptions, not from taikai's code.

Reads on stdin the seat's view (GET /api/games/{id}/seat) with two more
fields, "rule" (the game's, as GET /api/games/{id} says it) and "seed", and
prints {"legal": every legal move of the seat by its own rules, "choice": one
of them at random}. A move is {"x", "y"} (Gomoku, Othello), {"x", "y", "path":
landings} (checkers: the piece's square, then where it lands) or {"pass":
true}, as the seat's "legal" list writes them. Gomoku's own rules know only
that a point must be empty; "forbidden": true says whether the rule forbids
points to some side (seed, renju), so that the test compares the rest with
the seat's forbidden points, and the choice avoids those the seat forbids.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "cmd", "taikai", "testdata"))
sys.path.insert(0, os.path.join(ROOT, "engines", "testdata", "clients"))

import records  # noqa: E402  flips()
import checkers_board  # noqa: E402  Board, sq_xy, xy_sq

CELL = {".": 0, "x": 1, "X": 2, "o": -1, "O": -2}


def othello(board, me):
    out = [{"x": x, "y": y} for y in range(8) for x in range(8) if board[y][x] == 0 and records.flips(board, x, y, me)]
    return out or [{"pass": True}]


def gomoku(board):
    n = len(board)
    return [{"x": x, "y": y} for y in range(n) for x in range(n) if board[y][x] == 0]


def checkers(board, me, rule):
    b = checkers_board.Board(rule or "seed")
    b.cells = {(x, y): v for y, row in enumerate(board) for x, v in enumerate(row) if v}
    b.turn = me
    out = []
    for path, _ in b.moves():
        x, y = checkers_board.sq_xy(path[0])
        out.append({"x": x, "y": y, "path": [list(checkers_board.sq_xy(s)) for s in path[1:]]})
    return out


def main():
    v = json.load(sys.stdin)
    board = [[CELL[c] for c in row] for row in v["board"]]
    me = 1 if v["color"] == "black" else -1
    forbidden = False
    if v["game"] == "othello":
        legal = othello(board, me)
    elif v["game"] == "gomoku":
        legal = gomoku(board)
        forbidden = v.get("rule") in ("", None, "seed", "renju")
    elif v["game"] == "checkers":
        legal = checkers(board, me, v.get("rule"))
    else:
        sys.exit("chooser.py: unknown game %r" % v["game"])
    barred = {tuple(p) for p in v.get("forbidden") or []}
    pick = [m for m in legal if (m.get("x"), m.get("y")) not in barred]
    choice = random.Random(v.get("seed", 0)).choice(pick) if pick else None
    json.dump({"legal": legal, "forbidden": forbidden, "choice": choice}, sys.stdout)


if __name__ == "__main__":
    main()
