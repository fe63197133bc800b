//go:build docker

// Package deploy_test runs the deployment for real: it builds the base images
// the Dockerfile names (deploy/base-images.sh, no registry needed), builds and
// starts docker-compose.yml (the server, its NATS inside it, and a worker
// with credentials of its own), lets a rogue NATS client on the compose
// network try to bend a game the worker plays, plays a short tournament
// through the REST API, takes the stack down without its volumes, starts it
// again and checks that the volume kept every game (TestComposeDeployment). TestComposeWorkersLost then runs three workers,
// kills one and cuts another off the network while they play, and checks that
// the tournament still ends with every game played exactly once.
//
//	go test -tags docker -count=1 -timeout 60m -v ./deploy/
//
// It takes minutes (the first run builds the images) and needs root for
// debootstrap. Without a Docker engine it skips, unless CI=true.
package deploy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/taikai-dev/taikai/internal/testkit"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	service        = "taikai"
	workerService  = "worker"
	testImage      = "taikai:compose-test" // kept between runs: its layers are the next build's cache
	lostWorkerWait = 5 * time.Second       // TAIKAI_WORKER_TIMEOUT of TestComposeWorkersLost
	pollEvery      = 500 * time.Millisecond
	baseImages     = 25 * time.Minute // debootstrap + apt + the Go toolchain, first run
	buildAndUp     = 20 * time.Minute // apt-get of the runtime stage, go mod download, cgo
	startUp        = 3 * time.Minute  // from `up -d` to GET /healthz 200
	healthy        = 2 * time.Minute  // Docker's HEALTHCHECK (interval 30s) reports healthy
	playing        = 5 * time.Minute  // the demo tournament
	chaos          = 20 * time.Minute // TestComposeWorkersLost's tournament, kills and cuts included
	rejoin         = 5 * time.Minute  // a worker cut off, then connected again, is heard from again
	stopDown       = 3 * time.Minute  // stop (up to stop_grace_period 30s), down
)

// stack is one compose project of the test: its own name, env file, image tag,
// volume and host port.
type stack struct {
	t       *testing.T
	command []string // "docker compose" or "docker-compose"
	root    string   // repository root: docker-compose.yml, the build context
	project string
	env     []string // the environment every compose command runs with
	volume  string
	token   string
	// natsToken is the shared NATS token in the env file, joinToken the
	// workers' join token: the server takes the latter and refuses the
	// former.
	natsToken, joinToken string
	// anonymous volumes seen on the project's containers (the workers' /data):
	// `down` without -v leaves them behind, cleanup removes them.
	anonymous map[string]bool
	base      string // http://127.0.0.1:PORT
	client    *http.Client
}

// options are what a test sets in its stack's environment beyond the defaults.
type options struct {
	workers           int    // --scale worker=N
	workerConcurrency int    // TAIKAI_WORKER_CONCURRENCY
	workerTimeout     string // TAIKAI_WORKER_TIMEOUT in the env file, "" for the default
}

