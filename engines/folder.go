package engines

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"
)

// DefaultFolderEntries is the most files and directories a persistent
// folder may hold (Launcher.FolderEntries): directories and empty files
// take no bytes of FolderLimit, but they take disk.
const DefaultFolderEntries = 4096

// FolderCheckEvery is how often a running engine's persistent folder is
// measured: an engine that fills it is stopped within about this long of
// crossing its bound.
const FolderCheckEvery = 50 * time.Millisecond

// folderUsage measures a persistent folder: the bytes of its regular files
// and its entries (files, directories, links, anything), walking no further
// than maxEntries+1 entries, enough to tell it is over.
func folderUsage(dir string, maxEntries int) (bytes int64, entries int) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		entries++
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		if entries > maxEntries {
			return filepath.SkipAll
		}
		return nil
	})
	return bytes, entries
}

func (l *Launcher) folderLimits() (int64, int) {
	limit, entries := l.FolderLimit, l.FolderEntries
	if limit <= 0 {
		limit = DefaultFolderLimit
	}
	if entries <= 0 {
		entries = DefaultFolderEntries
	}
	return limit, entries
}

// watchFolder measures the persistent folder of a started engine every
// FolderCheckEvery while it runs and stops the engine once the folder is over
// its bytes or its entries: a brain that fills its folder ends there, and
// the next start finds the folder over and empties it (folderFor), so it
// does not grow from game to game.
func (l *Launcher) watchFolder(p *Process, la Launch) {
	if p == nil || p.Folder() == "" || l.FoldersDir == "" {
		return
	}
	dir := filepath.Join(l.FoldersDir, strconv.FormatInt(la.Engine.ID, 10))
	limit, maxEntries := l.folderLimits()
	go func() {
		t := time.NewTicker(FolderCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
			}
			bytes, entries := folderUsage(dir, maxEntries)
			if bytes <= limit && entries <= maxEntries {
				continue
			}
			p.folderOver.Store(true)
			fmt.Fprintf(p.out, "[taikai] the engine's folder went over its bound (%d bytes of %d, %d entries of %d, counted to the first over): engine stopped\n",
				bytes, limit, min(entries, maxEntries+1), maxEntries)
			l.logger().Warn("engine folder over its bound: engine stopped", "engine", la.Engine.Name, "game", la.GameID, "bytes", bytes, "entries", entries)
			p.Stop(0)
			return
		}
	}()
}

// OverFolder reports whether the engine was stopped for filling its
// persistent folder over its bound.
func (p *Process) OverFolder() bool { return p.folderOver.Load() }
