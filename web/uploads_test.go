package web_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/web"
)

// tgzFiles is a tar.gz of the given empty files.
func tgzFiles(tb testing.TB, names []string) string {
	tb.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // headers alone: small at any level
	tw := tar.NewWriter(gz)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
			tb.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	return buf.String()
}

// inodes counts the files and directories under dir.
func inodes(tb testing.TB, dir string) int {
	tb.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			n++
		}
		return nil
	})
	return n
}

type uploadAnswer struct {
	ID    int64
	Files []string
	Error struct{ Code, Message, Field string }
}

// The deep archive of issue 36 (item 5): 200 files each 500 directories
// deep, a few KB as tar.gz, is refused naming the file part, and leaves no
// directory behind.
func TestUploadDeepArchive(t *testing.T) {
	t.Parallel() // slow (thousands of files, games): beside the others
	s := startSite(t)
	_, token := newMember(t, s, "Hiro")
	hiro := member{s: s, token: token}
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("e%d/", i)+strings.Repeat("d/", 499)+"f")
	}
	deep := tgzFiles(t, names)
	var a uploadAnswer
	meta := map[string]any{"name": "deep", "game": "othello", "protocol": "othello-move", "command": studentCommand}
	code := hiro.upload(t, "POST", "/api/engines", meta, map[string]string{"deep.tar.gz": deep}, &a)
	made := inodes(t, filepath.Join(s.dataDir, "engines"))
	t.Logf("deep.tar.gz (%d bytes, 200 entries at depth 500): %d %s; %d files and directories under data/engines", len(deep), code, a.Error.Message, made)
	if code != http.StatusBadRequest || a.Error.Field != "file" {
		t.Errorf("deep archive: %d %+v, want 400 naming file", code, a.Error)
	}
	if made > 10 {
		t.Errorf("the refused deep archive left %d files and directories", made)
	}
}

// Six parts of 10,000 entries each in one request (issue 36, item 5): the
// entries are bounded per request, not per archive.
func TestUploadManyParts(t *testing.T) {
	t.Parallel() // slow (thousands of files, games): beside the others
	s := startSite(t)
	_, token := newMember(t, s, "Iku")
	iku := member{s: s, token: token}
	files := map[string]string{}
	for p := range 6 {
		var names []string
		for i := range 10000 {
			names = append(names, fmt.Sprintf("p%d/f%d", p, i))
		}
		files[fmt.Sprintf("part%d.tar.gz", p)] = tgzFiles(t, names)
	}
	var a uploadAnswer
	meta := map[string]any{"name": "wide", "game": "othello", "protocol": "othello-move", "command": studentCommand}
	code := iku.upload(t, "POST", "/api/engines", meta, files, &a)
	made := inodes(t, filepath.Join(s.dataDir, "engines"))
	t.Logf("6 parts of 10,000 entries: %d %s; %d files and directories under data/engines", code, a.Error.Message, made)
	if code != http.StatusBadRequest || a.Error.Field != "file" {
		t.Errorf("60,000 entries in one request: %d %+v, want 400 naming file", code, a.Error)
	}
	if made > 10 {
		t.Errorf("the refused upload left %d files and directories", made)
	}
}

// An engine's versions and a participant's engines share quotas of entries
// (old versions' files are kept and counted), and GET /api/engines/{id}
// lists the files stored at upload, not what is on the disk now.
func TestUploadQuotas(t *testing.T) {
	t.Parallel() // slow (thousands of files, games): beside the others
	s := startSite(t, func(srv *web.Server) {
		srv.UploadQuota = web.UploadQuota{EngineEntries: 25, ParticipantEntries: 40}
	})
	_, token := newMember(t, s, "Jun")
	jun := member{s: s, token: token}
	files := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("f%02d.sh", i)] = "#!/bin/sh\n"
		}
		return m
	}
	meta := func(name string) map[string]any {
		return map[string]any{"name": name, "game": "othello", "protocol": "othello-move", "command": []string{"./f00.sh"}}
	}
	var a uploadAnswer
	if code := jun.upload(t, "POST", "/api/engines", meta("a"), files(10), &a); code != http.StatusCreated {
		t.Fatalf("a v1: %d %+v", code, a.Error)
	}
	id := a.ID
	if code := jun.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", id), meta("a"), files(10), &a); code != http.StatusOK {
		t.Fatalf("a v2: %d %+v", code, a.Error)
	}
	a = uploadAnswer{}
	if code := jun.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", id), meta("a"), files(10), &a); code != http.StatusRequestEntityTooLarge || a.Error.Field != "file" {
		t.Errorf("a v3 (30 entries over the engine's 25): %d %+v, want 413 naming file", code, a.Error)
	}
	if code := jun.upload(t, "POST", "/api/engines", meta("b"), files(5), &a); code != http.StatusCreated {
		t.Fatalf("b: %d %+v", code, a.Error)
	}
	a = uploadAnswer{}
	if code := jun.upload(t, "POST", "/api/engines", meta("c"), files(16), &a); code != http.StatusRequestEntityTooLarge || a.Error.Field != "file" {
		t.Errorf("c (41 entries over the participant's 40): %d %+v, want 413 naming file", code, a.Error)
	}
	// The file list is the one stored at upload.
	e, err := s.DB.Engine(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "later.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got uploadAnswer
	s.mustCall(t, "GET", fmt.Sprintf("/api/engines/%d", id), nil, &got)
	if len(got.Files) != 10 || got.Files[0] != "f00.sh" || strings.Contains(strings.Join(got.Files, ","), "later") {
		t.Errorf("files %v, want the 10 uploaded", got.Files)
	}
}