// setUp checks for Docker and Compose, builds the base images, then builds and
// starts docker-compose.yml as a project of its own, and waits for the server
// to answer and for o.workers workers to report in.
func setUp(t *testing.T, o options) *stack {
	ci := os.Getenv("CI") == "true"
	absent := func(format string, args ...any) {
		t.Helper()
		if ci {
			t.Fatalf("CI=true: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("docker"); err != nil {
		absent("docker is not installed")
	}
	if out, err := run(t, 30*time.Second, "", nil, "docker", "info"); err != nil {
		absent("the Docker engine does not answer: %v\n%s", err, out)
	}
	compose := findCompose(t)
	if compose == nil {
		absent("neither `docker compose` nor `docker-compose` works")
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "docker-compose.yml")); err != nil {
		t.Fatal(err)
	}

	// 1. The base images, built locally (kept if they exist).
	start := time.Now()
	if _, err := runLogged(t, baseImages, root, nil, "bash", "deploy/base-images.sh"); err != nil {
		t.Fatalf("deploy/base-images.sh: %v", err)
	}
	t.Logf("base images ready in %s", since(start))

	s := newStack(t, compose, root, o)

	// 2. Build and start.
	start = time.Now()
	previous := map[string]string{testImage: imageID(t, testImage)}
	if _, err := s.composeLogged(buildAndUp, "up", "-d", "--build", "--scale", fmt.Sprintf("%s=%d", workerService, o.workers)); err != nil {
		t.Fatalf("up -d --build: %v", err)
	}
	s.trackVolumes()
	t.Logf("build + up -d: %s", since(start))
	// The images the last run built, replaced by this one's: remove them (and
	// with them their layers this build does not share) unless something uses
	// them.
	for ref, old := range previous {
		if id := imageID(t, ref); old != "" && id != old {
			if _, err := run(t, time.Minute, "", nil, "docker", "rmi", old); err == nil {
				t.Logf("removed the previous %s, %s", ref, old)
			}
		}
	}
	start = time.Now()
	s.waitHealthz()
	t.Logf("GET /healthz answered %s after up", since(start))
	s.checkContainer()
	s.checkSandbox()
	s.checkWorkerContainers(o.workers)
	start = time.Now()
	s.waitWorkers(o.workers)
	t.Logf("%d worker(s) reported in, sandboxed, %s after the server answered", o.workers, since(start))
	s.checkCredentials()
	return s
}

func TestComposeDeployment(t *testing.T) {
	s := setUp(t, options{workers: 1, workerConcurrency: 2})
	s.rogue()

	// 3. A short tournament through the REST API, played by the worker.
	start := time.Now()
	games := s.playTournament()
	t.Logf("tournament of %d games finished in %s", len(games.list), since(start))
	s.waitHealthy()

	// 4. Stop and take the stack down, keeping the volumes.
	start = time.Now()
	s.trackVolumes()
	s.composeOK(stopDown, "stop")
	s.composeOK(stopDown, "down")
	for _, v := range []string{s.volume} {
		if out, err := run(t, 30*time.Second, "", nil, "docker", "volume", "inspect", v); err != nil {
			t.Fatalf("volume %s is gone after `down` without -v: %v\n%s", v, err, out)
		}
	}
	if out, _ := s.compose(30*time.Second, "ps", "-q"); strings.TrimSpace(out) != "" {
		t.Fatalf("containers left after down: %s", out)
	}
	t.Logf("stop + down: %s", since(start))

	// 5. Up again on the same volume: every game is still there.
	start = time.Now()
	s.composeOK(buildAndUp, "up", "-d")
	s.trackVolumes()
	s.waitHealthz()
	s.waitWorkers(1)
	t.Logf("up again, /healthz and the worker after %s", since(start))
	again := s.readGames(games.tournament)
	if !reflect.DeepEqual(again.list, games.list) {
		t.Fatalf("games after the restart differ:\nbefore %+v\nafter  %+v", games.list, again.list)
	}
	for id, n := range games.moves {
		if m := s.moves(id); m != n {
			t.Errorf("game %d: %d moves before the restart, %d after", id, n, m)
		}
	}
	var tour struct{ Status string }
	s.getJSON(fmt.Sprintf("/api/tournaments/%d", games.tournament), &tour)
	if tour.Status != "finished" {
		t.Errorf("tournament %d after the restart: status %q, want finished", games.tournament, tour.Status)
	}
	// The token from the env file still opens the write API, and nothing else
	// does.
	s.expectStatus("POST", "/api/engines", "", `{"name":"x","game":"othello","builtin":"othello-random"}`, http.StatusUnauthorized)
	t.Logf("after the restart: all %d games, their results and moves, are kept", len(again.list))
}

// TestComposeWorkersLost plays a tournament on three workers and, while they
// play, kills one worker container (docker kill) and cuts another off the
// network longer than the worker timeout (docker network disconnect, then
// connect). Their games must be played again elsewhere and the tournament end
// with every game of the schedule finished exactly once, by a worker, and
// standings that match the games.
func TestComposeWorkersLost(t *testing.T) {
	const workers = 3
	s := setUp(t, options{workers: workers, workerConcurrency: 1, workerTimeout: lostWorkerWait.String()})

	// Four engines (two alpha-betas under their own names), six games a pair:
	// 36 games, paced so that each lasts seconds and the tournament minutes.
	var ids []int64
	for _, e := range []struct{ name, builtin string }{
		{"random", "othello-random"}, {"greedy", "othello-greedy"},
		{"alphabeta-1", "othello-alphabeta"}, {"alphabeta-2", "othello-alphabeta"},
	} {
		var eng struct{ ID int64 }
		s.postJSON("/api/engines", map[string]any{"name": e.name, "game": "othello", "builtin": e.builtin}, &eng)
		if eng.ID == 0 {
			t.Fatalf("POST /api/engines %s: no id", e.name)
		}
		ids = append(ids, eng.ID)
	}
	var tour struct {
		ID         int64 `json:"id"`
		TotalGames int   `json:"total_games"`
	}
	s.postJSON("/api/tournaments", map[string]any{
		"name": "workers-lost", "game": "othello", "engines": ids,
		"games_per_pair": 6, "move_time_ms": 300, "pace_ms": 150, "concurrency": workers, "start": true,
	}, &tour)
	if tour.ID == 0 || tour.TotalGames != 36 {
		t.Fatalf("POST /api/tournaments: %+v, want an id and 36 games", tour)
	}
	start := time.Now()
	deadline := start.Add(chaos)

	// 1. Kill a worker container in the middle of a game.
	killed := s.playingWorker(deadline, "", 0)
	t.Logf("%s: docker kill %s (worker %s, game %d at ply %d)", since(start), short(killed.container), killed.worker.Name, killed.game.ID, killed.game.Plies)
	if out, err := run(t, time.Minute, "", nil, "docker", "kill", killed.container); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	lostAt := time.Now()
	// Its game is played again, by another worker, from the start.
	s.waitReplayed(killed, lostAt, deadline)
	t.Logf("%s: game %d given to a new attempt %s after the kill", since(start), killed.game.ID, since(lostAt))

	// 2. Cut another worker off the network while it plays; connect it again
	// once its game has been given to another.
	cut := s.playingWorker(deadline, killed.container, killed.game.ID)
	network := s.network(cut.container)
	t.Logf("%s: docker network disconnect %s %s (worker %s, game %d at ply %d)", since(start), network, short(cut.container), cut.worker.Name, cut.game.ID, cut.game.Plies)
	if out, err := run(t, time.Minute, "", nil, "docker", "network", "disconnect", network, cut.container); err != nil {
		t.Fatalf("docker network disconnect: %v\n%s", err, out)
	}
	cutAt := time.Now()
	s.waitReplayed(cut, cutAt, deadline)
	t.Logf("%s: game %d given to a new attempt %s after the cut", since(start), cut.game.ID, since(cutAt))
	// Connected again only once the server shows it silent and the worker
	// timeout has passed since the cut.
	for {
		silent := false
		for _, w := range s.workers().Workers {
			silent = silent || (w.Name == cut.worker.Name && w.Silent)
		}
		if silent && time.Since(cutAt) > lostWorkerWait+time.Second {
			break
		}
		if time.Since(cutAt) > lostWorkerWait+time.Minute {
			t.Fatalf("worker %s, cut off the network %s ago, not shown silent by GET /api/workers", cut.worker.Name, since(cutAt))
		}
		time.Sleep(pollEvery)
	}
	if out, err := run(t, time.Minute, "", nil, "docker", "network", "connect", network, cut.container); err != nil {
		t.Fatalf("docker network connect: %v\n%s", err, out)
	}
	connectedAt := time.Now()
	t.Logf("%s: docker network connect %s %s, %s after the cut", since(start), network, short(cut.container), since(cutAt))

	// 3. The tournament to its end; meanwhile the worker connected again is
	// heard from again.
	var back time.Duration
	var status struct {
		Status        string `json:"status"`
		FinishedGames int    `json:"finished_games"`
		TotalGames    int    `json:"total_games"`
	}
	for {
		if back == 0 {
			for _, w := range s.workers().Workers {
				if w.Name == cut.worker.Name && !w.Silent && w.LastSeen.After(connectedAt) {
					back = time.Since(connectedAt)
					t.Logf("%s: worker %s heard from again, %s after it was connected again", since(start), w.Name, back.Round(100*time.Millisecond))
				}
			}
		}
		s.getJSON(fmt.Sprintf("/api/tournaments/%d", tour.ID), &status)
		if status.Status == "cancelled" {
			t.Fatalf("tournament %d cancelled", tour.ID)
		}
		if status.Status == "finished" && (back != 0 || time.Since(connectedAt) > rejoin) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tournament %d: %s, %d/%d games, %s after its start", tour.ID, status.Status, status.FinishedGames, status.TotalGames, chaos)
		}
		time.Sleep(pollEvery)
	}
	t.Logf("tournament of %d games finished %s after its start", status.TotalGames, since(start))
	if back == 0 {
		t.Errorf("worker %s, connected again to the network, not heard from within %s", cut.worker.Name, rejoin)
	}

	// 4. Every game of the schedule finished exactly once, by a worker, in a
	// sandbox; the two lost games among those played again.
	s.checkPlayedOnce(tour.ID, tour.TotalGames, killed.game.ID, cut.game.ID)
	w := s.workers()
	if w.Redelivered < 2 {
		t.Errorf("GET /api/workers: redelivered %d, want at least 2 (a killed and a cut-off worker's games)", w.Redelivered)
	}
	t.Logf("GET /api/workers at the end: %d redelivered; workers: %+v", w.Redelivered, w.Workers)
}

// atWork is a worker in the middle of a game, and its container.
type atWork struct {
	worker      workerRow
	container   string
	game        gameDetail
	redelivered int64 // GET /api/workers' count of games played again, then
}

