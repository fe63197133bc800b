package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// The test binary stands in for taikai when the match command launches
// built-in engines (`<self> engine NAME ...`).
func TestMain(m *testing.M) {
	// The sandboxes' helper, where the test binary is the helper (the
	// bench's sandbox figures, run in-process): without this, the check of
	// the sandbox ran this whole test binary inside it, seconds a bench.
	sandbox.MaybeHelper()
	builtin.RunIfEngine()
	// The test binary stands in for taikai as a worker too (bench's workers
	// part, run in-process, starts `<self> worker ...`).
	// and for the bench's own engine (`<self> bench engine ...`).
	if len(os.Args) > 1 && os.Args[1] == "worker" || len(os.Args) > 2 && os.Args[1] == "bench" && os.Args[2] == "engine" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	testkit.Parallel(6)
	unpath := testkit.PythonOnPath()
	code := m.Run()
	unpath()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// readmeBuild is the README's command to get a binary (issue 16, item 19).
var readmeBuild = regexp.MustCompile("`(go build -o taikai ./cmd/taikai)`")

// taikaiBinary builds the real binary once for the tests that run it, with
// the README's build command where it has one (TestReadmeBinaryAndLAN
// requires it), run at the top of the checkout into a scratch directory.
//
// TAIKAI_TEST_BINARY, if set, names a binary built beforehand instead (a
// test binary built with go test -c and run where no Go toolchain is, as in
// user-mode Linux); it must be reachable by the engines' uid of a root
// server (65534).
func taikaiBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("TAIKAI_TEST_BINARY"); p != "" {
		return p
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "taikai-bin-"); binErr != nil {
			return
		}
		// Sandboxed engines (uid nobody) run built-ins from this binary.
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "taikai")
		args := []string{"go", "build", "-o", "taikai", "./cmd/taikai"}
		if readme, err := os.ReadFile("../../README.md"); err == nil {
			if m := readmeBuild.FindSubmatch(readme); m != nil {
				args = strings.Fields(string(m[1]))
			}
		}
		args[3] = binPath
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

// The shared helpers (internal/testkit): ciRequires is the path of a
// program a test needs (skipped without it, except under CI=true).
var (
	ciRequires = testkit.Tool
	alive      = testkit.Alive
	freePort   = testkit.FreePort
)

// TestMatchStores200Games is the acceptance run of `taikai match`: random
// against greedy, 200 games at 10 ms a move, two at a time, all stored.
func TestMatchStores200Games(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "m.db")
	var stdout, stderr bytes.Buffer
	code := run([]string{"match", "--games", "200", "--move-time", "10ms", "--concurrency", "2", "--db", dbPath, "othello-random", "othello-greedy"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	db, match := storedMatch(t, dbPath)
	ts := []*tournament.Tournament{match}
	counts, _ := db.CountGames(context.Background(), ts[0].ID)
	if counts["finished"] != 200 || ts[0].FinishedGames != 200 {
		t.Errorf("stored %v, finished_games %d; want 200 finished", counts, ts[0].FinishedGames)
	}
	rows, _, _ := db.Standings(context.Background(), ts[0].ID)
	for _, r := range rows {
		if r.Games != 200 {
			t.Errorf("%s played %d games, want 200", r.Name, r.Games)
		}
	}
	if !strings.Contains(stdout.String(), "Elo difference") || !strings.Contains(stderr.String(), "200/200") {
		t.Errorf("no result table or progress:\n%s\n%s", stdout.String(), stderr.String())
	}
	t.Logf("%s", stdout.String())
}

// storedMatch opens the database of a `taikai match --db` (closed at the
// test's end) and returns its one match, which must be finished.
func storedMatch(t *testing.T, path string) (*storage.DB, *tournament.Tournament) {
	t.Helper()
	db, err := storage.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts, err := db.TournamentsWithStatus(context.Background(), "finished")
	if err != nil || len(ts) != 1 {
		t.Fatalf("finished matches %v, %v; want the match", ts, err)
	}
	return db, ts[0]
}

// Also with --affinity: each game's engines started on one CPU.
func TestMatchJSON(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"--affinity"}} {
		t.Run(strings.Join(append([]string{"default"}, flags...), " "), func(t *testing.T) { matchJSON(t, flags) })
	}
}

