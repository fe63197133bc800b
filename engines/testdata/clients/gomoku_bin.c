/*
 * gomoku_bin.c -- taikai test client for the `gomoku-turn` protocol
 * (PROTOCOLS.md section 3), reading the board with `get bin`.
 *
 * Build:  gcc -std=c99 -Wall -Wextra -O2 -o gomoku_bin gomoku_bin.c
 *         (_POSIX_C_SOURCE is defined below; no extra flags needed)
 * Start:  gomoku_bin ADDRESS PORT -b|-w
 *         -b = player 0 (black, value 1 in `get bin`), -w = player 1 (white, 255).
 * Env:    TAIKAI_SIZE        board size N (default 15)
 *         TAIKAI_END_MESSAGE =1: the server sends `end <win|lose|draw> <reason>`
 *                            before closing, and the client requires it
 *         TAIKAI_SEED        seed for the move choice (default: time ^ pid)
 *
 * Plays: waits for `your turn`, sends `get bin`, reads N*N bytes, puts a stone
 * on a random empty point 8-adjacent to any stone (the centre on an empty
 * board). On its 3rd turn it first probes `put` on an occupied point
 * (expects `2`) and `put N 0` (expects `3`).
 *
 * Checks (any failure: one line on stderr, exit 2):
 *  - every server line is exactly `your turn`, a put reply `1`..`4`, or (only
 *    with TAIKAI_END_MESSAGE=1) `end <win|lose|draw> <reason>` with a
 *    game-end reason from PROTOCOLS.md; no line longer than 4096 bytes; no
 *    partial line or partial board before the connection closes;
 *  - `get bin` gives exactly N*N bytes, each 0, 1 or 255; every stone this
 *    client placed is still there with its own value, every opponent stone
 *    seen before is still there; new own stones it did not place are
 *    accepted as server auto-placements (timeout) and logged; stone counts
 *    alternate (black: opp == own, white: opp == own + 1 when it is to move);
 *    no run of exactly five of either colour is on the board while the game
 *    goes on; the board is not full when it is told to move;
 *  - put replies: `2`/`3` for a point it knows is empty and on the board is an
 *    error; `4` is accepted (forbidden point, it tries another) unless the
 *    point makes exactly five (never forbidden); the occupied probe must get
 *    `2` and the off-board probe `3`;
 *  - after an accepted move that makes exactly five the game must end (EOF,
 *    or `end win normal` with TAIKAI_END_MESSAGE=1), not `your turn`;
 *  - with TAIKAI_END_MESSAGE=1 the final line must come before EOF and
 *    nothing may follow it;
 *  - 30 s without data from the server (SO_RCVTIMEO) is an error.
 * EOF at a line/board boundary (optionally after the end line) is the normal
 * game end: exit 0. This includes EOF instead of a `get bin` or `put` reply
 * (the game may end at any time: resign, disconnect, timeouts); with
 * TAIKAI_END_MESSAGE=1 the end line may also stand in place of such a reply.
 * A refused write (server already closed) is logged and the following read
 * decides. Exit 1: usage or local error.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAXLINE 4096

static int N = 15;
static int sock = -1;
static int black;            /* 1: player 0 (-b), 0: player 1 (-w) */
static int own_val, opp_val; /* byte values in `get bin` */
static int end_message;      /* TAIKAI_END_MESSAGE=1 */
static unsigned char *own;   /* 1 where this client knows its own stone */
static unsigned char *opp;   /* 1 where it knows an opponent stone */
static unsigned char *cells; /* last board read */
static int turns;            /* `your turn` lines received */
static int own_count, opp_count, auto_count;
static int five_x = -1, five_y = -1; /* own accepted move that made exactly five */

static unsigned char rbuf[65536];
static size_t rpos, rlen;