// playingWorker waits for a worker heard from, not in container skip, that
// plays a game other than skipGame already a few plies in, and returns it with
// its container.
func (s *stack) playingWorker(deadline time.Time, skip string, skipGame int64) atWork {
	t := s.t
	t.Helper()
	var last workersList
	for {
		last = s.workers()
		ids := s.containers(workerService)
		for _, w := range last.Workers {
			if w.Silent || len(w.Games) == 0 || w.Games[0] == skipGame {
				continue
			}
			c := containerOf(w, ids)
			if c == "" || c == skip {
				continue
			}
			g := s.game(w.Games[0])
			// A few plies in and far from the end (othello: 60 plies at
			// most). (A running game's worker and attempt are stored when
			// it ends: the heartbeat's games say who plays it.)
			if g.Status == "running" && g.Plies >= 4 && g.Plies <= 30 {
				return atWork{worker: w, container: c, game: g, redelivered: last.Redelivered}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker playing a game a few plies in before the deadline; last GET /api/workers: %+v", last)
		}
		time.Sleep(pollEvery)
	}
}

// waitReplayed waits for the game a lost worker played to be claimed by a
// newer attempt (the server counts it in GET /api/workers' redelivered), which
// only the server's worker timeout can bring about, and returns the game.
func (s *stack) waitReplayed(lost atWork, at, deadline time.Time) gameDetail {
	t := s.t
	t.Helper()
	for {
		g := s.game(lost.game.ID)
		w := s.workers()
		if w.Redelivered > lost.redelivered {
			var by []string
			for _, r := range w.Workers {
				if slices.Contains(r.Games, g.ID) {
					by = append(by, r.Name)
				}
			}
			t.Logf("game %d: %s, played now by %q; redelivered %d", g.ID, g.Status, by, w.Redelivered)
			return g
		}
		if g.Status == "finished" {
			t.Fatalf("game %d finished by attempt %d, worker %s, after that worker was lost: %+v", g.ID, g.Attempt, g.Worker, g)
		}
		if time.Now().After(deadline) || time.Since(at) > lostWorkerWait+2*time.Minute {
			t.Fatalf("game %d not played again %s after its worker %s was lost: %+v; GET /api/workers: %+v", g.ID, since(at), lost.worker.Name, g, s.workers())
		}
		time.Sleep(pollEvery)
	}
}

// network is the compose network a container is on.
func (s *stack) network(container string) string {
	s.t.Helper()
	c := s.inspect(container)
	if len(c.NetworkSettings.Networks) != 1 {
		s.t.Fatalf("container %s is on networks %v, want one", short(container), c.NetworkSettings.Networks)
	}
	for n := range c.NetworkSettings.Networks {
		return n
	}
	panic("unreachable")
}

// checkPlayedOnce checks a finished tournament's games: every schedule index
// has exactly one finished game (aborted ones aside), no game is listed twice,
// every finished game was played by a worker in a sandbox, the games named in
// replayed were played again (attempt 2 or more), and the standings are the
// recount of the finished games.
func (s *stack) checkPlayedOnce(tournament int64, total int, replayed ...int64) {
	t := s.t
	t.Helper()
	list := s.readGames(tournament).list
	seen := map[int64]bool{}
	finished := map[int64][]gameRow{} // index -> its finished games
	indexes := map[int64]bool{}
	for _, g := range list {
		if g.ID == nil {
			t.Errorf("game at index %d has no id: %+v", g.Index, g)
			continue
		}
		if seen[*g.ID] {
			t.Errorf("game %d listed twice", *g.ID)
		}
		seen[*g.ID] = true
		indexes[g.Index] = true
		switch g.Status {
		case "finished":
			finished[g.Index] = append(finished[g.Index], g)
		case "aborted":
			t.Logf("index %d: game %d aborted", g.Index, *g.ID)
		default:
			t.Errorf("game %d (index %d): status %q in a finished tournament", *g.ID, g.Index, g.Status)
		}
	}
	if len(indexes) != total {
		t.Errorf("%d schedule indexes among the games, want %d", len(indexes), total)
	}
	type tally struct{ games, wins, draws, losses int64 }
	recount := map[int64]*tally{}
	add := func(id int64) *tally {
		if recount[id] == nil {
			recount[id] = &tally{}
		}
		return recount[id]
	}
	attempts := map[int64]int{}
	reasons := map[string]int{}
	for index := range indexes {
		f := finished[index]
		if len(f) != 1 {
			t.Errorf("index %d: %d finished games (%+v), want exactly one", index, len(f), f)
			continue
		}
		g := f[0]
		d := s.game(*g.ID)
		attempts[d.ID] = d.Attempt
		if d.Worker == "" || d.Attempt < 1 {
			t.Errorf("game %d: worker %q, attempt %d: want the worker that played it", d.ID, d.Worker, d.Attempt)
		}
		if d.Sandbox != "on" {
			t.Errorf("game %d: sandbox %q, want on", d.ID, d.Sandbox)
		}
		if g.Result == nil || g.Reason == nil || g.Plies == 0 {
			t.Errorf("game %d: want a result, a reason and moves: %+v", d.ID, g)
			continue
		}
		reasons[*g.Reason]++
		b, w := add(g.Black.EngineID), add(g.White.EngineID)
		b.games++
		w.games++
		switch *g.Result {
		case "black":
			b.wins++
			w.losses++
		case "white":
			w.wins++
			b.losses++
		case "draw":
			b.draws++
			w.draws++
		default:
			t.Errorf("game %d: result %q", d.ID, *g.Result)
		}
	}
	t.Logf("finished games by reason: %v", reasons)
	var again []int64
	for id, a := range attempts {
		if a >= 2 {
			again = append(again, id)
		}
	}
	slices.Sort(again)
	t.Logf("games played again (attempt >= 2): %v", again)
	if len(again) == 0 {
		t.Errorf("no game has attempt >= 2")
	}
	for _, id := range replayed {
		if attempts[id] < 2 {
			t.Errorf("game %d, whose worker was lost: attempt %d of its finished game, want 2 or more", id, attempts[id])
		}
	}

	var st struct {
		Standings []struct {
			EngineID int64   `json:"engine_id"`
			Name     string  `json:"name"`
			Games    int64   `json:"games"`
			Wins     int64   `json:"wins"`
			Draws    int64   `json:"draws"`
			Losses   int64   `json:"losses"`
			Points   float64 `json:"points"`
		} `json:"standings"`
		FinishedGames int `json:"finished_games"`
		TotalGames    int `json:"total_games"`
	}
	s.getJSON(fmt.Sprintf("/api/tournaments/%d/standings", tournament), &st)
	if st.FinishedGames != total || st.TotalGames != total {
		t.Errorf("standings: %d/%d games finished, want %d/%d", st.FinishedGames, st.TotalGames, total, total)
	}
	if len(st.Standings) != len(recount) {
		t.Errorf("standings have %d rows, the games %d engines", len(st.Standings), len(recount))
	}
	for _, row := range st.Standings {
		want := recount[row.EngineID]
		if want == nil {
			t.Errorf("standings: engine %d (%s) played no finished game", row.EngineID, row.Name)
			continue
		}
		got := tally{row.Games, row.Wins, row.Draws, row.Losses}
		if got != *want || row.Points != float64(want.wins)+float64(want.draws)/2 {
			t.Errorf("standings: %s %+v, %.1f points; the games give %+v", row.Name, got, row.Points, *want)
		}
	}
}

// ---------------------------------------------------------------- compose

// findCompose returns the Compose command that works here: the v2 plugin
// (`docker compose`) first, else the standalone docker-compose.
func findCompose(t *testing.T) []string {
	for _, c := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		args := append(append([]string{}, c[1:]...), "version")
		if out, err := run(t, 30*time.Second, "", nil, c[0], args...); err == nil {
			t.Logf("compose: %s (%s)", strings.Join(c, " "), firstLine(out))
			return c
		}
	}
	return nil
}

