#!/usr/bin/env python3
"""pbrain_brain.py -- a Gomocup brain for taikai's tests, written from the
Piskvork protocol text (protocl2en.htm) and PROTOCOLS.md section 5 alone.

Start:  pbrain_brain.py      (commands on stdin, answers on stdout)
Env:    TAIKAI_SEED  seed for its choice of moves
        LINE_END     "crlf", "cr" or "lf" (default): how it ends its lines
        STARTUP_MS   sleep this long in START before its OK (loading weights)
        MESSAGES     print this many MESSAGE lines before each move (as Rapfi
                     prints "Speed | Depth | Eval | Time" and "Bestline" lines),
                     each followed by MESSAGE_PAD
        FAULT        misbehave from its own move number FAULT_AT (default 3):
                       silent   never answer             -> the referee scores timeout
                       slow     sleep FAULT_SLEEP_MS (default 3000) first
                       slowonce the same at move FAULT_AT only
                       crash    exit 3 instead of moving  -> crash
                       raise    die of an uncaught exception (a traceback on
                                stderr, exit 1) instead of moving -> crash
                       memory   allocate 2 GiB first   -> memory (in the sandbox)
                       illegal  answer an occupied point  -> illegal
                       garbage  print a junk line, a MESSAGE, a DEBUG and an
                                ERROR line, then its move (the game goes on)
                       fillfolder  fill INFO folder with directories and empty
                                files, and 64 KiB files, without end

Folder: on INFO folder DIR it keeps DIR/py-brain/games, the number of games
it was told that folder in (this one included), and says it in a MESSAGE
before its first move: "MESSAGE folder games N".

Plays: a random empty point next to a stone (the centre on an empty board),
or a point that makes five in a row when it has one.

Checks (any failure: one line on stderr with PROTOCOL VIOLATION, exit 2):
 - every line ends in CR LF, as the protocol text writes them;
 - START <n> first (5 <= n <= 25), answered OK; INFO <key> <integer> with the
   keys of the text; ABOUT answered with name="...";
 - BEGIN only on an empty board; TURN <x>,<y> on an empty point of the board;
   BOARD then <x>,<y>,<1|2> lines on distinct empty points, then DONE, with
   as many own stones as the opponent's (it is to move as the side with
   fewer, or black on equal counts);
 - it is given the move only when it is its turn by its own count; END comes
   before the input closes (and the brain then exits at once).
Exit 0 after END; 2 on a violation; 3 on a crash on purpose.
"""
import fcntl
import os
import random
import sys
import time


def fail(msg):
    sys.stderr.write("PROTOCOL VIOLATION: %s\n" % msg)
    sys.exit(2)


END = {"crlf": "\r\n", "cr": "\r", "lf": "\n"}[os.environ.get("LINE_END", "lf")]
FAULT = os.environ.get("FAULT", "")
FAULT_AT = int(os.environ.get("FAULT_AT", "3"))
rng = random.Random(os.environ.get("TAIKAI_SEED"))


def say(text):
    sys.stdout.write(text + END)
    sys.stdout.flush()


def five_at(board, n, x, y, me):
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        k = 1
        for s in (1, -1):
            cx, cy = x + s * dx, y + s * dy
            while 0 <= cx < n and 0 <= cy < n and board.get((cx, cy)) == me:
                k += 1
                cx, cy = cx + s * dx, cy + s * dy
        if k >= 5:
            return True
    return False


