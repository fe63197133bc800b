package web

import (
	"fmt"
	"runtime"
	"strings"
)

// windowsNames: on Windows, uploaded file names and archive entries are
// checked by windowsName (elsewhere any name safeName and entryPath allow is
// stored as it is).
var windowsNames = runtime.GOOS == "windows"

// windowsName says why one element of a path (a file or directory name)
// cannot be a file name on Windows, or returns nil: characters Windows
// forbids (<>:"/\|?* and control characters), a trailing dot or space
// (Windows drops them, so "a." and "a" are one file), and the reserved device
// names (CON, PRN, AUX, NUL, COM0-9, LPT0-9, with or without an extension).
func windowsName(elem string) error {
	for _, r := range elem {
		if r < 32 || strings.ContainsRune(`<>:"/\|?*`, r) {
			return fmt.Errorf("%q has %q, which Windows does not allow in a file name", elem, r)
		}
	}
	if strings.HasSuffix(elem, ".") || strings.HasSuffix(elem, " ") {
		return fmt.Errorf("%q ends with a dot or a space, which Windows drops from file names", elem)
	}
	stem, _, _ := strings.Cut(elem, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch {
	case stem == "CON", stem == "PRN", stem == "AUX", stem == "NUL",
		len([]rune(stem)) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) &&
			strings.ContainsRune("0123456789¹²³", []rune(stem)[3]):
		return fmt.Errorf("%q is a device name on Windows (%s), not a file name", elem, stem)
	}
	return nil
}

// windowsPath checks every element of a slash-separated relative path.
func windowsPath(p string) error {
	for _, elem := range strings.Split(p, "/") {
		if err := windowsName(elem); err != nil {
			return err
		}
	}
	return nil
}