func newStack(t *testing.T, compose []string, root string, o options) *stack {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	project := "taikaitest" + hex.EncodeToString(b[:])
	var tok [24]byte
	if _, err := rand.Read(tok[:]); err != nil {
		t.Fatal(err)
	}
	token := hex.EncodeToString(tok[:])
	secret := func() string {
		if _, err := rand.Read(tok[:]); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(tok[:])
	}
	natsToken, joinToken := secret(), secret()
	env := "TAIKAI_ADMIN_TOKEN=" + token + "\nTAIKAI_NATS_TOKEN=" + natsToken + "\nTAIKAI_WORKER_JOIN_TOKEN=" + joinToken + "\n"
	if o.workerTimeout != "" {
		env += "TAIKAI_WORKER_TIMEOUT=" + o.workerTimeout + "\n"
	}
	envFile := filepath.Join(t.TempDir(), "taikai.env")
	if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testkit.FreePort(t)
	s := &stack{
		t:       t,
		command: compose,
		root:    root,
		project: project,
		volume:  project + "-data",
		token:   token,

		natsToken: natsToken,
		joinToken: joinToken,
		base:      "http://127.0.0.1:" + strconv.Itoa(port),
		client:    &http.Client{Timeout: 10 * time.Second},

		anonymous: map[string]bool{},
	}
	// The shell's values win over a developer's .env next to the compose
	// file, so every variable the file reads is set here.
	s.env = []string{
		"COMPOSE_PROJECT_NAME=" + project,
		"TAIKAI_ENV_FILE=" + envFile,
		"TAIKAI_IMAGE=" + testImage,
		"TAIKAI_VOLUME=" + s.volume,
		"TAIKAI_WORKER_CONCURRENCY=" + strconv.Itoa(o.workerConcurrency),
		"TAIKAI_HTTP_PORT=127.0.0.1:" + strconv.Itoa(port),
		"TAIKAI_DEMO=0",
	}
	t.Logf("project %s, volume %s, %s", project, s.volume, s.base)
	t.Cleanup(func() {
		if t.Failed() {
			if out, err := s.compose(time.Minute, "ps", "-a"); err == nil {
				t.Logf("docker compose ps -a:\n%s", out)
			}
			out, err := s.compose(time.Minute, "logs", "--no-color", "--timestamps")
			t.Logf("docker compose logs (%v):\n%s", err, tail(out, 300))
		}
		s.trackVolumes()
		if out, err := s.compose(stopDown, "down", "-v", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("down -v: %v\n%s", err, out)
		}
		// down -v removes the project's volumes, and the anonymous ones of the
		// containers it removes; make sure, whatever happened, and remove
		// those of containers an earlier `down` removed.
		volumes := []string{s.volume}
		for v := range s.anonymous {
			volumes = append(volumes, v)
		}
		for _, v := range volumes {
			if out, err := run(t, time.Minute, "", nil, "docker", "volume", "rm", "-f", v); err != nil {
				t.Errorf("docker volume rm %s: %v\n%s", v, err, out)
			}
			if _, err := run(t, 30*time.Second, "", nil, "docker", "volume", "inspect", v); err == nil {
				t.Errorf("volume %s still exists after down -v", v)
			}
		}
		if out, err := run(t, 30*time.Second, "", nil, "docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+project); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("containers of %s left after down -v: %q (%v)", project, out, err)
		}
		if out, err := run(t, 30*time.Second, "", nil, "docker", "network", "ls", "-q", "--filter", "label=com.docker.compose.project="+project); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("networks of %s left after down -v: %q (%v)", project, out, err)
		}
	})
	return s
}

// compose runs a compose command of this project with a deadline.
func (s *stack) compose(limit time.Duration, args ...string) (string, error) {
	s.t.Helper()
	full := append(append(append([]string{}, s.command[1:]...), "-p", s.project, "-f", "docker-compose.yml"), args...)
	return run(s.t, limit, s.root, s.env, s.command[0], full...)
}

// composeLogged is compose with its output in the test's log line by line as
// it comes (a build takes minutes).
func (s *stack) composeLogged(limit time.Duration, args ...string) (string, error) {
	s.t.Helper()
	full := append(append(append([]string{}, s.command[1:]...), "-p", s.project, "-f", "docker-compose.yml"), args...)
	return runLogged(s.t, limit, s.root, s.env, s.command[0], full...)
}

func (s *stack) composeOK(limit time.Duration, args ...string) string {
	s.t.Helper()
	out, err := s.compose(limit, args...)
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", strings.Join(s.command, " "), strings.Join(args, " "), err, tail(out, 80))
	}
	return out
}

// containerID is the id of the service's container.
func (s *stack) containerID() string {
	s.t.Helper()
	return s.serviceContainer(service)
}

// serviceContainer is the id of the one container of a service.
func (s *stack) serviceContainer(name string) string {
	s.t.Helper()
	ids := s.containers(name)
	if len(ids) != 1 {
		s.t.Fatalf("compose ps -q %s: %q, want one container", name, ids)
	}
	return ids[0]
}

// containers are the full ids of a service's running containers.
func (s *stack) containers(name string) []string {
	s.t.Helper()
	return strings.Fields(s.composeOK(30*time.Second, "ps", "-q", name))
}

