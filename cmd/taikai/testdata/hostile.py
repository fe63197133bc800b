#!/usr/bin/env python3
"""hostile.py -- an othello-board engine that attacks before (or while) it
plays, for taikai's sandbox tests (cmd/taikai/sandbox_test.go).

Start:  python3 hostile.py HOST PORT MODE ARG...

Every attempt is reported on stderr (the engine's log) as one line:
  BLOCKED <what> (<error>)   the attempt failed, as it must in the sandbox
  LEAK <what> <detail>       the attempt succeeded: the sandbox failed
  OK <what>                  something that must work (the scratch directory)
Then it plays legal moves (the first legal one) until END.

Modes (ARGs in brackets):
  read [PATH...]        read each PATH; list /proc; grep every readable
                        /proc/*/environ for the admin token (ARG "token=T")
  write [PATH...]       create or append to each PATH; write /tmp
  signal [PID]          SIGKILL PID (the server), then every pid 2..65535
  connect [HOST:PORT...] dial each; scan 127.0.0.1 (all ports but its own
                        seat); after connecting, dial its own seat again
  memory                on its first turn, allocate 2 GiB in 16 MiB steps,
                        printing ALLOC <MiB> <unix time> after each step
  memory-child          the same in a forked child; the parent's first move
                        waits for the child's end
  forks                 fork 150 children that sleep, report FORKS ok=N failed=M
  cpus                  widen its CPU affinity to every CPU (sched_setaffinity;
                        on x86-64 also through x32's number), report CPUS
                        before and CPUS still after (LEAK if they changed)
  setsid [MARKER] [hang] leave a double-forked setsid daemon running with
                        daemon:MARKER in its command line; with hang, never move
"""
import ctypes
import errno
import os
import platform
import signal
import socket
import sys
import time


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def attempt(what, fn):
    try:
        r = fn()
    except OSError as e:
        log("BLOCKED", what, "(%s)" % (e.strerror or e))
        return False
    log("LEAK", what, repr(r)[:100])
    return True


def read(path):
    with open(path, "rb") as f:
        return f.read(64)


def append(path):
    with open(path, "ab") as f:
        f.write(b"hostile\n")
    return "written"


def dial(addr, timeout=2):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=timeout)
    s.close()
    return "connected"


def attack_read(args):
    token = None
    for a in args:
        if a.startswith("token="):
            token = a[len("token="):].encode()
            continue
        attempt("read " + a, lambda a=a: read(a))
        d = os.path.dirname(a)
        attempt("list " + d, lambda d=d: os.listdir(d))
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    log("PROCS", " ".join(sorted(pids, key=int)))
    for p in pids:
        try:
            env = read_all("/proc/%s/environ" % p)
        except OSError:
            continue
        if token and token in env:
            log("LEAK token in /proc/%s/environ" % p)
    if token and token in os.environb.get(b"TAIKAI_ADMIN_TOKEN", b""):
        log("LEAK token in own environment")
    log("ENV", " ".join(sorted(os.environ)))


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def attack_write(args):
    for a in args:
        attempt("write " + a, lambda a=a: append(a))
    try:
        append("/tmp/scratch")
        log("OK write /tmp/scratch")
    except OSError as e:
        log("FAILED write /tmp/scratch (%s)" % e)


def attack_signal(args):
    me = os.getpid()
    for a in args:
        attempt("kill %s" % a, lambda a=a: os.kill(int(a), signal.SIGKILL))
    hit = []
    for pid in range(2, 65536):
        if pid == me:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            hit.append(pid)
        except OSError:
            pass
    log("SIGNALLED", len(hit), hit[:20])


def attack_connect(args, own):
    for a in args:
        attempt("connect " + a, lambda a=a: dial(a))
    open_ports = []
    t0 = time.time()
    for port in range(1, 65536):
        if port == own:
            continue
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
            if s.getsockname() != s.getpeername():  # not TCP's self-connect
                open_ports.append(port)
        except OSError:
            pass
        finally:
            s.close()
    log("OPEN", open_ports)
    log("SCANNED in %.1f s" % (time.time() - t0))


def allocate():
    # Small steps: the test times the game's end from the last step logged,
    # and touching a 64 MiB step took up to a second on a loaded machine,
    # time that was the allocation's, not the kill's.
    chunks = []
    for i in range(128):
        chunks.append(b"\x01" * (16 << 20))
        log("ALLOC %d %.3f" % ((i + 1) * 16, time.time()))
    log("ALLOCATED 2 GiB")
    return chunks