def main():
    n = None
    board = {}  # (x, y) -> 1 own, 2 opponent's
    own_moves = 0
    started = False
    folder_games = None
    folder = None

    def choose():
        empty = [(x, y) for x in range(n) for y in range(n) if (x, y) not in board]
        for p in empty:
            if five_at(board, n, p[0], p[1], 1):
                return p
        if not board:
            return (n // 2, n // 2)
        near = [p for p in empty if any((p[0] + dx, p[1] + dy) in board for dx in (-1, 0, 1) for dy in (-1, 0, 1))]
        return rng.choice(near or empty)

    def move():
        nonlocal own_moves
        own_moves += 1
        if own_moves == 1 and folder_games is not None:
            say("MESSAGE folder games %d" % folder_games)
        for i in range(int(os.environ.get("MESSAGES", "0"))):
            say("MESSAGE move %d line %d%s" % (own_moves, i + 1, os.environ.get("MESSAGE_PAD", "")))
        if FAULT and own_moves >= FAULT_AT:
            if FAULT == "silent":
                return
            if FAULT == "slow" or (FAULT == "slowonce" and own_moves == FAULT_AT):
                time.sleep(int(os.environ.get("FAULT_SLEEP_MS", "3000")) / 1000)
            if FAULT == "crash":
                sys.exit(3)
            if FAULT == "raise":
                raise RuntimeError("a brain's own bug, on purpose")
            if FAULT == "memory":
                keep = [b"\x01" * (64 << 20) for _ in range(32)]  # 2 GiB, every page written
                sys.stderr.write("allocated %d MiB\n" % (len(keep) * 64))
            if FAULT == "illegal" and board:
                x, y = next(iter(board))
                say("%d,%d" % (x, y))
                return
            if FAULT == "fillfolder" and folder is not None:
                i = 0
                while True:  # until it is stopped
                    i += 1
                    d = os.path.join(folder, "py-brain", "d%d-%d" % (os.getpid(), i))
                    os.makedirs(d, exist_ok=True)
                    open(os.path.join(d, "empty"), "w").close()
                    if i % 10 == 0:
                        with open(os.path.join(d, "data"), "wb") as out:
                            out.write(b"\x01" * (64 << 10))
            if FAULT == "garbage":
                say("HELLO WORLD")
                say("MESSAGE thinking hard")
                say("DEBUG depth 3")
                say("ERROR not really")
        x, y = choose()
        board[(x, y)] = 1
        say("%d,%d" % (x, y))

    def lines():
        for rawb in sys.stdin.buffer:
            if not rawb.endswith(b"\r\n"):
                fail("line %r does not end in CR LF" % rawb)
            yield rawb.decode()

    inp = lines()
    for raw in inp:
        line = raw.strip()
        if not line:
            continue
        word, _, rest = line.partition(" ")
        if not started and word != "START":
            fail("%r before START" % line)
        if word == "START":
            if started:
                fail("a second START")
            try:
                n = int(rest)
            except ValueError:
                fail("START %r" % rest)
            if not 5 <= n <= 25:
                fail("START %d" % n)
            started = True
            time.sleep(int(os.environ.get("STARTUP_MS", "0")) / 1000)
            say("OK")
        elif word == "INFO":
            key, _, val = rest.partition(" ")
            if key == "folder":
                folder = val
                mine = os.path.join(val, "py-brain")
                os.makedirs(mine, exist_ok=True)
                path = os.path.join(mine, "games")
                # Two games of this brain at once share its folder: the
                # count is read and rewritten under a lock (flock on a
                # file beside it), so no game's count is lost, and replaced
                # whole (write, then rename), never seen half written. The
                # temporary file is not named by the pid: in the sandbox
                # each engine has its own pid namespace, so both are pid 2.
                with open(path + ".lock", "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    count = int(open(path).read()) if os.path.exists(path) else 0
                    tmp = "%s.%s" % (path, os.urandom(8).hex())
                    with open(tmp, "w") as out:
                        out.write(str(count + 1))
                    os.replace(tmp, path)
                folder_games = count + 1
            if key not in ("timeout_turn", "timeout_match", "max_memory", "time_left", "game_type", "rule", "evaluate", "folder"):
                fail("INFO key %r" % key)
            if key not in ("evaluate", "folder"):
                try:
                    v = int(val)
                except ValueError:
                    fail("INFO %s %r" % (key, val))
                if key == "rule" and v not in (0, 1, 2, 3, 4):
                    fail("INFO rule %d" % v)
        elif word == "ABOUT":
            say('name="py-brain", version="1.0", author="taikai tests"')
        elif word == "BEGIN":
            if board:
                fail("BEGIN on a board with %d stones" % len(board))
            move()
        elif word == "TURN":
            try:
                x, y = [int(v) for v in rest.split(",")]
            except ValueError:
                fail("TURN %r" % rest)
            if not (0 <= x < n and 0 <= y < n) or (x, y) in board:
                fail("TURN %d,%d: off the board or taken" % (x, y))
            board[(x, y)] = 2
            mine = sum(1 for v in board.values() if v == 1)
            theirs = len(board) - mine
            if theirs != mine and theirs != mine + 1:
                fail("TURN %d,%d: %d own stones against %d" % (x, y, mine, theirs))
            move()
        elif word == "BOARD":
            board = {}
            for raw2 in inp:
                l2 = raw2.strip()
                if l2 == "DONE":
                    break
                try:
                    x, y, f = [int(v) for v in l2.split(",")]
                except ValueError:
                    fail("BOARD line %r" % l2)
                if not (0 <= x < n and 0 <= y < n) or (x, y) in board or f not in (1, 2):
                    fail("BOARD line %r: off the board, taken or not 1/2" % l2)
                board[(x, y)] = f
            else:
                fail("BOARD without DONE")
            mine = sum(1 for v in board.values() if v == 1)
            theirs = len(board) - mine
            if theirs != mine and theirs != mine + 1:
                fail("BOARD: %d own stones against %d, not its turn" % (mine, theirs))
            move()
        elif word == "END":
            return 0  # "it must terminate as soon as possible"

        else:
            say("UNKNOWN %s" % word)
    fail("the input closed without END")


if __name__ == "__main__":
    sys.exit(main())
