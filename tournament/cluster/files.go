package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxEngineFiles bounds an engine directory sent to workers (the upload limit
// is 64 MiB, unpacked bigger).
const MaxEngineFiles = 512 << 20

// pack archives dir as a tar of its directories and regular files in name
// order, with no times or owners, so that the same contents always give the
// same bytes; the name is the archive's SHA-256. Other kinds of file
// (symbolic links, devices) are left out.
func pack(dir string) (data []byte, hash string, err error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	total := int64(0)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
			return tw.WriteHeader(hdr)
		case info.Mode().IsRegular():
			total += info.Size()
			if total > MaxEngineFiles {
				return fmt.Errorf("more than %d MiB of files", MaxEngineFiles>>20)
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.CopyN(tw, f, info.Size())
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("engine directory %s: %w", dir, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), hex.EncodeToString(sum[:]), nil
}

// statDir sums up what pack would read without reading it: every entry's
// name, size, mode and modification time, in name order.
func statDir(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%v\x00%d\n", p, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// unpack writes the archive pack made into dir, which must exist.
func unpack(data []byte, dir string) error {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q leaves its directory", hdr.Name)
		}
		dst := filepath.Join(dir, name)
		mode := fs.FileMode(hdr.Mode).Perm() | 0o444 // the sandboxed engine (another user) reads them
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, mode|0o111); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("archive entry %q: unexpected kind %c", hdr.Name, hdr.Typeflag)
		}
	}
}

// cache keeps the engine directories a worker fetched, by content hash, at
// most max of them: the least recently used one not in use goes first.
type cache struct {
	dir   string
	max   int
	store jetstream.ObjectStore
	log   *slog.Logger

	mu      sync.Mutex
	entries map[string]*cached
}

type cached struct {
	ready chan struct{} // closed once fetched (or failed)
	err   error
	uses  int
	last  time.Time
}

// newCache empties dir (what an earlier run left is not trusted) and keeps
// engine directories in it.
func newCache(dir string, max int, store jetstream.ObjectStore, log *slog.Logger) (*cache, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &cache{dir: dir, max: max, store: store, log: log, entries: map[string]*cached{}}, nil
}

// get returns the directory of the engine files named hash, fetching,
// verifying and unpacking them once; release must be called when the game
// is over.
func (c *cache) get(ctx context.Context, hash string) (string, func(), error) {
	if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", nil, fmt.Errorf("bad engine files name %q", hash)
	}
	dir := filepath.Join(c.dir, hash)
	c.mu.Lock()
	e := c.entries[hash]
	if e == nil {
		e = &cached{ready: make(chan struct{})}
		c.entries[hash] = e
		go c.fetch(hash, dir, e)
	}
	e.uses++
	e.last = time.Now()
	c.mu.Unlock()
	release := func() {
		c.mu.Lock()
		e.uses--
		e.last = time.Now()
		c.mu.Unlock()
		c.evict()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		release()
		return "", nil, ctx.Err()
	}
	if e.err != nil {
		release()
		return "", nil, e.err
	}
	return dir, release, nil
}

// fetch gets one engine's files; a failure is forgotten (the next game tries
// again) once told to those waiting.
func (c *cache) fetch(hash, dir string, e *cached) {
	defer close(e.ready)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	data, err := c.store.GetBytes(ctx, hash)
	if err == nil {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != hash {
			err = fmt.Errorf("engine files %s: the fetched bytes hash to %s", hash, got)
		}
	}
	if err == nil {
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err = os.Mkdir(tmp, 0o755); err == nil {
			if err = unpack(data, tmp); err == nil {
				err = os.Rename(tmp, dir)
			}
		}
		if err != nil {
			os.RemoveAll(tmp)
		}
	}
	if err != nil {
		e.err = fmt.Errorf("engine files %s: %w", hash, err)
		c.mu.Lock()
		delete(c.entries, hash)
		c.mu.Unlock()
		return
	}
	c.log.Info("engine files fetched", "hash", hash[:12], "bytes", len(data), "took", time.Since(t0).Round(time.Millisecond))
}

// evict removes the least recently used unused directories over max.
func (c *cache) evict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.entries) > c.max {
		var oldest string
		for h, e := range c.entries {
			select {
			case <-e.ready:
			default:
				continue
			}
			if e.uses == 0 && (oldest == "" || e.last.Before(c.entries[oldest].last)) {
				oldest = h
			}
		}
		if oldest == "" {
			return // all in use
		}
		delete(c.entries, oldest)
		os.RemoveAll(filepath.Join(c.dir, oldest))
	}
}

// size is the number of engine directories kept.
func (c *cache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