/* Printable copy of server text for messages (control bytes as \xNN), at most 60 chars. */
static const char *show(const char *s)
{
    static char out[2][256];
    static int which;
    char *o = out[which ^= 1];
    size_t n = 0, i;
    for (i = 0; s[i] != '\0' && i < 60; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            o[n++] = (char)c;
        else
            n += (size_t)sprintf(o + n, "\\x%02x", c);
    }
    o[n] = '\0';
    return o;
}

static void violation(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "gomoku_bin: PROTOCOL VIOLATION (turn %d): ", turns);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void fatal(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "gomoku_bin: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* Refill the read buffer. Returns number of new bytes, 0 on EOF. */
static size_t fill(const char *what)
{
    ssize_t n;
    if (rpos == rlen)
        rpos = rlen = 0;
    if (rlen == sizeof rbuf) {
        memmove(rbuf, rbuf + rpos, rlen - rpos);
        rlen -= rpos;
        rpos = 0;
    }
    for (;;) {
        n = recv(sock, rbuf + rlen, sizeof rbuf - rlen, 0);
        if (n >= 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            violation("no data from the server for 30 s while %s", what);
        if (errno == ECONNRESET) {
            printf("# connection reset by server\n");
            return 0;
        }
        fatal("recv: %s", strerror(errno));
    }
    rlen += (size_t)n;
    return (size_t)n;
}

/* Read one line (without '\n') into out. Returns 1, or 0 on EOF at a line
 * boundary. A partial line at EOF or an overlong line is a violation. */
static int read_line(char *out, const char *what)
{
    size_t len = 0;
    for (;;) {
        while (rpos < rlen) {
            unsigned char c = rbuf[rpos++];
            if (c == '\n') {
                out[len] = '\0';
                return 1;
            }
            if (len >= MAXLINE)
                violation("line longer than %d bytes while %s", MAXLINE, what);
            if (c == '\0')
                violation("NUL byte in a text line while %s", what);
            out[len++] = (char)c;
        }
        if (fill(what) == 0) {
            if (len > 0) {
                out[len] = '\0';
                violation("connection closed in the middle of a line ('%s', no newline) while %s", show(out), what);
            }
            return 0;
        }
    }
}

static void send_line(const char *fmt, ...)
{
    char line[128];
    va_list ap;
    size_t len, off = 0;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    printf("> %s\n", line);
    len = strlen(line);
    line[len++] = '\n';
    while (off < len) {
        ssize_t n = send(sock, line + off, len - off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE || errno == ECONNRESET) {
                printf("# write refused (%s): server has closed\n", strerror(errno));
                return;
            }
            fatal("send: %s", strerror(errno));
        }
        off += (size_t)n;
    }
}

static void game_over(void)
{
    if (end_message)
        violation("connection closed without the final `end <win|lose|draw> <reason>` line (TAIKAI_END_MESSAGE=1)");
    printf("# game over: connection closed after %d turns (own %d stones, %d auto-placed; opponent %d)\n",
           turns, own_count, auto_count, opp_count);
    exit(0);
}

static const char *const reasons[] = {
    "normal", "timeout", "illegal", "disconnect", "close", "resign",
    "no_connect", "crash", "aborted", NULL
};

static void handle_end_line(const char *line)
{
    char copy[MAXLINE + 1], rest[MAXLINE + 1];
    char *tok[4];
    int nt = 0, i, ok = 0;
    char *p, *save = NULL;
    printf("< %s\n", line);
    if (!end_message)
        violation("unexpected line '%s' (the server sends nothing before closing unless end_message is on)", show(line));
    strcpy(copy, line);
    for (p = strtok_r(copy, " ", &save); p != NULL; p = strtok_r(NULL, " ", &save)) {
        if (nt == 4)
            break;
        tok[nt++] = p;
    }
    if (nt != 3 || strcmp(tok[0], "end") != 0)
        violation("bad end line '%s' (expected `end <win|lose|draw> <reason>`)", show(line));
    if (strcmp(tok[1], "win") != 0 && strcmp(tok[1], "lose") != 0 && strcmp(tok[1], "draw") != 0)
        violation("bad result '%s' in end line (win, lose or draw)", show(tok[1]));
    for (i = 0; reasons[i] != NULL; i++)
        if (strcmp(tok[2], reasons[i]) == 0)
            ok = 1;
    if (!ok)
        violation("unknown game-end reason '%s' in end line", show(tok[2]));
    if (five_x >= 0 && (strcmp(tok[1], "win") != 0 || strcmp(tok[2], "normal") != 0))
        violation("own move (%d,%d) made exactly five but the end line says '%s %s'",
                  five_x, five_y, tok[1], tok[2]);
    if (read_line(rest, "waiting for EOF after the end line"))
        violation("data after the end line: '%s'", show(rest));
    printf("# game over: %s %s after %d turns\n", tok[1], tok[2], turns);
    exit(0);
}

/* Length of the run of stones of the array `b` through (x,y) in direction (dx,dy). */
static int run_through(const unsigned char *b, int x, int y, int dx, int dy)
{
    int n = 1, cx, cy;
    for (cx = x + dx, cy = y + dy; cx >= 0 && cy >= 0 && cx < N && cy < N && b[cy * N + cx]; cx += dx, cy += dy)
        n++;
    for (cx = x - dx, cy = y - dy; cx >= 0 && cy >= 0 && cx < N && cy < N && b[cy * N + cx]; cx -= dx, cy -= dy)
        n++;
    return n;
}

static const int dirs[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, -1 } };