def attack_forks():
    ok = failed = 0
    kids = []
    for _ in range(150):
        try:
            pid = os.fork()
        except OSError:
            failed += 1
            continue
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        ok += 1
        kids.append(pid)
    log("FORKS ok=%d failed=%d" % (ok, failed))
    for k in kids:
        os.kill(k, signal.SIGKILL)
        os.waitpid(k, 0)


def attack_cpus():
    before = sorted(os.sched_getaffinity(0))
    log("CPUS", before)

    def widen():
        os.sched_setaffinity(0, range(os.cpu_count()))
        return sorted(os.sched_getaffinity(0))
    attempt("sched_setaffinity", widen)
    if platform.machine() == "x86_64":
        libc = ctypes.CDLL(None, use_errno=True)
        mask = ctypes.create_string_buffer(b"\xff" * 128)

        def widen_x32():  # x32's sched_setaffinity: 203 with bit 0x40000000
            if libc.syscall(ctypes.c_long(0x40000000 | 203), ctypes.c_long(0), ctypes.c_long(128), mask) != 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            return sorted(os.sched_getaffinity(0))
        attempt("sched_setaffinity x32", widen_x32)
    after = sorted(os.sched_getaffinity(0))
    if after != before:
        log("LEAK CPUs now", after)
    else:
        log("CPUS still", after)


def attack_setsid(marker):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("python3", ["python3", "-c", "import time\nwhile True: time.sleep(1)", "daemon:" + marker])
        os._exit(0)
    os.waitpid(pid, 0)
    log("DAEMON started", marker)


# --- playing: the first legal move --------------------------------------

def at(b, x, y):
    return b[8 * x + y]  # BOARD is column by column


def flips(b, x, y, c):
    if at(b, x, y) != 0:
        return 0
    n = 0
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx == 0 and dy == 0:
                continue
            i, j, k = x + dx, y + dy, 0
            while 0 <= i < 8 and 0 <= j < 8 and at(b, i, j) == -c:
                i, j, k = i + dx, j + dy, k + 1
            if k and 0 <= i < 8 and 0 <= j < 8 and at(b, i, j) == c:
                n += k
    return n


def play(sock, on_turn):
    f = sock.makefile("rb")
    me, board, turns = None, None, 0
    for raw in f:
        parts = raw.decode().split()
        if not parts:
            continue
        if parts[0] == "START":
            me = int(parts[1])
        elif parts[0] == "BOARD":
            board = [int(v) for v in parts[1:65]]
        elif parts[0] == "TURN" and int(parts[1]) == me:
            if on_turn(turns) is False:
                continue
            turns += 1
            moves = [(x, y) for x in range(8) for y in range(8) if flips(board, x, y, me)]
            if moves:
                sock.sendall(b"PUT %d %d\n" % moves[0])
        elif parts[0] == "END":
            log("GAME", line(raw))
            return


def line(raw):
    return raw.decode().strip()


def main():
    host, port, mode, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    log("MODE", mode, "pid", os.getpid(), "uid", os.getuid())
    on_turn = lambda n: True
    if mode == "read":
        attack_read(args)
    elif mode == "write":
        attack_write(args)
    elif mode == "signal":
        attack_signal(args)
    if mode == "connect":
        attack_connect(args, port)
    if mode == "forks":
        attack_forks()
    elif mode == "cpus":
        attack_cpus()
    elif mode == "setsid":
        attack_setsid(args[0])
        if "hang" in args[1:]:
            on_turn = lambda n: False
        else:
            # A pause on the first move: the test sees the daemon meanwhile.
            on_turn = lambda n: n > 0 or time.sleep(1) or True
    elif mode == "memory":
        keep = []
        on_turn = lambda n: n > 0 or keep.append(allocate()) or True
    elif mode == "memory-child":
        def child_allocates(n):
            if n == 0:
                pid = os.fork()
                if pid == 0:
                    allocate()
                    time.sleep(60)
                    os._exit(0)
                # The game lasts until the child is over its limit, however
                # slowly it allocates on a busy machine: the first move waits
                # for the child's end.
                os.waitpid(pid, 0)
            return True
        on_turn = child_allocates
    elif mode == "connect":
        # Once the game has begun, the seat takes no other connection.
        on_turn = lambda n: n > 0 or attempt("connect own seat again", lambda: dial("%s:%d" % (host, port))) or True
    sock = socket.create_connection((host, port), timeout=30)
    sock.settimeout(None)
    play(sock, on_turn)


if __name__ == "__main__":
    main()
