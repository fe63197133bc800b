package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// legalGame is a random Othello game played to its end under the rules.
func legalGame(tb testing.TB, seed uint64) games.Record {
	tb.Helper()
	g, ok := games.Lookup("othello")
	if !ok {
		tb.Fatal("no othello")
	}
	rules, err := g.New("", 8)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	var rec games.Record
	passes := 0
	for rules.Turn() != games.None && !rules.Finished() && passes < 2 {
		m := games.PassMove
		if !rules.MustPass() {
			m = rules.Random(r)
		}
		rec.Moves = append(rec.Moves, games.Ply{Color: rules.Turn(), Move: m})
		rules.Play(m)
		if m.Pass {
			passes++
		} else {
			passes = 0
		}
	}
	rec.Outcome = games.Outcome{Winner: rules.Winner(), Reason: games.ReasonNormal}
	if w := rules.Winner(); w != games.None {
		rec.Outcome.Loser = w.Opponent()
	}
	return rec
}

// A rogue client on the workers' NATS (issue 36, item 4): a result from a
// worker that does not hold the game's claim is refused; the claim holder's
// result that does not replay under the rules ("white won, 0 plies") is
// stored as aborted, to be played again, never scored; ticks beyond the
// bound, or too big, are not shown.
func TestRogueResultsAndTicks(t *testing.T) {
	t.Parallel()
	nc := embedded(t)
	ctx := context.Background()
	srv, err := NewServer(ctx, nc, 5*time.Second, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var shown atomic.Int64
	got := playing(ctx, srv, tournament.GameSpec{ID: 7, Settings: tournament.Settings{Game: "othello", Size: 8},
		OnMove: func(tournament.Tick) { shown.Add(1) }})
	answer := func(kind string, v any) string {
		t.Helper()
		a, err := ask(nc, oldSubject(7, kind), v)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return a
	}
	claimGo(t, nc, oldSubject(7, "claim"), claimMsg{Attempt: 1, Worker: "honest"})
	// 3,000 ticks, and one of 5 KB.
	for i := range 3000 {
		data, _ := json.Marshal(tickMsg{Attempt: 1, Tick: tournament.Tick{Ply: i + 1}})
		nc.Publish(oldSubject(7, "tick"), data)
	}
	big, _ := json.Marshal(tickMsg{Attempt: 1, Tick: tournament.Tick{Ply: 1, Move: games.Ply{Note: strings.Repeat("x", 5000)}}})
	nc.Publish(oldSubject(7, "tick"), big)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A legal game, but not from the claim's worker.
	stolen := legalGame(t, 3)
	if a := answer("result", resultMsg{Attempt: 1, Worker: "mallory", Played: &tournament.Played{Record: stolen}}); a != answerStale {
		t.Errorf("a result from a worker without the claim: %s, want stale", a)
	}
	select {
	case p := <-got:
		t.Fatalf("a result from a worker without the claim was taken: %+v", p.Outcome)
	default:
	}
	// The claim's worker hands in a game the rules do not allow.
	fake := games.Record{Outcome: games.Outcome{Winner: games.White, Loser: games.Black, Reason: games.ReasonNormal}}
	answer("result", resultMsg{Attempt: 1, Worker: "honest", Played: &tournament.Played{Record: fake}})
	p := stored(t, got)
	t.Logf("fake result stored as %+v (%s); %d of 3,001 ticks shown; stats %+v", p.Outcome, p.Detail, shown.Load(), srv.Stats())
	if p.Outcome.Reason != games.ReasonAborted || !strings.Contains(p.Detail, "refused") {
		t.Errorf("'white won, 0 plies' stored as %+v (%s), want aborted (played again)", p.Outcome, p.Detail)
	}
	if n := shown.Load(); n > maxTicks {
		t.Errorf("%d ticks shown, want at most %d", n, maxTicks)
	}
	if st := srv.Stats(); st.Rejected != 2 {
		t.Errorf("stats %+v, want 2 rejected", st)
	}
}

// oldSubject is a game subject as workers of the release before per-worker
// credentials sent it: no worker name.
func oldSubject(id int64, kind string) string {
	return gamePrefix + strconv.FormatInt(id, 10) + "." + kind
}

// playing has srv play spec as the tournament service does; the channel gets
// the game once it is stored.
func playing(ctx context.Context, srv *Server, spec tournament.GameSpec) <-chan *tournament.Played {
	got := make(chan *tournament.Played, 1)
	go func() {
		p, stored := srv.Play(ctx, spec)
		stored(true)
		got <- p
	}()
	return got
}

// stored waits for the game Play stored.
func stored(t *testing.T, got <-chan *tournament.Played) *tournament.Played {
	t.Helper()
	select {
	case p := <-got:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("Play did not return")
		return nil
	}
}

// notStored checks that Play has not returned yet.
func notStored(t *testing.T, got <-chan *tournament.Played, whose string) {
	t.Helper()
	select {
	case p := <-got:
		t.Fatalf("%s was taken: %+v", whose, p.Outcome)
	default:
	}
}

// ask sends v as a request on subject and returns the server's answer.
func ask(c *nats.Conn, subject string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	m, err := c.Request(subject, data, 10*time.Second)
	if err != nil {
		return "", err
	}
	return string(m.Data), nil
}

// refusedAsk sends v as a request that NATS must refuse (a subject the
// client may not publish on): it fails the test if the request is answered,
// and returns once the permissions violation has arrived on errs, after
// which the request can never be delivered, rather than waiting out the
// request's timeout.
func refusedAsk(t *testing.T, c *nats.Conn, errs chan error, subject string, v any, what string) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answered := make(chan *nats.Msg, 1)
	go func() {
		m, _ := c.RequestWithContext(ctx, subject, data)
		answered <- m
	}()
	violation(t, errs, what)
	cancel()
	if m := <-answered; m != nil {
		t.Errorf("%s: answered %q, want refused", what, m.Data)
	}
}

