package web

import "golang.org/x/sys/windows"

// freeBytes is the space the server's user may still use on dir's disk; ok is
// false if it cannot be read (or dir is "").
func freeBytes(dir string) (free uint64, ok bool) {
	if dir == "" {
		return 0, false
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil || windows.GetDiskFreeSpaceEx(p, &free, nil, nil) != nil {
		return 0, false
	}
	return free, true
}
