package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A server with 256 descriptors, flooded mid-tournament with idle
// connections from two addresses (issue 36, item 3): no game ends scored
// for the server's own failure (no crash, no no_connect), every game is
// played to its normal end, and /healthz answers from a third address.
func TestDescriptorFloodScoresNoGame(t *testing.T) {
	t.Parallel()
	ciRequires(t, "prlimit") // util-linux
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal(err)
	}
	bin := taikaiBinary(t)
	dir := t.TempDir()
	wrap := filepath.Join(dir, "taikai-256")
	script := fmt.Sprintf("#!/bin/sh\nexec %q --nofile=256:256 %q \"$@\"\n", prlimit, bin)
	if err := os.WriteFile(wrap, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, wrap, filepath.Join(dir, "t.db"), filepath.Join(dir, "data"), "--sandbox=off")
	random := s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random"}`)
	greedy := s.postJSON(t, "/api/engines", `{"name":"greedy","game":"othello","builtin":"othello-greedy"}`)
	random2 := s.postJSON(t, "/api/engines", `{"name":"random-move","game":"othello","builtin":"othello-random","protocol":"othello-move"}`)
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"flood","game":"othello","engines":[%d,%d,%d],"games_per_pair":8,"move_time_ms":2000,"concurrency":4,"start":true}`,
		random, greedy, random2))
	// Mid-tournament: once a game has ended.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var tr tournamentJSON
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
		if tr.FinishedGames > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no game ended within 2 min: %+v", tr)
		}
		time.Sleep(100 * time.Millisecond) // polling the API: there is no event to wait on from outside
	}
	host, port, _ := net.SplitHostPort(s.url[len("http://"):])
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	for _, from := range []string{"127.0.0.2", "127.0.0.3"} {
		wg.Go(func() {
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
			for range 1500 {
				c, err := d.Dial("tcp", net.JoinHostPort(host, port))
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Still open: the server has not closed them yet (a read returns at
	// once if it has).
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				open++
			}
		}
	}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/healthz", nil)
	health := 0
	if res, err := http.DefaultClient.Do(req); err == nil {
		health = res.StatusCode
		res.Body.Close()
	}
	t.Logf("flood: %d connections made, %d still open; /healthz %d in %v", len(conns), open, health, time.Since(t0).Round(time.Millisecond))
	if health != http.StatusOK {
		t.Errorf("/healthz during the flood: %d, want 200", health)
	}

	// Hold the flood while the tournament plays on (at most a minute),
	// then let go and see every game.
	hold := time.Now().Add(time.Minute)
	polls, failed := 0, 0
	for time.Now().Before(hold) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/tournaments/%d", s.url, tid), nil)
		var tr tournamentJSON
		polls++
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			err = json.NewDecoder(res.Body).Decode(&tr)
			res.Body.Close()
		}
		cancel()
		if err != nil {
			failed++
		} else if tr.Status == "finished" {
			break
		}
		time.Sleep(200 * time.Millisecond) // polling from outside: no event to wait on
	}
	t.Logf("API during the flood: %d of %d polls failed", failed, polls)
	if failed > 0 {
		t.Errorf("the API failed %d of %d times during the flood", failed, polls)
	}
	for _, c := range conns {
		c.Close()
	}
	tr := s.waitFinished(t, tid, 5*time.Minute)
	games := finishedGames(t, s, tid)
	reasons := map[string]int{}
	for _, g := range games {
		if g.Reason != nil {
			reasons[*g.Reason]++
		}
	}
	t.Logf("tournament: %d of %d games finished; reasons %v", tr.FinishedGames, tr.TotalGames, reasons)
	if tr.FinishedGames != tr.TotalGames || tr.TotalGames != 24 {
		t.Errorf("%d of %d games finished, want 24 of 24", tr.FinishedGames, tr.TotalGames)
	}
	if reasons["normal"] != len(games) {
		t.Errorf("game ends %v: want every game normal (none charged to an engine for the server's failure)", reasons)
	}
}

// `taikai match` does not play a game the server cannot play forever: with
// 17 descriptors it opens its database but cannot start the engines (EMFILE:
// the server's own failure, so aborted, cause server, and played again);
// the third abort of a game stops the match with exit 1 and an error naming
// the game and the cause. Before, it played game 1 again once a second until
// it was killed.
func TestMatchStopsOnRecurringAbort(t *testing.T) {
	t.Parallel()
	ciRequires(t, "prlimit") // util-linux
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatal(err)
	}
	bin := taikaiBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, "--nofile=17:17", bin, "match", "--games", "2", "--move-time", "1s", "othello-random", "othello-greedy")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("taikai match still ran after 2 min (a game aborted again and again is retried forever):\n%s", tail(stderr.String(), 2000))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want 1", err)
	}
	last := strings.TrimSpace(stderr.String())
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	if !regexp.MustCompile(`^taikai match: game [12] \(othello-(random|greedy) vs othello-(random|greedy)\) was played 3 times and never ended: the match stops; the last time: aborted \(cause server\): .*too many open files`).MatchString(last) {
		t.Errorf("last line of stderr:\n%s\nwant the game, its 3 attempts and the cause (too many open files)\n%s", last, tail(stderr.String(), 2000))
	}
	t.Logf("%s", last)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
