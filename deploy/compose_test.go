//go:build docker

// Package deploy_test runs the deployment for real: it builds the base images
// the Dockerfile names (deploy/base-images.sh, no registry needed), builds and
// starts docker-compose.yml, plays a short tournament through the REST API,
// takes the stack down without its volume, starts it again and checks that the
// volume kept every game.
//
//	go test -tags docker -count=1 -timeout 40m ./deploy/
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
	"io"
	"net"
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
	service    = "taikai"
	testImage  = "taikai:compose-test" // kept between runs: its layers are the next build's cache
	pollEvery  = 500 * time.Millisecond
	baseImages = 25 * time.Minute // debootstrap + apt + the Go toolchain, first run
	buildAndUp = 20 * time.Minute // apt-get of the runtime stage, go mod download, cgo
	startUp    = 3 * time.Minute  // from `up -d` to GET /healthz 200
	healthy    = 2 * time.Minute  // Docker's HEALTHCHECK (interval 30s) reports healthy
	playing    = 5 * time.Minute  // the demo tournament
	stopDown   = 3 * time.Minute  // stop (up to stop_grace_period 30s), down
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
	base    string // http://127.0.0.1:PORT
	client  *http.Client
}

func TestComposeDeployment(t *testing.T) {
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

	s := newStack(t, compose, root)

	// 2. Build and start.
	start = time.Now()
	previous := imageID(t, testImage)
	if _, err := s.composeLogged(buildAndUp, "up", "-d", "--build"); err != nil {
		t.Fatalf("up -d --build: %v", err)
	}
	t.Logf("build + up -d: %s", since(start))
	// The image the last run built, replaced by this one's: remove it (and
	// with it its layers this build does not share) unless something uses it.
	if id := imageID(t, testImage); previous != "" && id != previous {
		if _, err := run(t, time.Minute, "", nil, "docker", "rmi", previous); err == nil {
			t.Logf("removed the previous %s, %s", testImage, previous)
		}
	}
	start = time.Now()
	s.waitHealthz()
	t.Logf("GET /healthz answered %s after up", since(start))
	s.checkContainer()
	s.checkSandbox()

	// 3. A short tournament through the REST API.
	start = time.Now()
	games := s.playTournament()
	t.Logf("tournament of %d games finished in %s", len(games.list), since(start))
	s.waitHealthy()

	// 4. Stop and take the stack down, keeping the volume.
	start = time.Now()
	s.composeOK(stopDown, "stop")
	s.composeOK(stopDown, "down")
	if out, err := run(t, 30*time.Second, "", nil, "docker", "volume", "inspect", s.volume); err != nil {
		t.Fatalf("volume %s is gone after `down` without -v: %v\n%s", s.volume, err, out)
	}
	if out, _ := s.compose(30*time.Second, "ps", "-q"); strings.TrimSpace(out) != "" {
		t.Fatalf("containers left after down: %s", out)
	}
	t.Logf("stop + down: %s", since(start))

	// 5. Up again on the same volume: every game is still there.
	start = time.Now()
	s.composeOK(buildAndUp, "up", "-d")
	s.waitHealthz()
	t.Logf("up again, /healthz after %s", since(start))
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

func newStack(t *testing.T, compose []string, root string) *stack {
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
	envFile := filepath.Join(t.TempDir(), "taikai.env")
	if err := os.WriteFile(envFile, []byte("TAIKAI_ADMIN_TOKEN="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := &stack{
		t:       t,
		command: compose,
		root:    root,
		project: project,
		volume:  project + "-data",
		token:   token,
		base:    "http://127.0.0.1:" + strconv.Itoa(port),
		client:  &http.Client{Timeout: 10 * time.Second},
	}
	// The shell's values win over a developer's .env next to the compose
	// file, so every variable the file reads is set here.
	s.env = []string{
		"COMPOSE_PROJECT_NAME=" + project,
		"TAIKAI_ENV_FILE=" + envFile,
		"TAIKAI_IMAGE=" + testImage,
		"TAIKAI_VOLUME=" + s.volume,
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
		if out, err := s.compose(stopDown, "down", "-v", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("down -v: %v\n%s", err, out)
		}
		// down -v removes the project's volumes; make sure, whatever happened.
		if out, err := run(t, time.Minute, "", nil, "docker", "volume", "rm", "-f", s.volume); err != nil {
			t.Errorf("docker volume rm %s: %v\n%s", s.volume, err, out)
		}
		if _, err := run(t, 30*time.Second, "", nil, "docker", "volume", "inspect", s.volume); err == nil {
			t.Errorf("volume %s still exists after down -v", s.volume)
		}
		if out, err := run(t, 30*time.Second, "", nil, "docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+project); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("containers of %s left after down -v: %q (%v)", project, out, err)
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
	id := strings.TrimSpace(s.composeOK(30*time.Second, "ps", "-q", service))
	if id == "" || strings.Contains(id, "\n") {
		s.t.Fatalf("compose ps -q %s: %q", service, id)
	}
	return id
}

// checkContainer checks what docker-compose.yml and the Dockerfile promise
// about the running container: the user, the limits, the one published port
// on 127.0.0.1, the volume at /data.
func (s *stack) checkContainer() {
	t := s.t
	t.Helper()
	out, err := run(t, 30*time.Second, "", nil, "docker", "inspect", s.containerID())
	if err != nil {
		t.Fatalf("docker inspect: %v\n%s", err, out)
	}
	var info []struct {
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
		}
		HostConfig struct {
			NanoCpus     int64
			Memory       int64
			PidsLimit    *int64
			PortBindings map[string][]struct{ HostIP, HostPort string }
			SecurityOpt  []string
			MaskedPaths  []string
		}
		Mounts []struct {
			Type, Name, Source, Destination string
			RW                              bool
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || len(info) != 1 {
		t.Fatalf("docker inspect: %v\n%s", err, out)
	}
	c := info[0]
	// The engine sandbox's settings (docker-compose.yml says why each):
	// root in the container, Docker's seccomp profile off, no masked /proc
	// paths, the cgroup tree writable.
	if c.Config.User != "0:0" {
		t.Errorf("container user %q, want 0:0 (the sandbox's)", c.Config.User)
	}
	if !slices.Contains(c.HostConfig.SecurityOpt, "seccomp=unconfined") || len(c.HostConfig.MaskedPaths) != 0 {
		t.Errorf("security options %q, masked paths %q: want seccomp=unconfined and none masked (systempaths=unconfined)", c.HostConfig.SecurityOpt, c.HostConfig.MaskedPaths)
	}
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
	if !slices.ContainsFunc(c.Mounts, func(m struct {
		Type, Name, Source, Destination string
		RW                              bool
	}) bool {
		return m.Destination == "/sys/fs/cgroup" && m.RW
	}) {
		t.Errorf("mounts %+v, want /sys/fs/cgroup read-write", c.Mounts)
	}
}

// checkSandbox: the server in the container runs its engines sandboxed.
func (s *stack) checkSandbox() {
	s.t.Helper()
	var h struct {
		Status       string `json:"status"`
		Sandbox      string `json:"sandbox"`
		SandboxError string `json:"sandbox_error"`
	}
	s.getJSON("/healthz", &h)
	if h.Sandbox != "on" {
		logs, _ := s.compose(30*time.Second, "logs", "--no-color", "taikai")
		s.t.Fatalf("/healthz: sandbox %q (%s), want on\n%s", h.Sandbox, h.SandboxError, tail(logs, 30))
	}
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

	deadline := time.Now().Add(playing)
	var status struct {
		Status        string `json:"status"`
		FinishedGames int    `json:"finished_games"`
		TotalGames    int    `json:"total_games"`
	}
	for {
		s.getJSON(fmt.Sprintf("/api/tournaments/%d", tour.ID), &status)
		if status.Status == "finished" {
			break
		}
		if status.Status == "cancelled" {
			t.Fatalf("tournament %d cancelled", tour.ID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("tournament %d: %s, %d/%d games after %s", tour.ID, status.Status, status.FinishedGames, status.TotalGames, playing)
		}
		time.Sleep(pollEvery)
	}

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
		var detail struct {
			Sandbox string `json:"sandbox"`
		}
		s.getJSON(fmt.Sprintf("/api/games/%d", *g.ID), &detail)
		if detail.Sandbox != "on" {
			t.Errorf("game %d: sandbox %q, want on: the engines ran unsandboxed in the container", *g.ID, detail.Sandbox)
		}
		if p.moves[*g.ID] != g.Plies {
			t.Errorf("game %d: %d plies but %d moves stored", *g.ID, g.Plies, p.moves[*g.ID])
		}
		s.expectStatus("GET", fmt.Sprintf("/api/games/%d/log/black", *g.ID), s.token, "", http.StatusOK)
	}
	return p
}

func (s *stack) readGames(tournament int64) played {
	var list struct {
		Games []gameRow `json:"games"`
	}
	s.getJSON(fmt.Sprintf("/api/tournaments/%d/games", tournament), &list)
	return played{tournament: tournament, list: list.Games, moves: map[int64]int{}}
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

// freePort picks a free TCP port on 127.0.0.1 for the published HTTP port.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

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
