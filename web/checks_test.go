package web_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/web"
)

// maxOverlap is the most "start" lines not yet followed by their "end" in a
// log of both.
func maxOverlap(log string) int {
	n, most := 0, 0
	for _, l := range strings.Fields(log) {
		switch l {
		case "start":
			n++
			most = max(most, n)
		case "end":
			n--
		}
	}
	return most
}

// Twelve concurrent checks by one student (issue 36, item 8): at most one
// of their checks plays at a time, whether a submission or POST
// /api/engines/{id}/check started it. One POST check per student is queued
// (its answer waits for its turn); the others while it is under way are
// refused with 429 and Retry-After. (The submissions' checks end before the
// POSTs: a check replaced midway is killed before its engine logs "end".)
func TestChecksOnePerParticipant(t *testing.T) {
	t.Parallel() // slow (thousands of files, games): beside the others
	// Twelve engines: more than a participant may have by default.
	s := startSite(t, func(w *web.Server) { w.ParticipantLimits.Engines = 12 })
	_, token := newMember(t, s, "Gen")
	gen := member{s: s, token: token}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "runs.log")
	// An engine that writes "start" and "end" around its run, and waits
	// 100 ms before it connects, so that checks run at once overlap (the
	// twelve would start within milliseconds of each other; a second each
	// made the test 13 s of waiting, 300 ms each 4 s).
	script := fmt.Sprintf("#!/bin/sh\necho start >> %q\nsleep 0.1\n%q engine othello-random --protocol othello-move -H \"$1\" -p \"$2\"\necho end >> %q\n", log, self, log)
	var ids []int64
	for i := range 12 {
		var e struct{ ID int64 }
		meta := map[string]any{"name": fmt.Sprintf("gen-%d", i), "game": "othello", "protocol": "othello-move", "command": studentCommand}
		if code := gen.upload(t, "POST", "/api/engines", meta, map[string]string{"run.sh": script}, &e); code != http.StatusCreated {
			t.Fatalf("upload %d: %d", i, code)
		}
		ids = append(ids, e.ID)
	}
	// The submissions' own checks, queued.
	for _, id := range ids {
		waitCheck(t, gen, id, 1)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if overlap := maxOverlap(string(b)); overlap != 1 {
		t.Errorf("%d of one student's submission checks ran at once, want 1", overlap)
	} else {
		t.Logf("the 12 submissions' checks: at most %d ran at once", overlap)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/engines/%d/check", s.URL, id), nil)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := client.Do(req)
			code := 0
			if err == nil {
				code = res.StatusCode
				if code == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
					code = -1 // a 429 without Retry-After
				}
				res.Body.Close()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	b, err = os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	overlap := maxOverlap(string(b))
	t.Logf("12 concurrent POST checks: answers %v; at most %d of the student's checks ran at once (%d runs)", codes, overlap, strings.Count(string(b), "start"))
	if overlap > 1 {
		t.Errorf("%d of one student's checks ran at once, want at most 1", overlap)
	}
	if codes[http.StatusOK] < 1 || codes[http.StatusOK]+codes[http.StatusTooManyRequests]+codes[http.StatusConflict] != 12 {
		t.Errorf("answers %v: want at least one 200, the others 429 (with Retry-After) or 409 (replaced)", codes)
	}
}