// claimGo claims a game until the server answers go (Play may not have
// queued it yet).
func claimGo(t *testing.T, c *nats.Conn, subject string, claim claimMsg) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if a, _ := ask(c, subject, claim); a == answerGo {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never claimed the game on %s", claim.Worker, subject)
		}
	}
}

// issue gives each name credentials and returns their secrets. The
// server's own connection nc must stay in through them: while credentials
// reloaded nats-server's users, the first one closed it on an open server
// (a claim then found no responders, and a queued game's publish was lost,
// beside two busy loops).
func issue(t *testing.T, nc *nats.Conn, creds *Credentials, names ...string) map[string]string {
	t.Helper()
	secrets := map[string]string{}
	for _, name := range names {
		s, err := creds.Issue(name)
		if err != nil {
			t.Fatalf("credentials for %s: %v", name, err)
		}
		secrets[name] = s
	}
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		t.Fatalf("the server's NATS connection after the credentials: %v", err)
	}
	if n := nc.Stats().Reconnects; n != 0 {
		t.Fatalf("the server's NATS connection reconnected %d times: the credentials closed it", n)
	}
	return secrets
}

// Per-worker credentials (issue 36, item 4) against rogue NATS clients.
// Before them, every worker held the one token: a client with it claimed and
// answered for any worker, queued games and made workers with heartbeats.
// Now, once the admin issued credentials: without any, or with the old
// shared token, a client cannot connect; with bob's, it cannot publish on
// alice's subjects, read her inbox, queue a game or name a worker in a
// heartbeat, and what it sends on its own subjects is bob's (a result for
// alice's claim from bob is refused); revoked, bob is cut off and cannot come
// back; alice's own result is stored.
func TestWorkerCredentials(t *testing.T) {
	for _, token := range []string{"shared-token", ""} {
		t.Run("token="+token, func(t *testing.T) { workerCredentials(t, token) })
	}
}

