package web

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
)

func TestWindowsName(t *testing.T) {
	for _, ok := range []string{"engine.exe", "My Engine.bat", "console.txt", "CONIN", "COM10", "LPT", "nul_", "a.b.c", "データ.txt", ".hidden"} {
		if err := windowsName(ok); err != nil {
			t.Errorf("windowsName(%q) = %v, want nil", ok, err)
		}
	}
	for name, want := range map[string]string{
		"CON": "device name", "con.txt": "device name", "Nul": "device name", "aux.tar.gz": "device name",
		"COM1": "device name", "lpt9.log": "device name", "COM¹": "device name", "prn .txt": "device name",
		"a:b": `':'`, "what?": `'?'`, `a"b`: `'"'`, "a|b": `'|'`, "a*": `'*'`, "a<b>": `'<'`, "tab\tx": `'\t'`,
		"trailing.": "ends with a dot or a space", "trailing ": "ends with a dot or a space",
	} {
		err := windowsName(name)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), strconv.Quote(name)) {
			t.Errorf("windowsName(%q) = %v, want an error naming it and saying %s", name, err, want)
		}
	}
}

// On Windows an upload's file name and every archive entry's path are
// checked, with an error on the file field that names the entry.
func TestUploadWindowsNames(t *testing.T) {
	was := windowsNames
	windowsNames = true
	t.Cleanup(func() { windowsNames = was })
	u := newUnpacking(t.TempDir(), 32, 100, 1<<20)
	for _, name := range []string{"engine.exe", `C:\Users\My Name\engine v2.exe`} {
		if _, err := safeName(name); err != nil {
			t.Errorf("safeName(%q) = %v", name, err)
		}
	}
	if _, err := u.entryPath("e.zip", "src/My Engine/main.py"); err != nil {
		t.Errorf("a path with spaces: %v", err)
	}
	for _, c := range []struct{ entry, want string }{
		{"src/aux.c", `file: e.zip: entry "src/aux.c": "aux.c" is a device name on Windows (AUX)`},
		{"NUL/x", `entry "NUL/x": "NUL" is a device name`},
		{"a:b/x", `entry "a:b/x": "a:b" has ':'`},
		{"dir./x", `"dir." ends with a dot or a space`},
	} {
		_, err := u.entryPath("e.zip", c.entry)
		var ge *games.Error
		if !errors.As(err, &ge) || ge.Field != "file" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("entryPath(%q) = %v, want a file error with %s", c.entry, err, c.want)
		}
	}
	if _, err := safeName("COM3.exe"); err == nil || !strings.Contains(err.Error(), `file: "COM3.exe" is a device name on Windows (COM3)`) {
		t.Errorf("safeName(COM3.exe) = %v", err)
	}
}