/* Would a stone at (x,y) (already set in b, or assumed) make exactly five? */
static int exact_five_at(unsigned char *b, int x, int y)
{
    int d, hit = 0;
    unsigned char saved = b[y * N + x];
    b[y * N + x] = 1;
    for (d = 0; d < 4; d++)
        if (run_through(b, x, y, dirs[d][0], dirs[d][1]) == 5)
            hit = 1;
    b[y * N + x] = saved;
    return hit;
}

/* Any run of exactly five anywhere in b? Stores its first stone in *fx,*fy. */
static int has_exact_five(unsigned char *b, int *fx, int *fy)
{
    int x, y, d;
    for (y = 0; y < N; y++)
        for (x = 0; x < N; x++) {
            if (!b[y * N + x])
                continue;
            for (d = 0; d < 4; d++) {
                int dx = dirs[d][0], dy = dirs[d][1];
                int px = x - dx, py = y - dy;
                /* only start counting at the first stone of a run */
                if (px >= 0 && py >= 0 && px < N && py < N && b[py * N + px])
                    continue;
                if (run_through(b, x, y, dx, dy) == 5) {
                    *fx = x;
                    *fy = y;
                    return 1;
                }
            }
        }
    return 0;
}

/* Read a put reply line; EOF ends the game, `end ...` is handled. */
static void read_reply(char *line, const char *what)
{
    if (!read_line(line, what))
        game_over();
    if (strncmp(line, "end", 3) == 0)
        handle_end_line(line);
    printf("< %s\n", line);
}

static void read_board(void)
{
    size_t need = (size_t)N * (size_t)N, got = 0;
    const char *what = "reading the `get bin` board";
    /* first byte: EOF means the game ended; 'e' (never a board byte) starts
     * an end line, which is checked against TAIKAI_END_MESSAGE */
    if (rpos == rlen && fill(what) == 0)
        game_over();
    if (rbuf[rpos] == 'e') {
        char line[MAXLINE + 1];
        if (!read_line(line, "reading the end line"))
            game_over();
        handle_end_line(line);
    }
    while (got < need) {
        size_t take;
        if (rpos == rlen && fill(what) == 0)
            violation("connection closed after %zu of %zu board bytes of `get bin`", got, need);
        take = rlen - rpos;
        if (take > need - got)
            take = need - got;
        memcpy(cells + got, rbuf + rpos, take);
        rpos += take;
        got += take;
    }
    printf("< [%zu bytes]\n", need);
}