// credentialed starts an embedded NATS server, a Server on it connected as
// its own user, and the workers' credentials.
func credentialed(t *testing.T, ackWait time.Duration) (*Embedded, *nats.Conn, *Server, *Credentials) {
	t.Helper()
	// The server's log, shown when the test fails (registered first, so
	// it runs after the server has stopped).
	var logs testkit.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the server's log:\n%s", logs.String())
		}
	})
	e, err := StartEmbedded("127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	nc, err := Connect(e.URL(), "server", log, e.ServerAuth())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	srv, err := NewServer(context.Background(), nc, ackWait, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	creds, err := OpenCredentials(filepath.Join(t.TempDir(), "workers.json"), e)
	if err != nil {
		t.Fatal(err)
	}
	srv.UseCredentials(creds)
	return e, nc, srv, creds
}

// dialWorker connects as worker name with its secret; the channel gets the
// connection's asynchronous errors (permissions violations).
func dialWorker(t *testing.T, e *Embedded, name, secret string) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 100)
	c, err := nats.Connect(e.URL(), append(WorkerAuth(name, secret), nats.Timeout(10*time.Second), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))...)
	if err != nil {
		t.Fatalf("%s with its credentials: %v", name, err)
	}
	t.Cleanup(c.Close)
	return c, errs
}