func matchJSON(t *testing.T, flags []string) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"match", "--game", "gomoku", "--size", "9", "--games", "4", "--move-time", "200ms", "--json", "--concurrency", "2"}, flags...)
	code := run(append(args, "gomoku-threat", "gomoku-random"), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Games []struct {
			Black, White, Result, Reason string
			Moves                        []struct {
				Color string
				X, Y  *int
				Text  string
				MS    *int64
			}
		}
		Standings []struct {
			Name                string
			Wins, Draws, Losses int
			Points              float64
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(out.Games) != 4 || len(out.Standings) != 2 {
		t.Fatalf("%d games, %d standings", len(out.Games), len(out.Standings))
	}
	for i, g := range out.Games {
		wantBlack := []string{"gomoku-threat", "gomoku-random"}[i%2]
		if g.Black != wantBlack || g.Reason == "" || len(g.Moves) == 0 || g.Moves[0].Color != "black" || g.Moves[0].MS == nil || g.Moves[0].X == nil {
			t.Errorf("game %d: %+v", i, g)
		}
	}
	if out.Standings[0].Wins+out.Standings[0].Draws+out.Standings[0].Losses != 4 {
		t.Errorf("standings %+v", out.Standings)
	}
}

func TestMatchBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"match", "othello-random"},
		{"match", "--games", "0", "othello-random", "othello-greedy"},
		{"match", "--game", "gomoku", "othello-random", "gomoku-random"},
		{"match", "name=x cmd='unterminated", "othello-random"},
		{"match", "name=x cmd=prog protocol=uci", "othello-random"},
		{"match", "--rule", "pente", "--game", "gomoku", "gomoku-random", "gomoku-threat"},
		{"match", "--concurrency", "0", "othello-random", "othello-greedy"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "taikai match:") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
	}
}

// A TAIKAI_DEMO that is not a boolean is refused by name, not read as false.
func TestServeBadDemoEnv(t *testing.T) {
	for _, env := range []string{"TAIKAI_DEMO", "TAIKAI_AFFINITY", "TAIKAI_SANDBOX"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "yes")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"serve", "--addr", "127.0.0.1:0"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), env) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, stderr.String(), env)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"serve", "-h"}, {"match", "-h"}, {"engine", "-h"}, {"bench", "-h"}, {"bench", "engine", "-h"}, {"worker", "-h"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 || stdout.Len()+stderr.Len() == 0 {
			t.Errorf("%q: exit %d, no help text", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"frobnicate"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "unknown command") {
		t.Errorf("unknown command: exit %d %q", code, stderr.String())
	}
}

// timeScale multiplies the time bounds and waits of the tests that run the
// real server with sandboxed engines (sandbox_test.go): TAIKAI_TEST_TIME_SCALE,
// 1 unless set. Only the user-mode Linux harness sets it (deploy/uml/init.sh):
// there one slow CPU serves every engine and every system call and page fault
// is a round trip to the host, so the bounds of real hardware (a game ended
// within 2 s of a memory limit, a server serving within 2 s) cannot hold,
// while what the tests show (the game ends by memory, the daemons die, the
// server serves) still can. Everywhere else the bounds are those written.
var timeScale = sync.OnceValue(func() float64 {
	v := os.Getenv("TAIKAI_TEST_TIME_SCALE")
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 1 {
		panic(fmt.Sprintf("TAIKAI_TEST_TIME_SCALE=%q: want a number of at least 1", v))
	}
	return f
})

// scaled is d times timeScale.
func scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * timeScale()) }

