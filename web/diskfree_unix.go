//go:build unix

package web

import "golang.org/x/sys/unix"

// freeBytes is the space an unprivileged user may still use on dir's disk;
// ok is false if it cannot be read (or dir is "").
func freeBytes(dir string) (free uint64, ok bool) {
	var st unix.Statfs_t
	if dir == "" || unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