// trackVolumes notes the anonymous volumes of the project's containers (the
// workers' /data), for cleanup: a `down` without -v leaves them behind.
func (s *stack) trackVolumes() {
	s.t.Helper()
	out, err := run(s.t, 30*time.Second, "", nil, "docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+s.project)
	if err != nil || strings.TrimSpace(out) == "" {
		return
	}
	args := append([]string{"inspect", "-f", `{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}`}, strings.Fields(out)...)
	out, err = run(s.t, 30*time.Second, "", nil, "docker", args...)
	if err != nil {
		s.t.Logf("docker inspect (volumes): %v\n%s", err, out)
		return
	}
	for _, v := range strings.Fields(out) {
		if v != s.volume {
			s.anonymous[v] = true
		}
	}
}

// checkContainer checks what docker-compose.yml and the Dockerfile promise
// about the running container: the user, the limits, the one published port
// on 127.0.0.1, the volume at /data.
func (s *stack) checkContainer() {
	t := s.t
	t.Helper()
	c := s.inspect(s.containerID())
	s.checkSandboxSettings("taikai", c)
	if want := []string{"/usr/bin/tini", "--", "/usr/local/bin/taikai"}; !reflect.DeepEqual(c.Config.Entrypoint, want) {
		t.Errorf("entrypoint %q, want %q", c.Config.Entrypoint, want)
	}
	if c.HostConfig.NanoCpus != 2e9 || c.HostConfig.Memory != 4<<30 || c.HostConfig.PidsLimit == nil || *c.HostConfig.PidsLimit != 1024 {
		pids := "unset"
		if c.HostConfig.PidsLimit != nil {
			pids = strconv.FormatInt(*c.HostConfig.PidsLimit, 10)
		}
		t.Errorf("limits: %d nanocpus, %d bytes, pids %s; want 2 CPUs, 4 GiB, 1024", c.HostConfig.NanoCpus, c.HostConfig.Memory, pids)
	}
	if len(c.HostConfig.PortBindings) != 1 || len(c.HostConfig.PortBindings["8080/tcp"]) != 1 ||
		c.HostConfig.PortBindings["8080/tcp"][0].HostIP != "127.0.0.1" {
		t.Errorf("published ports %+v, want only 8080/tcp on 127.0.0.1", c.HostConfig.PortBindings)
	}
	var data bool
	for _, m := range c.Mounts {
		if m.Destination == "/data" {
			data = m.Type == "volume" && m.Name == s.volume
		}
	}
	if !data {
		t.Errorf("mounts %+v, want the volume %s at /data", c.Mounts, s.volume)
	}
	if want := []string{"serve"}; !reflect.DeepEqual(c.Config.Cmd, want) {
		t.Errorf("command %q, want %q", c.Config.Cmd, want)
	}
}

// inspected is what the tests read of `docker inspect`.
type inspected struct {
	ID     string
	Name   string
	Config struct {
		User        string
		Hostname    string
		Entrypoint  []string
		Cmd         []string
		Healthcheck *struct{ Test []string }
	}
	HostConfig struct {
		NanoCpus     int64
		Memory       int64
		PidsLimit    *int64
		PortBindings map[string][]struct{ HostIP, HostPort string }
		SecurityOpt  []string
		MaskedPaths  []string
		CgroupnsMode string
	}
	Mounts          []mount
	NetworkSettings struct {
		Networks map[string]json.RawMessage
	}
}

type mount struct {
	Type, Name, Source, Destination string
	RW                              bool
}

func (s *stack) inspect(id string) inspected {
	s.t.Helper()
	out, err := run(s.t, 30*time.Second, "", nil, "docker", "inspect", id)
	if err != nil {
		s.t.Fatalf("docker inspect: %v\n%s", err, out)
	}
	var info []inspected
	if err := json.Unmarshal([]byte(out), &info); err != nil || len(info) != 1 {
		s.t.Fatalf("docker inspect: %v\n%s", err, out)
	}
	return info[0]
}

// checkSandboxSettings: the engine sandbox's settings (docker-compose.yml says
// why each), none of them the host's keys: the image's ordinary user, not
// root; Docker's seccomp profile with bubblewrap's calls added
// (deploy/seccomp.json), not unconfined; the container's own cgroup
// namespace and no mount of the host's cgroup tree; no masked /proc paths
// (systempaths=unconfined, which the sandbox's own /proc needs).
func (s *stack) checkSandboxSettings(what string, c inspected) {
	t := s.t
	t.Helper()
	if c.Config.User != "taikai" {
		t.Errorf("%s: container user %q, want the image's taikai (not root)", what, c.Config.User)
	}
	var profile string
	for _, o := range c.HostConfig.SecurityOpt {
		if p, ok := strings.CutPrefix(o, "seccomp="); ok {
			profile = p
		}
	}
	if profile == "" || profile == "unconfined" {
		t.Errorf("%s: security options %q: want deploy/seccomp.json's profile, not unconfined or none", what, c.HostConfig.SecurityOpt)
	} else {
		var got, want seccompProfile
		b, err := os.ReadFile(filepath.Join(s.root, "deploy", "seccomp.json"))
		if err == nil {
			err = json.Unmarshal(b, &want)
		}
		if err == nil {
			err = json.Unmarshal([]byte(profile), &got)
		}
		if err != nil || !reflect.DeepEqual(got, want) || got.DefaultAction != "SCMP_ACT_ERRNO" {
			t.Errorf("%s: seccomp profile (%v) is not deploy/seccomp.json's", what, err)
		}
	}
	if len(c.HostConfig.MaskedPaths) != 0 {
		t.Errorf("%s: masked paths %q: want none (systempaths=unconfined)", what, c.HostConfig.MaskedPaths)
	}
	if c.HostConfig.CgroupnsMode != "private" {
		t.Errorf("%s: cgroup namespace %q, want private", what, c.HostConfig.CgroupnsMode)
	}
	for _, m := range c.Mounts {
		if m.Source == "/sys/fs/cgroup" || strings.HasPrefix(m.Destination, "/sys/fs/cgroup") {
			t.Errorf("%s: mount %+v: the host's cgroup tree must not be in the container", what, m)
		}
	}
}

// seccompProfile is what checkSandboxSettings compares of a seccomp profile.
type seccompProfile struct {
	DefaultAction string `json:"defaultAction"`
	Syscalls      []struct {
		Names  []string `json:"names"`
		Action string   `json:"action"`
	} `json:"syscalls"`
}

// checkWorkerContainers: n worker containers, each with the sandbox's
// settings, its own limits, no published port, no healthcheck (the image's
// probes the server's port) and a /data of its own.
func (s *stack) checkWorkerContainers(n int) {
	t := s.t
	t.Helper()
	ids := s.containers(workerService)
	if len(ids) != n {
		t.Fatalf("%d worker containers (%q), want %d", len(ids), ids, n)
	}
	data := map[string]bool{}
	for _, id := range ids {
		c := s.inspect(id)
		what := "worker " + c.Name
		s.checkSandboxSettings(what, c)
		if want := []string{"worker"}; !reflect.DeepEqual(c.Config.Cmd, want) {
			t.Errorf("%s: command %q, want %q", what, c.Config.Cmd, want)
		}
		if c.HostConfig.NanoCpus != 2e9 || c.HostConfig.Memory != 4<<30 || c.HostConfig.PidsLimit == nil || *c.HostConfig.PidsLimit != 1024 {
			t.Errorf("%s: limits %d nanocpus, %d bytes, pids %v; want 2 CPUs, 4 GiB, 1024", what, c.HostConfig.NanoCpus, c.HostConfig.Memory, c.HostConfig.PidsLimit)
		}
		if len(c.HostConfig.PortBindings) != 0 {
			t.Errorf("%s: published ports %+v, want none", what, c.HostConfig.PortBindings)
		}
		if c.Config.Healthcheck == nil || !reflect.DeepEqual(c.Config.Healthcheck.Test, []string{"NONE"}) {
			t.Errorf("%s: healthcheck %+v, want none", what, c.Config.Healthcheck)
		}
		if !strings.HasPrefix(c.ID, c.Config.Hostname) || len(c.Config.Hostname) != 12 {
			t.Errorf("%s: hostname %q, want its short container id (the worker's default name)", what, c.Config.Hostname)
		}
		var ok bool
		for _, m := range c.Mounts {
			if m.Destination == "/data" {
				ok = m.Type == "volume" && m.Name != s.volume && !data[m.Name]
				data[m.Name] = true
			}
		}
		if !ok {
			t.Errorf("%s: mounts %+v, want a volume of its own at /data", what, c.Mounts)
		}
	}
}

// checkCredentials: every worker heard from has NATS credentials of its own,
// under its own name (it enrolled with the join token), and no other name
// has any.
func (s *stack) checkCredentials() {
	t := s.t
	t.Helper()
	var names struct {
		Names []string `json:"names"`
	}
	code, body := s.do("GET", "/api/workers/credentials", s.token, "")
	if err := json.Unmarshal(body, &names); code != http.StatusOK || err != nil {
		t.Fatalf("GET /api/workers/credentials: %d %v %s", code, err, body)
	}
	var workers []string
	for _, w := range s.workers().Workers {
		if !w.Silent {
			workers = append(workers, w.Name)
		}
	}
	slices.Sort(workers)
	if !reflect.DeepEqual(names.Names, workers) {
		t.Errorf("GET /api/workers/credentials: %q; want the workers' own names %q", names.Names, workers)
	}
	t.Logf("workers with credentials of their own: %q", names.Names)
}

// rogue (issue 36, item 4): while the worker plays a game, a NATS client in
// a container of its own on the compose network (deploy/testdata/rogue)
// tries to bend it. Without credentials, with the shared NATS token, with the
// join token, with a revoked worker's credentials: it cannot connect. With
// credentials of its own: it cannot hand in a result on the worker's
// subject, nor for the worker's attempt on its own, nor claim the game by
// naming a newer attempt, nor acknowledge or hand back the worker's queue
// message, nor queue a game or purge the logs, nor read, put over, delete or
// purge the worker's engine logs (its own it puts). The game is then finished
// by the worker, at its first attempt.
func (s *stack) rogue() {
	t := s.t
	t.Helper()
	start := time.Now()
	// Built before the tournament starts, so that its two games (about 50 s)
	// are not spent on the build: once, on a busy machine, no game was still
	// playing when the test looked for one.
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // the image's user runs it
		t.Fatal(err)
	}
	if out, err := run(t, 5*time.Minute, filepath.Join(s.root, "deploy"), []string{"CGO_ENABLED=0"}, "go", "build", "-o", filepath.Join(dir, "rogue"), "./testdata/rogue"); err != nil {
		t.Fatalf("go build the rogue client: %v\n%s", err, out)
	}
	var ids []int64
	for _, b := range []string{"othello-random", "othello-greedy"} {
		var eng struct{ ID int64 }
		s.postJSON("/api/engines", map[string]any{"name": "rogue-" + b, "game": "othello", "builtin": b}, &eng)
		if eng.ID == 0 {
			t.Fatalf("POST /api/engines %s: no id", b)
		}
		ids = append(ids, eng.ID)
	}
	var tour struct {
		ID int64 `json:"id"`
	}
	// One game at a time, paced so that it lasts long enough.
	s.postJSON("/api/tournaments", map[string]any{
		"name": "rogue", "game": "othello", "engines": ids,
		"games_per_pair": 2, "move_time_ms": 300, "pace_ms": 400, "concurrency": 1, "start": true,
	}, &tour)
	if tour.ID == 0 {
		t.Fatal("POST /api/tournaments: no id")
	}
	var own, revoked struct{ Name, Secret string }
	s.postJSON("/api/workers/credentials", map[string]string{"name": "rogue"}, &own)
	s.postJSON("/api/workers/credentials", map[string]string{"name": "rogue-revoked"}, &revoked)
	s.expectStatus("DELETE", "/api/workers/credentials/rogue-revoked", s.token, "", http.StatusNoContent)
	if own.Secret == "" || revoked.Secret == "" {
		t.Fatalf("credentials issued: %+v %+v", own, revoked)
	}

	at := s.playingWorker(time.Now().Add(playing), "", 0)
	network := s.network(s.containerID())
	out, err := run(t, 5*time.Minute, "", nil, "docker", "run", "--rm", "--network", network,
		"-v", dir+":/rogue:ro", "--entrypoint", "/rogue/rogue",
		"-e", "ROGUE_TOKEN="+s.natsToken, "-e", "ROGUE_JOIN="+s.joinToken,
		"-e", "ROGUE_REVOKED_NAME="+revoked.Name, "-e", "ROGUE_REVOKED_SECRET="+revoked.Secret,
		"-e", "ROGUE_NAME="+own.Name, "-e", "ROGUE_SECRET="+own.Secret,
		testImage, "-nats", "nats://taikai:4222", "-game", strconv.FormatInt(at.game.ID, 10), "-holder", at.worker.Name)
	if err != nil {
		t.Fatalf("docker run the rogue client: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct{ Attack, Outcome string }
		if json.Unmarshal([]byte(line), &o) == nil && o.Attack != "" {
			got[o.Attack] = o.Outcome
		}
	}
	t.Logf("rogue client on %s, against game %d of worker %s: %v", network, at.game.ID, at.worker.Name, got)
	want := map[string]string{
		"anonymous": "refused", "shared token": "refused", "join token": "refused", "revoked credentials": "refused",
		"own credentials":                 "connected",
		"result on the holder's subject":  "violation",
		"result for the holder's attempt": "answer:stale",
		"claim of a newer attempt":        "answer:busy",
		"result for that attempt":         "answer:stale",
		"forged acks":                     "violation 20 of 20",
		"queue a game":                    "violation",
		"purge the logs":                  "violation",
		"read the holder's logs":          "violation 8 of 8",
		"write the holder's logs":         "violation 4 of 4",
		"purge the holder's logs":         "violation 4 of 4",
		"own logs":                        "put",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rogue client's outcomes:\n got %v\nwant %v\n%s", got, want, out)
	}
	s.expectStatus("DELETE", "/api/workers/credentials/rogue", s.token, "", http.StatusNoContent)

	// The game is the worker's: finished by it, at its first attempt.
	deadline := time.Now().Add(playing)
	for {
		g := s.game(at.game.ID)
		if g.Status == "finished" {
			if g.Worker != at.worker.Name || g.Attempt != 1 || g.Reason == nil || *g.Reason != "normal" {
				t.Errorf("game %d after the rogue: worker %q, attempt %d, reason %v; want finished normally by %s at attempt 1", g.ID, g.Worker, g.Attempt, g.Reason, at.worker.Name)
			}
			break
		}
		if g.Status != "running" && g.Status != "pending" || time.Now().After(deadline) {
			t.Fatalf("game %d after the rogue: %+v", g.ID, g)
		}
		time.Sleep(pollEvery)
	}
	s.waitTournament(tour.ID, playing)
	t.Logf("rogue client refused in every attempt; game %d finished by %s; %s", at.game.ID, at.worker.Name, since(start))
}

// ---------------------------------------------------------------- workers

type workerRow struct {
	Name        string    `json:"name"`
	Host        string    `json:"host"`
	Pid         int       `json:"pid"`
	Concurrency int       `json:"concurrency"`
	Running     int       `json:"running"`
	Games       []int64   `json:"games"`
	Done        int64     `json:"done"`
	Sandbox     string    `json:"sandbox"`
	LastSeen    time.Time `json:"last_seen"`
	Silent      bool      `json:"silent"`
}

type workersList struct {
	Cluster     bool        `json:"cluster"`
	Workers     []workerRow `json:"workers"`
	Queued      int         `json:"queued"`
	Running     int         `json:"running"`
	Redelivered int64       `json:"redelivered"`
}

func (s *stack) workers() workersList {
	s.t.Helper()
	var w workersList
	s.getJSON("/api/workers", &w)
	return w
}

// waitWorkers waits for GET /api/workers to list n workers heard from (not
// silent), one per worker container, each with its engines sandboxed.
func (s *stack) waitWorkers(n int) {
	t := s.t
	t.Helper()
	deadline := time.Now().Add(startUp)
	var last workersList
	for {
		last = s.workers()
		ids := s.containers(workerService)
		hosts := map[string]bool{}
		for _, w := range last.Workers {
			if w.Silent {
				continue
			}
			if w.Sandbox != "on" {
				logs, _ := s.compose(30*time.Second, "logs", "--no-color", workerService)
				t.Fatalf("worker %s: sandbox %q, want on: its engines would run unsandboxed\n%s", w.Name, w.Sandbox, tail(logs, 40))
			}
			if slices.ContainsFunc(ids, func(id string) bool { return w.Host != "" && strings.HasPrefix(id, w.Host) }) {
				hosts[w.Host] = true
			}
		}
		if !last.Cluster {
			t.Fatalf("GET /api/workers: cluster false: the server plays the games itself")
		}
		if len(hosts) == n && len(ids) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /api/workers: not %d workers, one per container (%q), within %s: %+v", n, ids, startUp, last)
		}
		time.Sleep(pollEvery)
	}
}