// serverProcess is a running `taikai serve` binary.
type serverProcess struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
	// startedIn is the time from the process's start to its serving.
	startedIn time.Duration
	// delegated: the server was started alone in a cgroup v2 subtree
	// delegated to its user (TAIKAI_TEST_DELEGATE; see delegate).
	delegated bool
}

// startServer runs the real binary and waits until it serves.
func startServer(tb testing.TB, bin, db, data string, extra ...string) *serverProcess {
	tb.Helper()
	return startServerEnv(tb, nil, bin, db, data, extra...)
}

// startServerEnv is startServer with more environment variables.
func startServerEnv(tb testing.TB, env []string, bin, db, data string, extra ...string) *serverProcess {
	tb.Helper()
	return startServerAs(tb, nil, env, bin, db, data, extra...)
}

// startServerAs is startServerEnv run as the user u (nil: as the test).
func startServerAs(tb testing.TB, u *osUser, env []string, bin, db, data string, extra ...string) *serverProcess {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--data", data}, extra...)...)
	cmd.Env = append(append(os.Environ(), "TAIKAI_ADMIN_TOKEN=e2e-token"), env...)
	if u == nil {
		// A root server's sandboxed engines run as nobody: their
		// directories under data must be reachable (t.TempDir's are 0700).
		searchable(tb, filepath.Dir(data))
	} else {
		u.own(tb, cmd)
	}
	delegated := delegate(tb, cmd, u)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &serverProcess{cmd: cmd, done: make(chan struct{}), delegated: delegated}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if i := strings.Index(line, "addr=http://"); i >= 0 && strings.Contains(line, "taikai serving") {
				addr <- strings.Fields(line[i+len("addr="):])[0]
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	tb.Cleanup(func() { s.stop(tb, syscall.SIGKILL) })
	select {
	case s.url = <-addr:
		s.startedIn = time.Since(t0)
	case <-s.done:
		tb.Fatalf("server exited at start:\n%s", s.logs())
	case <-time.After(scaled(30 * time.Second)):
		tb.Fatalf("server did not start in %v:\n%s", scaled(30*time.Second), s.logs())
	}
	return s
}

// searchable lets other users search dir and its parents up to the
// temporary directory (mode o+x), as sandboxed engines' uid must.
func searchable(tb testing.TB, dir string) {
	tb.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); strings.HasPrefix(d, tmp+"/"); d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(d, st.Mode().Perm()|0o011); err != nil {
			tb.Fatal(err)
		}
	}
}

func (s *serverProcess) logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// stop signals the server and waits for it to exit.
func (s *serverProcess) stop(tb testing.TB, sig syscall.Signal) {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		tb.Errorf("server did not exit within 30s of %v", sig)
		<-s.done
	}
}

func (s *serverProcess) call(tb testing.TB, method, path string, body io.Reader, contentType string, out any) int {
	tb.Helper()
	code, b := s.do(tb, method, path, contentType, body)
	if code >= 300 && out != nil {
		tb.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return code
}

// do makes an API call with the admin token and returns the status and the
// body, whatever the status.
func (s *serverProcess) do(tb testing.TB, method, path, contentType string, body io.Reader) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer e2e-token")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func (s *serverProcess) postJSON(tb testing.TB, path, body string) int64 {
	tb.Helper()
	var out struct{ ID int64 }
	s.call(tb, "POST", path, strings.NewReader(body), "application/json", &out)
	return out.ID
}