// violation waits for a permissions violation on errs.
func violation(t *testing.T, errs chan error, what string) {
	t.Helper()
	select {
	case err := <-errs:
		if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Errorf("%s: %v, want a permissions violation", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s: no permissions violation", what)
	}
}

func workerCredentials(t *testing.T, token string) {
	t.Setenv(TokenEnv, token)
	e, nc, srv, creds := credentialed(t, 5*time.Second)
	ctx := context.Background()

	// Before the first credential, the shared token (or, without one,
	// nothing) still lets a worker in.
	legacy, err := nats.Connect(e.URL(), nats.Token(token), nats.Timeout(10*time.Second), nats.NoReconnect())
	if err != nil {
		t.Fatalf("the shared token %q before any credential: %v", token, err)
	}
	secrets := issue(t, nc, creds, "alice", "bob")
	bobSecret := secrets["bob"]
	// The first credential closes the shared token's connections.
	for deadline := time.Now().Add(10 * time.Second); !legacy.IsClosed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Error("the shared token's connection stays open after the first credential")
			legacy.Close()
		}
	}
	refused := func(what string, opts ...nats.Option) {
		t.Helper()
		c, err := nats.Connect(e.URL(), append(opts, nats.Timeout(10*time.Second), nats.NoReconnect())...)
		if err == nil {
			c.Close()
			t.Errorf("%s: connected, want refused", what)
		}
	}
	refused("no credentials")
	refused("the shared token", nats.Token("shared-token"))
	refused("alice's name, bob's secret", nats.UserInfo("alice", bobSecret))
	refused("a name without credentials", nats.UserInfo("mallory", bobSecret))
	refused("the server's name", nats.UserInfo(serverUser, bobSecret))

	alice, _ := dialWorker(t, e, "alice", secrets["alice"])
	bob, bobErrs := dialWorker(t, e, "bob", bobSecret)
	violation := func(what string) {
		t.Helper()
		violation(t, bobErrs, what)
	}

	got := playing(ctx, srv, tournament.GameSpec{ID: 7, Settings: tournament.Settings{Game: "othello", Size: 8}})
	claimGo(t, alice, gameSubject(7, "claim", "alice"), claimMsg{Attempt: 1, Worker: "alice"})
	stolen := legalGame(t, 3)
	// On alice's subject: refused by NATS, never reaches the server.
	refusedAsk(t, bob, bobErrs, gameSubject(7, "result", "alice"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: stolen}}, "bob publishes on alice's subject")
	// On the old subject (no name), or his own naming alice: refused by the server.
	refusedAsk(t, bob, bobErrs, oldSubject(7, "result"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: stolen}}, "bob publishes on the old subject")
	if a, err := ask(bob, gameSubject(7, "result", "bob"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: stolen}}); a != answerStale {
		t.Errorf("bob's result for alice's claim: %q %v, want stale", a, err)
	}
	if a, _ := ask(bob, gameSubject(7, "claim", "bob"), claimMsg{Attempt: 1, Worker: "alice"}); a != answerStale {
		t.Errorf("bob claims alice's attempt: %q, want stale", a)
	}
	// A newer attempt, named by bob while alice plays the game (her
	// heartbeat says so): not his.
	hb, _ := json.Marshal(fleet.Heartbeat{Name: "alice", Concurrency: 1, Running: 1, Games: []int64{7}})
	alice.Publish(workerPrefix+"alice", hb)
	alice.Flush()
	for deadline := time.Now().Add(10 * time.Second); len(srv.Workers()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("alice's heartbeat never arrived")
		}
	}
	if a, _ := ask(bob, gameSubject(7, "claim", "bob"), claimMsg{Attempt: 9, Worker: "bob"}); a != answerBusy {
		t.Errorf("bob claims a newer attempt of alice's game: %q, want busy", a)
	}
	if a, err := ask(bob, gameSubject(7, "result", "bob"), resultMsg{Attempt: 9, Worker: "bob", Played: &tournament.Played{Record: stolen}}); a != answerStale {
		t.Errorf("bob's result for the attempt he named: %q %v, want stale", a, err)
	}
	notStored(t, got, "bob's result")
	// Reading alice's replies, queueing a game, a heartbeat as alice or as
	// a worker that is not bob.
	if _, err := bob.Subscribe(inboxPrefix("alice")+".>", func(*nats.Msg) {}); err == nil {
		bob.Flush()
		violation("bob subscribes to alice's inbox")
	}
	bob.Publish(GamesSubject, []byte(`{"game":99}`))
	violation("bob queues a game")
	hb, _ = json.Marshal(fleet.Heartbeat{Name: "alice", Concurrency: 64})
	bob.Publish(workerPrefix+"alice", hb)
	violation("bob's heartbeat as alice")
	hb, _ = json.Marshal(fleet.Heartbeat{Name: "carol", Concurrency: 64})
	bob.Publish(workerPrefix+"bob", hb)
	hb, _ = json.Marshal(fleet.Heartbeat{Name: "bob", Concurrency: 2})
	bob.Publish(workerPrefix+"bob", hb)
	bob.Flush()
	for deadline := time.Now().Add(10 * time.Second); len(srv.Workers()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bob's own heartbeat never arrived")
		}
	}
	if ws := srv.Workers(); len(ws) != 2 || ws[0].Name != "alice" || ws[0].Concurrency != 1 || ws[1].Name != "bob" {
		t.Errorf("workers %+v, want alice (her own heartbeat) and bob", ws)
	}

	// Revoked, bob is cut off and cannot connect again.
	if ok, err := creds.Revoke("bob"); !ok || err != nil {
		t.Fatalf("revoke bob: %v %v", ok, err)
	}
	for deadline := time.Now().Add(10 * time.Second); !bob.IsClosed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bob's connection stays open after his credentials were revoked")
		}
	}
	refused("bob revoked", nats.UserInfo("bob", bobSecret))

	// Alice's own result is stored.
	if a, err := ask(alice, gameSubject(7, "result", "alice"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: stolen}}); a != answerStored {
		t.Errorf("alice's result: %q %v, want stored", a, err)
	}
	if p := stored(t, got); p.Worker != "alice" || p.Outcome.Reason == games.ReasonAborted {
		t.Errorf("stored %+v by %q, want alice's game", p.Outcome, p.Worker)
	}

	// A new secret for alice closes her connection and refuses the old
	// secret; the new one connects. The server's connection stays in.
	fresh := issue(t, nc, creds, "alice")["alice"]
	for deadline := time.Now().Add(10 * time.Second); !alice.IsClosed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("alice's connection stays open after her new secret")
		}
	}
	refused("alice's old secret", nats.UserInfo("alice", secrets["alice"]))
	dialWorker(t, e, "alice", fresh)
	t.Logf("stats %+v", srv.Stats())
}

