//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size MiB at a new directory: a real disk that
// the test can fill. It needs root; it is skipped without, except in CI.
func smallDisk(t *testing.T, mib int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm,mode=0755", mib)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a small tmpfs is required when CI=true (run as root): %v", err)
		}
		t.Skipf("cannot mount a tmpfs (not root?): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes path until the disk under it is full, and returns how many
// bytes it took.
func fill(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	for chunk := 1 << 20; chunk >= 512; chunk /= 2 {
		buf := make([]byte, chunk)
		for {
			w, err := f.Write(buf)
			n += int64(w)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// Issue 16, item 10: a full disk stops a tournament, and nothing else. While
// the disk is full, /healthz says so, the API answers 507 with JSON that names
// no server path, the finished game waits in memory and the error is logged
// once, not every second; when space returns, the tournament goes on by
// itself and every game is stored. A killed upload's leftover directory is
// removed at start.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, 32)
	bin := taikaiBinary(t)
	data := filepath.Join(disk, "data")
	leftover := filepath.Join(data, "engines", ".upload-1234")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(leftover, "half.zip"), []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, bin, filepath.Join(disk, "taikai.db"), data, "--sandbox=off")
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the killed upload's directory is still there after the start: %v", err)
	}
	if code, body := health(t, s); code != http.StatusOK {
		t.Fatalf("healthz before the disk is full: %d %s", code, body)
	}

	a := s.postJSON(t, "/api/engines", `{"name":"a","game":"othello","builtin":"othello-greedy"}`)
	b := s.postJSON(t, "/api/engines", `{"name":"b","game":"othello","builtin":"othello-random"}`)
	// Paced so that the disk fills while games are being played.
	const total = 12
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"full","game":"othello","engines":[%d,%d],"games_per_pair":%d,"pace_ms":5,"move_time_ms":2000,"start":true}`, a, b, total))
	if !waitFor(time.Minute, func() bool {
		var tr tournamentJSON
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
		return tr.FinishedGames >= 1
	}) {
		t.Fatalf("no game finished within a minute:\n%s", s.logs())
	}

	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	const stuck = "the database cannot store it"
	waitLog(t, s, stuck, 1)
	var tr tournamentJSON
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
	if tr.FinishedGames >= total {
		t.Fatalf("the tournament finished on a full disk: %+v", tr)
	}
	code, body := health(t, s)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"disk full"`) {
		t.Errorf("healthz on a full disk: %d %s", code, body)
	}
	code, body = request(t, s, "POST", "/api/engines", "application/json", strings.NewReader(`{"name":"c","game":"othello","builtin":"othello-random"}`))
	checkFullDiskError(t, "JSON engine create", code, body, disk)
	var up bytes.Buffer
	mw := multipart.NewWriter(&up)
	meta, _ := mw.CreateFormField("meta")
	meta.Write([]byte(`{"name":"d","game":"othello","protocol":"othello-board","command":"./run {host}"}`))
	fw, _ := mw.CreateFormFile("file", "run")
	fw.Write(bytes.Repeat([]byte("#!/bin/sh\n"), 1000))
	mw.Close()
	code, body = request(t, s, "POST", "/api/engines", mw.FormDataContentType(), &up)
	checkFullDiskError(t, "upload", code, body, disk)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	tr = s.waitFinished(t, tid, 2*time.Minute)
	if tr.FinishedGames != total {
		t.Fatalf("after space returned: %+v, want %d of %d games", tr, total, total)
	}
	seen := map[int64]bool{}
	for _, g := range finishedGames(t, s, tid) {
		if g.Status == "finished" {
			seen[g.Index] = true
		}
	}
	if len(seen) != total {
		t.Errorf("%d schedule positions have a finished game, want %d", len(seen), total)
	}
	if n := strings.Count(s.logs(), stuck); n > 2 {
		t.Errorf("the storage failure was logged %d times in less than a minute, want once (twice on a slow machine)", n)
	}
	if !strings.Contains(s.logs(), "the database stores again") {
		t.Errorf("the recovery is not logged:\n%s", s.logs())
	}
	if code, body := health(t, s); code != http.StatusOK {
		t.Errorf("healthz after space returned: %d %s", code, body)
	}
	if testing.Verbose() {
		t.Log(s.logs())
	}
}

// checkFullDiskError: 507, JSON with the code insufficient_storage, and no
// server path in it.
func checkFullDiskError(t *testing.T, what string, code int, body, disk string) {
	t.Helper()
	if code != http.StatusInsufficientStorage || !strings.Contains(body, `"code":"insufficient_storage"`) {
		t.Errorf("%s on a full disk: %d %s, want 507 insufficient_storage", what, code, body)
	}
	if strings.Contains(body, disk) || strings.Contains(body, "/") {
		t.Errorf("%s on a full disk: the answer names a path: %s", what, body)
	}
}

func health(t *testing.T, s *serverProcess) (int, string) {
	return request(t, s, "GET", "/healthz", "", nil)
}

// request makes an API call and returns the status and the body, whatever
// the status.
func request(t *testing.T, s *serverProcess, method, path, contentType string, body io.Reader) (int, string) {
	t.Helper()
	code, b := s.do(t, method, path, contentType, body)
	return code, string(b)
}