static void check_board(void)
{
    int i, n_own = 0, n_opp = 0, new_opp = 0, fx, fy;
    for (i = 0; i < N * N; i++) {
        int v = cells[i], x = i % N, y = i / N;
        if (v != 0 && v != 1 && v != 255)
            violation("`get bin` byte %d at (%d,%d) (index %d) is not 0, 1 or 255", v, x, y, i);
        if (own[i] && v != own_val)
            violation("own stone at (%d,%d) shows as %d in `get bin` (expected %d)", x, y, v, own_val);
        if (opp[i] && v != opp_val)
            violation("opponent stone at (%d,%d) seen earlier shows as %d in `get bin` (expected %d)", x, y, v, opp_val);
        if (v == own_val && !own[i]) {
            own[i] = 1;
            own_count++;
            auto_count++;
            printf("# own stone at (%d,%d) not placed by me: server auto-placement\n", x, y);
        }
        if (v == opp_val && !opp[i]) {
            opp[i] = 1;
            opp_count++;
            new_opp++;
            printf("# opponent stone at (%d,%d)\n", x, y);
        }
        if (v == own_val)
            n_own++;
        if (v == opp_val)
            n_opp++;
    }
    if (n_own != own_count || n_opp != opp_count)
        fatal("internal count mismatch");
    if (black ? (opp_count != own_count) : (opp_count != own_count + 1))
        violation("stone counts do not alternate: %s to move with %d own and %d opponent stones (new opponent stones since last look: %d)",
                  black ? "black" : "white", own_count, opp_count, new_opp);
    if (has_exact_five(own, &fx, &fy))
        violation("own stones make exactly five from (%d,%d) but the game goes on", fx, fy);
    if (has_exact_five(opp, &fx, &fy))
        violation("opponent stones make exactly five from (%d,%d) but the game goes on", fx, fy);
    if (own_count + opp_count == N * N)
        violation("`your turn` on a full board");
}

static void probes(void)
{
    char line[MAXLINE + 1];
    int i, px = -1, py = -1;
    for (i = 0; i < N * N; i++)
        if (own[i] || opp[i]) {
            px = i % N;
            py = i / N;
            break;
        }
    if (px >= 0) {
        send_line("put %d %d", px, py);
        read_reply(line, "waiting for the reply to a put on an occupied point");
        if (strcmp(line, "2") != 0)
            violation("put %d %d on an occupied point answered '%s', expected 2", px, py, show(line));
    }
    send_line("put %d 0", N);
    read_reply(line, "waiting for the reply to an off-board put");
    if (strcmp(line, "3") != 0)
        violation("put %d 0 (off the board) answered '%s', expected 3", N, show(line));
}

static void play_move(void)
{
    char line[MAXLINE + 1];
    unsigned char *refused = calloc((size_t)N * (size_t)N, 1);
    int *cand = malloc(sizeof(int) * (size_t)N * (size_t)N);
    if (refused == NULL || cand == NULL)
        fatal("out of memory");
    for (;;) {
        int nc = 0, i, x, y, pick;
        for (i = 0; i < N * N; i++) {
            int cx = i % N, cy = i / N, dx, dy, adj = 0;
            if (own[i] || opp[i] || refused[i])
                continue;
            for (dy = -1; dy <= 1 && !adj; dy++)
                for (dx = -1; dx <= 1 && !adj; dx++) {
                    int nx = cx + dx, ny = cy + dy;
                    if ((dx || dy) && nx >= 0 && ny >= 0 && nx < N && ny < N &&
                        (own[ny * N + nx] || opp[ny * N + nx]))
                        adj = 1;
                }
            if (adj)
                cand[nc++] = i;
        }
        if (nc == 0) /* empty board, or all adjacent points refused: any empty point */
            for (i = 0; i < N * N; i++)
                if (!own[i] && !opp[i] && !refused[i])
                    cand[nc++] = i;
        if (nc == 0)
            violation("every empty point was answered 4 (forbidden)");
        if (own_count + opp_count == 0 && !refused[(N / 2) * N + N / 2])
            pick = (N / 2) * N + N / 2;
        else
            pick = cand[rand() % nc];
        x = pick % N;
        y = pick / N;
        send_line("put %d %d", x, y);
        read_reply(line, "waiting for the reply to put");
        if (strcmp(line, "1") == 0) {
            own[pick] = 1;
            own_count++;
            if (exact_five_at(own, x, y)) {
                five_x = x;
                five_y = y;
                printf("# (%d,%d) makes five\n", x, y);
            }
            break;
        } else if (strcmp(line, "2") == 0) {
            violation("put %d %d answered 2 (occupied) but the point is empty on the board just read", x, y);
        } else if (strcmp(line, "3") == 0) {
            violation("put %d %d answered 3 (off the board) but the point is on an %dx%d board", x, y, N, N);
        } else if (strcmp(line, "4") == 0) {
            if (exact_five_at(own, x, y))
                violation("put %d %d answered 4 (forbidden) but it makes exactly five, which is never forbidden", x, y);
            refused[pick] = 1;
        } else {
            violation("put reply '%s' is not 1, 2, 3 or 4", show(line));
        }
    }
    free(refused);
    free(cand);
}