// A worker's credentials (issue 36, item 4) do not reach beyond its own
// work: another worker's queue message cannot be acknowledged, handed back
// (which would have let bob claim alice's game when it came round again) or
// ended, not even by its exact subject; alice still acknowledges her own
// message. (Logs: TestWorkerLogsAreItsOwn.)
func TestWorkerPermissionsNarrow(t *testing.T) {
	t.Parallel()
	e, nc, _, creds := credentialed(t, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secrets := issue(t, nc, creds, "alice", "bob")
	alice, _ := dialWorker(t, e, "alice", secrets["alice"])
	bob, bobErrs := dialWorker(t, e, "bob", secrets["bob"])

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, GamesSubject, []byte(`{"game":7}`)); err != nil {
		t.Fatal(err)
	}
	ajs, err := jetstream.New(alice)
	if err != nil {
		t.Fatal(err)
	}
	acons, err := ajs.Consumer(ctx, Stream, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := acons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var m jetstream.Msg
	for msg := range batch.Messages() {
		m = msg
	}
	if m == nil {
		t.Fatalf("alice took no message: %v", batch.Error())
	}
	meta, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	// Bob, on alice's message: its own ack subject, and one forged from the
	// sequence numbers.
	forged := fmt.Sprintf("$JS.ACK.%s.%s.1.%d.%d.0.0", Stream, Consumer, meta.Sequence.Stream, meta.Sequence.Consumer)
	for _, a := range []struct{ subject, body string }{
		{m.Reply(), "-NAK"}, {m.Reply(), "+TERM"}, {m.Reply(), "+ACK"}, {m.Reply(), "+WPI"},
		{forged, "-NAK"}, {forged, "+ACK"},
	} {
		bob.Publish(a.subject, []byte(a.body))
		violation(t, bobErrs, fmt.Sprintf("bob sends %s to %s", a.body, a.subject))
	}
	info, err := js.Consumer(ctx, Stream, Consumer)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := info.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ci.NumAckPending != 1 || ci.NumRedelivered != 0 || ci.NumPending != 0 {
		t.Errorf("after bob's acks: %d pending ack, %d redelivered, %d waiting; want alice's message pending with her alone (1, 0, 0)", ci.NumAckPending, ci.NumRedelivered, ci.NumPending)
	}
	// A credential issued meanwhile changes nothing of alice's: she still
	// answers the message she took. (While credentials reloaded
	// nats-server's users, she could not: the reload forgot her replies.)
	issue(t, nc, creds, "carol")
	// Alice tells the queue she is at work, then acknowledges.
	if err := m.InProgress(); err != nil {
		t.Fatal(err)
	}
	if err := m.DoubleAck(ctx); err != nil {
		t.Fatalf("alice acknowledges her own message: %v", err)
	}
	if ci, err = info.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if ci.NumAckPending != 0 || ci.NumPending != 0 {
		t.Errorf("after alice's ack: %d pending ack, %d waiting; want 0, 0", ci.NumAckPending, ci.NumPending)
	}
}

// A worker's engine logs are its own (issue 36, item 4; a participant's
// engine output is private). Before, every worker put them in the one bucket
// taikai-logs, under names anyone could guess (g<game>-a<attempt>-<colour>),
// and every worker's credentials could read, overwrite and delete objects
// there. Now alice puts hers, as her worker does, and bob, with credentials
// of his own, cannot read, put over, delete or purge them, neither through
// the object store's API nor by their subjects, in alice's bucket or in the
// old shared one; his own logs he puts. The server stores alice's logs as she
// put them, then deletes her objects.
func TestWorkerLogsAreItsOwn(t *testing.T) {
	t.Parallel()
	e, nc, srv, creds := credentialed(t, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	secrets := issue(t, nc, creds, "alice", "bob")
	alice, _ := dialWorker(t, e, "alice", secrets["alice"])
	bob, bobErrs := dialWorker(t, e, "bob", secrets["bob"])

	got := playing(ctx, srv, tournament.GameSpec{ID: 7, Settings: tournament.Settings{Game: "othello", Size: 8}, LogDir: t.TempDir()})
	claimGo(t, alice, gameSubject(7, "claim", "alice"), claimMsg{Attempt: 1, Worker: "alice"})
	// Bob has a claim of his own (the server answers busy: alice plays it).
	if a, err := ask(bob, gameSubject(7, "claim", "bob"), claimMsg{Attempt: 2, Worker: "bob"}); err != nil {
		t.Fatalf("bob's claim: %v", err)
	} else {
		t.Logf("bob's claim of attempt 2: %s", a)
	}
	putLogs := func(c *nats.Conn, who string, texts [2]string) [2]string {
		t.Helper()
		js, err := jetstream.New(c)
		if err != nil {
			t.Fatal(err)
		}
		var paths [2]string
		for i, text := range texts {
			paths[i] = filepath.Join(t.TempDir(), who+".log")
			if err := os.WriteFile(paths[i], []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w := &Worker{Name: who, js: js, Log: log}
		names := w.putLogs(ctx, log, 7, 1, paths)
		if names[0] == "" || names[1] == "" {
			t.Fatalf("%s's logs not put: %q", who, names)
		}
		return names
	}
	texts := [2]string{"alice's black engine: book f5d6c3", "alice's white engine: eval weights"}
	names := putLogs(alice, "alice", texts)

	bjs, err := jetstream.New(bob)
	if err != nil {
		t.Fatal(err)
	}
	for _, bucket := range []string{LogBucket, LogBucket + "-alice"} {
		// Through the object store's API, each step given its time, or
		// until NATS refuses it (a refused request is never answered).
		within := func(f func(context.Context) error) error {
			bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- f(bctx) }()
			select {
			case err := <-done:
				return err
			case err := <-bobErrs:
				if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
					t.Errorf("bob's request: %v, want a permissions violation", err)
				}
				cancel()
				return <-done
			}
		}
		var store jetstream.ObjectStore
		if within(func(ctx context.Context) (err error) { store, err = bjs.ObjectStore(ctx, bucket); return err }) == nil {
			for _, name := range names {
				var data []byte
				if within(func(ctx context.Context) (err error) { data, err = store.GetBytes(ctx, name); return err }) == nil {
					t.Errorf("bob read alice's log %s in %s: %q", name, bucket, data)
				}
				if within(func(ctx context.Context) error {
					_, err := store.PutBytes(ctx, name, []byte("bob's forgery"))
					return err
				}) == nil {
					t.Errorf("bob put over alice's log %s in %s", name, bucket)
				}
				if within(func(ctx context.Context) error { return store.Delete(ctx, name) }) == nil {
					t.Errorf("bob deleted alice's log %s in %s", name, bucket)
				}
			}
		}
		// By the subjects: asking for the stream, an object's description
		// or a message of it, putting over its description or a chunk
		// (deleting is putting a description), purging or deleting the
		// stream.
		stream := "OBJ_" + bucket
		for _, subject := range []string{
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.DIRECT.GET." + stream + ".$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(names[0])),
			"$JS.API.DIRECT.GET." + stream,
			"$JS.API.STREAM.MSG.GET." + stream,
			"$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(names[0])),
			"$O." + bucket + ".C.forged",
			"$JS.API.STREAM.PURGE." + stream,
			"$JS.API.STREAM.DELETE." + stream,
		} {
			bob.Publish(subject, []byte(`{"seq":1}`))
			violationOn(t, bobErrs, subject)
		}
	}
	// His own he puts.
	putLogs(bob, "bob", [2]string{"bob's black", "bob's white"})

	if a, err := ask(alice, gameSubject(7, "result", "alice"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: legalGame(t, 3)}, Logs: names}); a != answerStored {
		t.Fatalf("alice's result: %q %v, want stored", a, err)
	}
	p := stored(t, got)
	for i, path := range p.Logs {
		data, err := os.ReadFile(path)
		if err != nil || string(data) != texts[i] {
			t.Errorf("%s's log as stored (%s): %q %v, want %q", colors[i], path, data, err, texts[i])
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	store, err := js.ObjectStore(ctx, LogBucket+"-alice")
	if err != nil {
		t.Fatalf("alice's bucket: %v", err)
	}
	for _, name := range names {
		if _, err := store.GetInfo(ctx, name); !errors.Is(err, jetstream.ErrObjectNotFound) {
			t.Errorf("alice's log %s after the game was stored: %v, want deleted", name, err)
		}
	}
}

// violationOn waits for a permissions violation on subject among errs.
func violationOn(t *testing.T, errs chan error, subject string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case err := <-errs:
			if msg := err.Error(); strings.Contains(strings.ToLower(msg), "permissions violation") && strings.Contains(msg, `"`+subject+`"`) {
				return
			}
		case <-deadline:
			t.Errorf("bob on %s: no permissions violation", subject)
			return
		}
	}
}