// containerOf is the worker container whose short id is the worker's host.
func containerOf(w workerRow, ids []string) string {
	for _, id := range ids {
		if w.Host != "" && strings.HasPrefix(id, w.Host) {
			return id
		}
	}
	return ""
}

// checkSandbox: the server in the container runs its engines sandboxed.
func (s *stack) checkSandbox() {
	s.t.Helper()
	var h struct {
		Status        string `json:"status"`
		Sandbox       string `json:"sandbox"`
		SandboxError  string `json:"sandbox_error"`
		SandboxLimits struct {
			Isolation string `json:"isolation"`
			Memory    string `json:"memory"`
			Processes string `json:"processes"`
		} `json:"sandbox_limits"`
	}
	s.getJSON("/healthz", &h)
	if h.Sandbox != "on" {
		logs, _ := s.compose(30*time.Second, "logs", "--no-color", "taikai")
		s.t.Fatalf("/healthz: sandbox %q (%s), want on\n%s", h.Sandbox, h.SandboxError, tail(logs, 30))
	}
	// The container's cgroup is read-only to it (docker-compose.yml): the
	// limits hold without cgroups, and /healthz says so.
	if l := h.SandboxLimits; l.Isolation != "namespaces" || l.Memory != "polling" || l.Processes == "" {
		s.t.Errorf("/healthz: sandbox_limits %+v, want namespaces, memory by polling (no writable cgroup in the container)", l)
	}
	s.t.Logf("/healthz: sandbox %s, limits %+v", h.Sandbox, h.SandboxLimits)
}

