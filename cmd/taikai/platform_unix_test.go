//go:build unix

package main

import "syscall"

// fileOwner is the uid that owns path.
func fileOwner(path string) (int, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return int(st.Uid), nil
}