// With a join token (the compose deployment's), the embedded NATS server
// takes workers' own credentials only from the start: before any worker
// enrolled, neither an anonymous client nor the shared token gets in, and
// the server itself still does.
func TestJoinTokenCredentialsOnly(t *testing.T) {
	t.Setenv(TokenEnv, "shared-token")
	t.Setenv(fleet.JoinTokenEnv, "join-token-0123456789abcdef")
	e, _, _, creds := credentialed(t, 5*time.Second)
	for _, c := range []struct {
		what string
		opts []nats.Option
	}{
		{"no credentials", nil},
		{"the shared token", []nats.Option{nats.Token("shared-token")}},
		{"the join token", []nats.Option{nats.Token("join-token-0123456789abcdef")}},
	} {
		nc, err := nats.Connect(e.URL(), append(c.opts, nats.Timeout(10*time.Second), nats.NoReconnect())...)
		if err == nil {
			nc.Close()
			t.Errorf("%s, no worker enrolled yet: connected, want refused", c.what)
		}
	}
	secret, err := creds.Enroll("join-token-0123456789abcdef", "w1")
	if err != nil {
		t.Fatal(err)
	}
	dialWorker(t, e, "w1", secret)
	if _, err := creds.Enroll("join-token-0123456789abcdef", "w1"); !errors.Is(err, fleet.ErrNameIsUsed) {
		t.Errorf("enroll w1 again: %v, want %v", err, fleet.ErrNameIsUsed)
	}
	if _, err := creds.Enroll("wrong", "w2"); !errors.Is(err, fleet.ErrJoinToken) {
		t.Errorf("enroll with a wrong join token: %v, want %v", err, fleet.ErrJoinToken)
	}
}