// waitHealthz polls GET /healthz until it answers 200, up to startUp.
func (s *stack) waitHealthz() {
	s.t.Helper()
	deadline := time.Now().Add(startUp)
	var last string
	for {
		resp, err := s.client.Get(s.base + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("GET /healthz: no 200 within %s; last: %s", startUp, last)
		}
		time.Sleep(pollEvery)
	}
}

// waitHealthy waits for Docker's own HEALTHCHECK (curl inside the image) to
// report the container healthy: its first probe runs one interval (30s) after
// the start.
func (s *stack) waitHealthy() {
	s.t.Helper()
	id := s.containerID()
	deadline := time.Now().Add(healthy)
	var last string
	for {
		out, err := run(s.t, 30*time.Second, "", nil, "docker", "inspect", "-f", "{{.State.Health.Status}}", id)
		last = strings.TrimSpace(out)
		if err == nil && last == "healthy" {
			return
		}
		if err == nil && last == "unhealthy" {
			log, _ := run(s.t, 30*time.Second, "", nil, "docker", "inspect", "-f", "{{json .State.Health.Log}}", id)
			s.t.Fatalf("HEALTHCHECK: unhealthy: %s", log)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("HEALTHCHECK: not healthy within %s; last: %q (%v)", healthy, last, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// ---------------------------------------------------------------- the API

type gameRow struct {
	ID     *int64  `json:"id"`
	Index  int64   `json:"index"`
	Status string  `json:"status"`
	Result *string `json:"result"`
	Reason *string `json:"reason"`
	Plies  int     `json:"plies"`
	Black  struct {
		EngineID int64 `json:"engine_id"`
	} `json:"black"`
	White struct {
		EngineID int64 `json:"engine_id"`
	} `json:"white"`
}

type played struct {
	tournament int64
	list       []gameRow
	moves      map[int64]int // game id -> moves stored
}

// playTournament registers two built-in engines and plays a round robin of
// four games between them, then reads every game back.
func (s *stack) playTournament() played {
	t := s.t
	t.Helper()
	var ids []int64
	for _, e := range []struct{ name, builtin string }{{"random", "othello-random"}, {"greedy", "othello-greedy"}} {
		var eng struct{ ID int64 }
		s.postJSON("/api/engines", map[string]any{"name": e.name, "game": "othello", "builtin": e.builtin}, &eng)
		if eng.ID == 0 {
			t.Fatalf("POST /api/engines %s: no id", e.name)
		}
		ids = append(ids, eng.ID)
	}
	var tour struct {
		ID         int64  `json:"id"`
		Status     string `json:"status"`
		TotalGames int    `json:"total_games"`
	}
	s.postJSON("/api/tournaments", map[string]any{
		"name": "compose-test", "game": "othello", "engines": ids,
		"games_per_pair": 4, "move_time_ms": 200, "concurrency": 2, "start": true,
	}, &tour)
	if tour.ID == 0 || tour.TotalGames != 4 {
		t.Fatalf("POST /api/tournaments: %+v, want an id and 4 games", tour)
	}

	s.waitTournament(tour.ID, playing)

	p := s.readGames(tour.ID)
	if len(p.list) != 4 {
		t.Fatalf("tournament %d has %d games, want 4", tour.ID, len(p.list))
	}
	for _, g := range p.list {
		if g.ID == nil || g.Status != "finished" || g.Result == nil || g.Reason == nil || g.Plies == 0 {
			t.Fatalf("game %+v: want an id, status finished, a result, a reason and moves", g)
		}
		// Real games between two engine processes, played to the end: a
		// crash, a failure to connect or a timeout would mean that the image
		// cannot run its engines.
		if *g.Reason != "normal" {
			t.Fatalf("game %d ended by %q, want normal: the engines did not play it out", *g.ID, *g.Reason)
		}
		p.moves[*g.ID] = s.moves(*g.ID)
		detail := s.game(*g.ID)
		if detail.Sandbox != "on" {
			t.Errorf("game %d: sandbox %q, want on: the engines ran unsandboxed in the container", *g.ID, detail.Sandbox)
		}
		// Played by the worker, not by the server.
		if detail.Worker == "" || detail.Attempt < 1 {
			t.Errorf("game %d: worker %q, attempt %d: want the worker's name and an attempt", *g.ID, detail.Worker, detail.Attempt)
		}
		if p.moves[*g.ID] != g.Plies {
			t.Errorf("game %d: %d plies but %d moves stored", *g.ID, g.Plies, p.moves[*g.ID])
		}
		code, log := s.do("GET", fmt.Sprintf("/api/games/%d/log/black", *g.ID), s.token, "")
		if code != http.StatusOK {
			t.Errorf("game %d: black's log: %d %s", *g.ID, code, tail(string(log), 5))
		}
		if !strings.Contains(string(log), "sandboxed (memory") {
			t.Errorf("game %d: black's log does not say it started sandboxed:\n%s", *g.ID, tail(string(log), 5))
		}
	}
	return p
}

// waitTournament waits for a tournament to finish.
func (s *stack) waitTournament(id int64, within time.Duration) {
	t := s.t
	t.Helper()
	deadline := time.Now().Add(within)
	var status struct {
		Status        string `json:"status"`
		FinishedGames int    `json:"finished_games"`
		TotalGames    int    `json:"total_games"`
	}
	for {
		s.getJSON(fmt.Sprintf("/api/tournaments/%d", id), &status)
		if status.Status == "finished" {
			return
		}
		if status.Status == "cancelled" {
			t.Fatalf("tournament %d cancelled", id)
		}
		if time.Now().After(deadline) {
			t.Fatalf("tournament %d: %s, %d/%d games after %s", id, status.Status, status.FinishedGames, status.TotalGames, within)
		}
		time.Sleep(pollEvery)
	}
}

func (s *stack) readGames(tournament int64) played {
	var list struct {
		Games []gameRow `json:"games"`
	}
	s.getJSON(fmt.Sprintf("/api/tournaments/%d/games", tournament), &list)
	return played{tournament: tournament, list: list.Games, moves: map[int64]int{}}
}

// gameDetail is what the tests read of GET /api/games/{id}.
type gameDetail struct {
	ID      int64   `json:"id"`
	Index   int64   `json:"index"`
	Status  string  `json:"status"`
	Result  *string `json:"result"`
	Reason  *string `json:"reason"`
	Plies   int     `json:"plies"`
	Sandbox string  `json:"sandbox"`
	Worker  string  `json:"worker"`
	Attempt int     `json:"attempt"`
}

func (s *stack) game(id int64) gameDetail {
	s.t.Helper()
	var g gameDetail
	s.getJSON(fmt.Sprintf("/api/games/%d", id), &g)
	return g
}

func (s *stack) moves(game int64) int {
	var g struct {
		Moves []json.RawMessage `json:"moves"`
	}
	s.getJSON(fmt.Sprintf("/api/games/%d", game), &g)
	return len(g.Moves)
}

func (s *stack) do(method, path, token, body string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

func (s *stack) expectStatus(method, path, token, body string, want int) {
	s.t.Helper()
	if code, b := s.do(method, path, token, body); code != want {
		s.t.Errorf("%s %s: %d %s, want %d", method, path, code, tail(string(b), 5), want)
	}
}

func (s *stack) getJSON(path string, v any) {
	s.t.Helper()
	code, b := s.do("GET", path, "", "")
	if code != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		s.t.Fatalf("GET %s: %v\n%s", path, err, b)
	}
}

func (s *stack) postJSON(path string, in, out any) {
	s.t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		s.t.Fatal(err)
	}
	code, b := s.do("POST", path, s.token, string(body))
	if code != http.StatusCreated {
		s.t.Fatalf("POST %s %s: %d %s", path, body, code, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		s.t.Fatalf("POST %s: %v\n%s", path, err, b)
	}
}

// ---------------------------------------------------------------- helpers

// run runs a command with a deadline (killed when it passes) and returns its
// combined output.
func run(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	return runTo(t, nil, limit, dir, env, name, args...)
}

// runLogged is run with the output also in the test's log, line by line as it
// comes: with -v, the progress of a long build.
func runLogged(t *testing.T, limit time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	t.Logf("$ %s %s", name, strings.Join(args, " "))
	lw := &lineLogger{t: t, start: time.Now()}
	out, err := runTo(t, lw, limit, dir, env, name, args...)
	lw.flush()
	return out, err
}

func runTo(t *testing.T, also io.Writer, limit time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	var w io.Writer = &out
	if also != nil {
		w = io.MultiWriter(&out, also)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: no end within %s: %w", name, strings.Join(args, " "), limit, errors.Join(err, ctx.Err()))
	}
	return out.String(), err
}

// lineLogger writes complete lines to the test's log. exec.Cmd's copying
// goroutine calls Write, one call at a time, and is done before Run returns.
// Each line has the time since the command started.
type lineLogger struct {
	t     *testing.T
	start time.Time
	part  []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Logf("| %6.1fs %s", time.Since(l.start).Seconds(), strings.TrimRight(string(l.part[:i]), "\r"))
		l.part = l.part[i+1:]
	}
}

func (l *lineLogger) flush() {
	if len(l.part) > 0 {
		l.t.Logf("| %6.1fs %s", time.Since(l.start).Seconds(), l.part)
		l.part = nil
	}
}

// imageID is the id of a local image, "" if there is none.
func imageID(t *testing.T, ref string) string {
	out, err := run(t, 30*time.Second, "", nil, "docker", "image", "inspect", "-f", "{{.Id}}", ref)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// short is a container id as docker ps shows it.
func short(id string) string { return id[:min(12, len(id))] }

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
