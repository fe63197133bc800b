package web

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The upload unpacker, on any bytes as a zip or a tar.gz: it never panics,
// never writes outside the engine's directory, never writes a link or a
// special file, and keeps within the room it was given.
func FuzzUnpack(f *testing.F) {
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("src/Main.java")
	w.Write([]byte("class Main {}"))
	zw.Close()
	f.Add(z.Bytes(), true)
	var t bytes.Buffer
	gz := gzip.NewWriter(&t)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "run.sh", Mode: 0o755, Size: 4, Typeflag: tar.TypeReg})
	tw.Write([]byte("echo"))
	tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Typeflag: tar.TypeReg})
	tw.WriteHeader(&tar.Header{Name: "link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	tw.Close()
	gz.Close()
	f.Add(t.Bytes(), false)
	f.Add([]byte("PK\x03\x04 not really"), true)
	f.Fuzz(func(t *testing.T, data []byte, isZip bool) {
		root := t.TempDir()
		dir := filepath.Join(root, "engine")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		name := "up.tar.gz"
		if isZip {
			name = "up.zip"
		}
		const limit = 1 << 20
		u := newUnpacking(dir, DefaultUploadQuota.Depth, DefaultUploadQuota.RequestEntries, limit)
		_ = u.unpack(bytes.NewReader(data), name)
		var total int64
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
				t.Errorf("%s written outside the engine's directory", p)
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() && !info.IsDir() {
				t.Errorf("%s is %v, not a plain file", p, info.Mode())
			}
			if info.Mode().IsRegular() {
				total += info.Size()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if total > limit {
			t.Errorf("%d bytes unpacked, over the room of %d", total, limit)
		}
	})
}