// cutter forwards TCP connections to a NATS server and can cut them all.
type cutter struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		c.cut()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("tcp", target, 10*time.Second)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			wg.Go(func() { io.Copy(out, in); out.Close() })
			wg.Go(func() { io.Copy(in, out); in.Close() })
		}
	})
	return c
}

func (c *cutter) url() string { return "nats://" + c.ln.Addr().String() }

// cut closes every connection forwarded so far.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// A worker's acknowledgements are a permission of its connection: after a
// reconnect it cannot tell the queue it still plays the game it took, and the
// queue hands that game out again after the ack wait. The server answers the
// new claim busy while the worker's heartbeats list the game, so the game is
// not played again: alice's result is stored at her first attempt, and the
// message, handed out once more, is answered gone and ended.
func TestReconnectedWorkerKeepsItsGame(t *testing.T) {
	t.Parallel()
	e, nc, srv, creds := credentialed(t, 2*time.Second) // the ack wait, waited out once below
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secrets := issue(t, nc, creds, "alice", "bob")
	proxy := newCutter(t, strings.TrimPrefix(e.URL(), "nats://"))
	aliceErrs, reconnected := make(chan error, 100), make(chan struct{}, 1)
	alice, err := nats.Connect(proxy.url(), append(WorkerAuth("alice", secrets["alice"]), nats.Timeout(10*time.Second),
		nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case aliceErrs <- err:
			default:
			}
		}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob, _ := dialWorker(t, e, "bob", secrets["bob"])

	got := playing(ctx, srv, tournament.GameSpec{ID: 7, Settings: tournament.Settings{Game: "othello", Size: 8}})
	take := func(c *nats.Conn, who string) (jetstream.Msg, uint64) {
		t.Helper()
		js, err := jetstream.New(c)
		if err != nil {
			t.Fatal(err)
		}
		cons, err := js.Consumer(ctx, Stream, Consumer)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			return m, meta.NumDelivered
		}
		t.Fatalf("%s took no message within 30 s: %v", who, batch.Error())
		return nil, 0
	}
	claim := func(c *nats.Conn, who string, attempt uint64) string {
		t.Helper()
		a, err := ask(c, gameSubject(7, "claim", who), claimMsg{Attempt: int(attempt), Worker: who})
		if err != nil {
			t.Fatalf("%s's claim: %v", who, err)
		}
		return a
	}
	m, n := take(alice, "alice")
	if a := claim(alice, "alice", n); n != 1 || a != answerGo {
		t.Fatalf("alice's claim of delivery %d: %s", n, a)
	}
	// Alice's heartbeats say she plays game 7.
	beats, stopBeats := context.WithCancel(ctx)
	defer stopBeats()
	go func() {
		hb, _ := json.Marshal(fleet.Heartbeat{Name: "alice", Concurrency: 1, Running: 1, Games: []int64{7}})
		for {
			alice.Publish(workerPrefix+"alice", hb)
			select {
			case <-beats.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()

	proxy.cut()
	select {
	case <-reconnected:
	case <-time.After(30 * time.Second):
		t.Fatal("alice did not reconnect")
	}
	m.InProgress()
	violation(t, aliceErrs, "alice's progress on a message taken before her reconnect")

	// The queue hands it out again (after the ack wait): bob's claim is busy.
	m2, n2 := take(bob, "bob")
	if a := claim(bob, "bob", n2); n2 != 2 || a != answerBusy {
		t.Errorf("bob's claim of delivery %d while alice plays the game: %s, want delivery 2 and busy", n2, a)
	}
	m2.NakWithDelay(time.Second)

	// Alice's result is stored, at her first attempt; nothing was played again.
	if a, err := ask(alice, gameSubject(7, "result", "alice"), resultMsg{Attempt: 1, Worker: "alice", Played: &tournament.Played{Record: legalGame(t, 5)}}); a != answerStored {
		t.Fatalf("alice's result: %q %v, want stored", a, err)
	}
	p := stored(t, got)
	if p.Worker != "alice" || p.Attempt != 1 || p.Outcome.Reason == games.ReasonAborted {
		t.Errorf("stored %+v by %q at attempt %d, want alice's game at attempt 1", p.Outcome, p.Worker, p.Attempt)
	}
	if st := srv.Stats(); st.Redelivered != 0 {
		t.Errorf("stats %+v: the game was played again", st)
	}
	stopBeats()
	// Handed out once more: the server no longer waits for it; ended.
	m3, n3 := take(bob, "bob")
	if a := claim(bob, "bob", n3); a != answerGone {
		t.Errorf("bob's claim of delivery %d after the result was stored: %s, want gone", n3, a)
	}
	if err := m3.DoubleAck(ctx); err != nil { // as the worker's Term, confirmed
		t.Fatal(err)
	}
}