int main(int argc, char **argv)
{
    struct addrinfo hints, *res, *ai;
    struct timeval tv;
    const char *env;
    unsigned seed;
    int rc;
    char line[MAXLINE + 1];

    if (argc != 4 || (strcmp(argv[3], "-b") != 0 && strcmp(argv[3], "-w") != 0)) {
        fprintf(stderr, "usage: gomoku_bin ADDRESS PORT -b|-w\n");
        return 1;
    }
    black = strcmp(argv[3], "-b") == 0;
    own_val = black ? 1 : 255;
    opp_val = black ? 255 : 1;
    env = getenv("TAIKAI_SIZE");
    if (env != NULL && *env != '\0') {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end != '\0' || v < 5 || v > 25)
            fatal("TAIKAI_SIZE must be an integer 5..25, got '%s'", env);
        N = (int)v;
    }
    env = getenv("TAIKAI_END_MESSAGE");
    end_message = env != NULL && strcmp(env, "1") == 0;
    env = getenv("TAIKAI_SEED");
    seed = (env != NULL && *env != '\0') ? (unsigned)strtoul(env, NULL, 10)
                                         : (unsigned)time(NULL) ^ ((unsigned)getpid() << 8);
    srand(seed);
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);

    own = calloc((size_t)N * (size_t)N, 1);
    opp = calloc((size_t)N * (size_t)N, 1);
    cells = malloc((size_t)N * (size_t)N);
    if (own == NULL || opp == NULL || cells == NULL)
        fatal("out of memory");

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(argv[1], argv[2], &hints, &res);
    if (rc != 0)
        fatal("cannot resolve %s %s: %s", argv[1], argv[2], gai_strerror(rc));
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (sock < 0)
            continue;
        if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(sock);
        sock = -1;
    }
    freeaddrinfo(res);
    if (sock < 0)
        fatal("cannot connect to %s port %s", argv[1], argv[2]);
    tv.tv_sec = 30;
    tv.tv_usec = 0;
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
        fatal("setsockopt SO_RCVTIMEO: %s", strerror(errno));
    printf("# connected to %s:%s as %s, N=%d, seed=%u%s\n", argv[1], argv[2],
           black ? "player 0 (black)" : "player 1 (white)", N, seed,
           end_message ? ", end_message" : "");

    for (;;) {
        if (!read_line(line, "waiting for `your turn`"))
            game_over();
        if (strncmp(line, "end", 3) == 0)
            handle_end_line(line);
        printf("< %s\n", line);
        if (strcmp(line, "your turn") != 0)
            violation("expected `your turn`, got '%s'", show(line));
        if (five_x >= 0)
            violation("got `your turn` after own move (%d,%d) made exactly five: the game should have ended",
                      five_x, five_y);
        turns++;
        send_line("get bin");
        read_board();
        check_board();
        if (turns == 3)
            probes();
        play_move();
    }
}
