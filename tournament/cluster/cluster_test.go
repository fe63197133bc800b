package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// TestMain runs the tests without a shared NATS token whatever the shell
// has (StartEmbedded reads TokenEnv): the tests that want one set it, and
// run one at a time, before the parallel ones, which wait out ack waits side
// by side.
func TestMain(m *testing.M) {
	os.Unsetenv(TokenEnv)
	os.Exit(m.Run())
}

// embedded starts a NATS server with JetStream on a free loopback port.
func embedded(t *testing.T) *nats.Conn {
	t.Helper()
	e, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	nc, err := Connect(e.URL(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// An engine directory packs to the same bytes whatever the files' times, and
// unpacks to the same files and modes.
func TestPackUnpack(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "lib", "deep"), 0o755)
	os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	os.WriteFile(filepath.Join(src, "lib", "deep", "book.txt"), []byte("f5d6"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(src, "link"))
	data, hash, err := pack(src)
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(src, "run.sh"), time.Unix(1, 0), time.Unix(1, 0))
	data2, hash2, err := pack(src)
	if err != nil || hash2 != hash || string(data2) != string(data) {
		t.Fatalf("packing again after a touch gave another archive (%s, %s, %v)", hash, hash2, err)
	}
	dst := t.TempDir()
	if err := unpack(data, dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"run.sh": "#!/bin/sh\necho hi\n", "lib/deep/book.txt": "f5d6"} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if st, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("run.sh lost its execute bits: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Join(dst, "lib", "deep", "book.txt")); err != nil || st.Mode().Perm()&0o004 == 0 {
		t.Errorf("book.txt is not readable by the sandboxed engine's user: %v %v", st.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "link")); !os.IsNotExist(err) {
		t.Errorf("the symbolic link travelled: %v", err)
	}
}

// A worker's cache takes engine files by content: bytes that do not hash to
// their name are refused, and at most max directories are kept.
func TestCacheVerifiesAndBounds(t *testing.T) {
	nc := embedded(t)
	ctx := context.Background()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(ctx, js, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	store, err := js.ObjectStore(ctx, EngineBucket)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCache(t.TempDir(), 2, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for _, text := range []string{"one", "two", "three"} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "engine.py"), []byte(text), 0o644)
		data, hash, err := pack(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.PutBytes(ctx, hash, data); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hash)
		got, release, err := c.get(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(got, "engine.py")); string(b) != text {
			t.Errorf("engine %s: %q", text, b)
		}
		release()
	}
	if n := c.size(); n != 2 {
		t.Errorf("cache keeps %d directories, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(c.dir, hashes[0])); !os.IsNotExist(err) {
		t.Errorf("the least recently used directory is still there: %v", err)
	}
	// Someone with write access to the bucket swaps the bytes.
	bad := "0000000000000000000000000000000000000000000000000000000000000000"
	if _, err := store.PutBytes(ctx, bad, []byte("not what the name says")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.get(ctx, bad); err == nil {
		t.Error("bytes that do not hash to their name were taken")
	}
}

// A played game survives its trip from worker to server in JSON.
func TestPlayedRoundTrip(t *testing.T) {
	p := &tournament.Played{
		Spec: tournament.GameSpec{ID: 7, Black: engines.Engine{Name: "a"}, White: engines.Engine{Name: "b"}, Settings: tournament.Settings{Game: "othello", Size: 8},
			OnMove: func(tournament.Tick) {}},
		Record: games.Record{
			Moves:      []games.Ply{{Color: games.Black, Move: games.Move{X: 3, Y: 2}, MS: 12, Note: "+4"}, {Color: games.White, Move: games.PassMove, Auto: true}},
			Outcome:    games.Outcome{Winner: games.White, Reason: games.ReasonTimeout, Loser: games.Black},
			Violations: [2]games.Violations{{"occupied": 1}, nil},
			Stones:     [2]int{20, 44},
		},
		Nicks: [2]string{"x", ""}, Exits: [2]string{"exit status 0", "signal: killed"}, Sandbox: "on",
		Usage: [2]engines.Usage{{Sandboxed: true, PeakMemory: 1 << 20, CPUTime: time.Second}, {}}, ConnectMS: [2]int64{5, 6},
	}
	data, err := json.Marshal(resultMsg{Attempt: 2, Worker: "w", Played: p})
	if err != nil {
		t.Fatal(err)
	}
	var r resultMsg
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	p.Spec.OnMove = nil
	if !reflect.DeepEqual(r.Played, p) {
		t.Errorf("after the trip:\n%+v\nwant\n%+v", r.Played, p)
	}
}

// The server keeps the latest claimed attempt of a game: a result of an
// older attempt (a worker cut off, whose game was played again) is
// discarded, and so are its moves; the newer attempt's result is the one
// stored, and only then answered.
func TestLateResultDiscarded(t *testing.T) {
	t.Parallel()
	nc := embedded(t)
	ctx := context.Background()
	// An ack wait of 2 s, waited out once below: wide beside the
	// milliseconds between the two claims that must fall within it.
	srv, err := NewServer(ctx, nc, 2*time.Second, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	moves := make(chan tournament.Tick, 10)
	restarted := make(chan struct{}, 1)
	spec := tournament.GameSpec{ID: 42, Settings: tournament.Settings{Game: "othello", Size: 8},
		OnMove: func(t tournament.Tick) { moves <- t }, OnRestart: func() { restarted <- struct{}{} }}
	type played struct {
		p      *tournament.Played
		stored func(bool)
	}
	got := make(chan played, 1)
	go func() {
		p, stored := srv.Play(ctx, spec)
		got <- played{p, stored}
	}()
	ask := func(kind string, v any) string {
		t.Helper()
		data, _ := json.Marshal(v)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			m, err := nc.Request(oldSubject(42, kind), data, 10*time.Second)
			if err == nil {
				return string(m.Data)
			}
			time.Sleep(10 * time.Millisecond) // Play may not have registered the game yet
		}
		t.Fatalf("no answer to %s", kind)
		return ""
	}
	tick := func(attempt, ply int) {
		data, _ := json.Marshal(tickMsg{Attempt: attempt, Tick: tournament.Tick{Ply: ply}})
		nc.Publish(oldSubject(42, "tick"), data)
		nc.Flush()
	}
	// Wait until the game is on the queue (claims before are answered gone).
	for deadline := time.Now().Add(30 * time.Second); ask("claim", claimMsg{Attempt: 1, Worker: "a"}) != answerGo; {
		if time.Now().After(deadline) {
			t.Fatal("the game was never claimable")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tick(1, 1)
	// While a was seen playing it in the last ackWait (2 s; here its
	// claim), b's claim of a newer attempt is answered busy; then go.
	if a := ask("claim", claimMsg{Attempt: 2, Worker: "b"}); a != answerBusy {
		t.Errorf("second attempt's claim just after the first: %s, want busy", a)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		a := ask("claim", claimMsg{Attempt: 2, Worker: "b"})
		if a == answerGo {
			break
		}
		if a != answerBusy || time.Now().After(deadline) {
			t.Fatalf("second attempt's claim: %s", a)
		}
	}
	select {
	case <-restarted:
	case <-time.After(10 * time.Second):
		t.Fatal("viewers not told that the game starts again")
	}
	tick(1, 2) // the cut-off worker's move: not shown
	tick(2, 1)
	if a := ask("claim", claimMsg{Attempt: 1, Worker: "a"}); a != answerStale {
		t.Errorf("old attempt's claim again: %s, want stale", a)
	}
	old := &tournament.Played{Record: games.Record{Outcome: games.Outcome{Winner: games.Black, Reason: games.ReasonNormal}}}
	if a := ask("result", resultMsg{Attempt: 1, Worker: "a", Played: old}); a != answerStale {
		t.Errorf("old attempt's result: %s, want stale", a)
	}
	// The newer result is answered only once the server stored it.
	newer := &tournament.Played{Record: legalGame(t, 7)}
	want := newer.Outcome.Winner
	data, _ := json.Marshal(resultMsg{Attempt: 2, Worker: "b", Played: newer})
	reply := make(chan string, 1)
	go func() {
		m, err := nc.Request(oldSubject(42, "result"), data, 30*time.Second)
		if err != nil {
			reply <- err.Error()
			return
		}
		reply <- string(m.Data)
	}()
	var pl played
	select {
	case pl = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("Play did not return the result")
	}
	if pl.p.Worker != "b" || pl.p.Attempt != 2 || pl.p.Outcome.Reason != games.ReasonNormal || pl.p.Outcome.Winner != want || pl.p.Spec.ID != 42 {
		t.Errorf("played %+v by %s attempt %d, want %v's normal win from b, attempt 2", pl.p.Outcome, pl.p.Worker, pl.p.Attempt, want)
	}
	select {
	case a := <-reply:
		t.Fatalf("the result was answered (%s) before it was stored", a)
	default:
	}
	pl.stored(true)
	if a := <-reply; a != answerStored {
		t.Errorf("newer result answered %s, want stored", a)
	}
	close(moves)
	var seen []int
	for m := range moves {
		seen = append(seen, m.Ply)
	}
	if !reflect.DeepEqual(seen, []int{1, 1}) {
		t.Errorf("moves shown %v, want attempt 1's first move then attempt 2's (none of the old attempt after the new one)", seen)
	}
	if st := srv.Stats(); st.Redelivered != 1 || st.DiscardedLateResult != 1 || st.Queued+st.Running != 0 {
		t.Errorf("stats %+v", st)
	}
}

// An engine's directory travels by content; one the server cannot read is
// left to the worker's own path (the engine then fails to start there, as it
// would on the server), and built-ins send nothing.
func TestJobFiles(t *testing.T) {
	nc := embedded(t)
	srv, err := NewServer(context.Background(), nc, 5*time.Second, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bot.py"), []byte("print('hi')"), 0o644)
	_, want, err := pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	spec := tournament.GameSpec{ID: 9,
		Black: engines.Engine{Name: "up", Command: []string{"python3", "bot.py"}, Dir: dir},
		White: engines.Engine{Name: "lost", Command: []string{"python3", "bot.py"}, Dir: missing}}
	j, err := srv.job(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if j.Files[0] != want || j.Black.Dir != "" {
		t.Errorf("black: files %q dir %q, want %q and no server path", j.Files[0], j.Black.Dir, want)
	}
	if j.Files[1] != "" || j.White.Dir != missing {
		t.Errorf("white: files %q dir %q, want none and its own path", j.Files[1], j.White.Dir)
	}
	// The same directory again: the same name; once a file changes, a new one.
	if j, err = srv.job(context.Background(), spec); err != nil || j.Files[0] != want {
		t.Errorf("again: files %q (%v), want %q", j.Files[0], err, want)
	}
	os.WriteFile(filepath.Join(dir, "bot.py"), []byte("print('better')"), 0o644)
	os.Chtimes(filepath.Join(dir, "bot.py"), time.Unix(2e9, 0), time.Unix(2e9, 0))
	_, changed, _ := pack(dir)
	if j, err = srv.job(context.Background(), spec); err != nil || j.Files[0] != changed || changed == want {
		t.Errorf("after a change: files %q (%v), want %q, not %q", j.Files[0], err, changed, want)
	}
	spec.Black = engines.Engine{Name: "b", Builtin: "othello-random", Dir: dir}
	if j, err = srv.job(context.Background(), spec); err != nil || j.Files[0] != "" || j.Black.Dir != "" {
		t.Errorf("built-in: files %q dir %q (%v), want nothing sent", j.Files[0], j.Black.Dir, err)
	}
}

// With TAIKAI_NATS_TOKEN set, the embedded server refuses a client without
// it, and Connect presents it.
func TestEmbeddedToken(t *testing.T) {
	t.Setenv(TokenEnv, "s3cret-token")
	e, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if nc, err := nats.Connect(e.URL(), nats.Timeout(10*time.Second)); err == nil {
		nc.Close()
		t.Fatal("a client without the token was let in")
	}
	if nc, err := nats.Connect(e.URL(), nats.Token("wrong"), nats.Timeout(10*time.Second)); err == nil {
		nc.Close()
		t.Fatal("a client with a wrong token was let in")
	}
	nc, err := Connect(e.URL(), "test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		t.Errorf("Connect with the token: %v", err)
	}
}