// waitFinished polls a tournament until it is finished.
func (s *serverProcess) waitFinished(tb testing.TB, id int64, within time.Duration) tournamentJSON {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		var t tournamentJSON
		s.call(tb, "GET", fmt.Sprintf("/api/tournaments/%d", id), nil, "", &t)
		if t.Status == "finished" {
			return t
		}
		if time.Now().After(deadline) {
			tb.Fatalf("tournament %d not finished after %v: %+v\n%s", id, within, t, s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type tournamentJSON struct {
	ID            int64
	Status        string
	TotalGames    int64 `json:"total_games"`
	FinishedGames int64 `json:"finished_games"`
}

// A typo in an engine command (issue 16, item 8): the cause is shown in the
// progress and the summary, and the match exits 1 when no game could be
// played; the progress line says who won.
func TestMatchShowsWhyGamesDidNotStart(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"match", "--games", "2", "--connect-timeout", "20s", "name=typo cmd=no-such-engine-xyz", "othello-random"}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1 when no game could be played", code)
	}
	for _, want := range []string{"game 1: white wins, crash:", `"no-such-engine-xyz": executable file not found`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "Not started:") || !strings.Contains(stdout.String(), "no-such-engine-xyz") {
		t.Errorf("summary lacks the cause:\n%s", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"match", "--games", "2", "--move-time", "1s", "othello-greedy", "othello-random"}, &stdout, &stderr); code != 0 {
		t.Errorf("a played match exits %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`\(game 2: (black wins|white wins|draw), normal\)`).MatchString(stderr.String()) {
		t.Errorf("progress does not say who won:\n%s", stderr.String())
	}
}

// The acceptance run of openings in `taikai match`: othello-greedy against
// itself, 40 games from the built-in Othello suite, plays at least 20
// distinct games, and every opening it uses twice in a row with colours
// swapped; --json says each game's opening and marks its plies, and counts
// the pairs (pentanomial).
func TestMatchOpeningsGreedySelfPlay(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run([]string{"match", "--openings", "builtin", "--games", "40", "--move-time", "1s", "--concurrency", "2", "--json",
		"othello-greedy", "othello-greedy"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Games []struct {
			Black, White, Result, Reason string
			Opening                      *struct {
				Suite string
				Index int
				Plies int
				Text  string
			}
			Moves []struct {
				Text    string
				MS      int64
				Opening bool
			}
		}
		Pentanomial []int64
		Elo         *float64
		EloError    *float64 `json:"elo_error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if len(out.Games) != 40 {
		t.Fatalf("%d games, want 40", len(out.Games))
	}
	distinct := map[string]bool{}
	for i := 0; i < len(out.Games); i += 2 {
		a, b := out.Games[i], out.Games[i+1]
		if a.Opening == nil || b.Opening == nil || a.Opening.Index != b.Opening.Index || a.Black != b.White || a.White != b.Black {
			t.Fatalf("games %d and %d are not a pair from one opening: %+v / %+v", i+1, i+2, a.Opening, b.Opening)
		}
		if i > 0 && a.Opening.Index == out.Games[i-2].Opening.Index {
			t.Errorf("pair %d repeats the opening of the pair before it", i/2+1)
		}
	}
	used := map[int]int{}
	for i, g := range out.Games {
		used[g.Opening.Index]++
		if g.Reason != "normal" {
			t.Errorf("game %d ended %s", i+1, g.Reason)
		}
		var seq []string
		for k, m := range g.Moves {
			if m.Opening != (k < g.Opening.Plies) || (m.Opening && m.MS != 0) {
				t.Fatalf("game %d ply %d: opening %v (ms %d), the opening has %d plies", i+1, k+1, m.Opening, m.MS, g.Opening.Plies)
			}
			seq = append(seq, m.Text)
		}
		distinct[strings.Join(seq, " ")] = true
	}
	for idx, n := range used {
		if n != 2 {
			t.Errorf("opening %d used %d times, want 2", idx, n)
		}
	}
	if len(distinct) < 20 {
		t.Errorf("%d distinct games of 40, want at least 20", len(distinct))
	}
	var pairs int64
	for _, n := range out.Pentanomial {
		pairs += n
	}
	if pairs != 20 || out.Elo == nil || out.EloError == nil {
		t.Errorf("pentanomial %v (%d pairs, want 20), elo %v ± %v", out.Pentanomial, pairs, out.Elo, out.EloError)
	}
	t.Logf("%d distinct games of 40; pentanomial %v", len(distinct), out.Pentanomial)
}

// The acceptance run of the SPRT: alpha-beta against random from the
// built-in openings, elo0=0 elo1=50, stops with H1 well before 200 games.
func TestMatchSPRTStopsWithH1(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	dbPath := filepath.Join(t.TempDir(), "sprt.db")
	// Alpha-beta told to think 20 ms a move under a 5 s clock: at 100 ms a
	// move under a 100 ms clock it lost pairs on time in CI, on a machine
	// loaded by every other test, and needed over 100 games to decide.
	quickAB := fmt.Sprintf("name=quick-alphabeta cmd='%s engine othello-alphabeta --host {host} --port {port} --color {color} --name {name} --time-ms 20' protocol=othello-board", taikaiBinary(t))
	code := run([]string{"match", "--sprt", "elo0=0 elo1=50 alpha=0.05 beta=0.05", "--openings", "builtin", "--move-time", "5s", "--json",
		"--concurrency", "2", "--db", dbPath, quickAB, "othello-random"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Games       []json.RawMessage
		Pentanomial []int64
		SPRT        *struct {
			LLR, Lower, Upper float64
			Result            string
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	if out.SPRT == nil || out.SPRT.Result != "H1" || out.SPRT.LLR < out.SPRT.Upper {
		t.Fatalf("sprt %+v, want H1 with the LLR at or over the upper bound\n%s", out.SPRT, stderr.String())
	}
	if n := len(out.Games); n >= 100 {
		t.Errorf("H1 after %d games, want well before 200", n)
	}
	if !strings.Contains(stderr.String(), "LLR") || !strings.Contains(stderr.String(), "H1 accepted") {
		t.Errorf("no LLR in the progress, or no decision:\n%s", stderr.String())
	}
	// The stored match has the games the output counts, finished.
	db, match := storedMatch(t, dbPath)
	if counts, _ := db.CountGames(context.Background(), match.ID); counts["finished"] != int64(len(out.Games)) {
		t.Errorf("stored %v, the output has %d games", counts, len(out.Games))
	}
	t.Logf("H1 after %d games, pentanomial %v, LLR %.2f (%.2f, %.2f)", len(out.Games), out.Pentanomial, out.SPRT.LLR, out.SPRT.Lower, out.SPRT.Upper)
}

// Bad --openings and --sprt words are refused by name.
func TestMatchBadOpeningsAndSPRT(t *testing.T) {
	suite := filepath.Join(t.TempDir(), "suite.txt")
	if err := os.WriteFile(suite, []byte("f5d6\nf5d6z9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--openings", "nonsense"}, "nonsense"},
		{[]string{"--openings", "builtin order=shuffled"}, "openings.order"},
		{[]string{"--openings", "file=" + suite}, "line 2"},
		{[]string{"--openings", "file=/nonexistent/suite.txt"}, "openings.file"},
		{[]string{"--openings", "builtin", "--games", "3"}, "even"},
		{[]string{"--sprt", "elo0=0"}, "elo1"},
		{[]string{"--sprt", "elo0=0 elo1=5 gamma=1"}, "gamma"},
	} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"match"}, tc.args...), "othello-random", "othello-greedy")
		if code := run(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// upload registers an engine with its files through the API.
func upload(tb testing.TB, s *serverProcess, meta string, files map[string][]byte) int64 {
	tb.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormField("meta")
	w.Write([]byte(meta))
	for name, b := range files {
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(b)
	}
	mw.Close()
	var out struct{ ID int64 }
	s.call(tb, "POST", "/api/engines", &body, mw.FormDataContentType(), &out)
	return out.ID
}

// waitFor polls cond every 10 ms until it holds or within passes.
func waitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

type gameDetail struct {
	apiGame
	EndedAt string `json:"ended_at"`
	Sandbox *string
	Usage   map[string]struct {
		Sandboxed  bool
		Status     string
		OOMKilled  bool    `json:"oom_killed"`
		PeakMemory int64   `json:"peak_memory_bytes"`
		CPUMS      float64 `json:"cpu_ms"`
	}
}
