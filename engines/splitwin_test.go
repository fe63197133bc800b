package engines

import (
	"slices"
	"testing"
)

// Windows commands: backslashes are paths, spaces need quotes, and the
// placeholders expand inside them.
func TestSplitCommandWindowsPaths(t *testing.T) {
	vars := map[string]string{"host": "127.0.0.1", "port": "46001"}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`C:\Engines\edax.exe -n 1`, []string{`C:\Engines\edax.exe`, "-n", "1"}},
		{`"C:\Program Files\My Engine\engine.exe" {host} {port}`, []string{`C:\Program Files\My Engine\engine.exe`, "127.0.0.1", "46001"}},
		{`'C:\My Engines\e.exe' --addr={host}:{port}`, []string{`C:\My Engines\e.exe`, "--addr=127.0.0.1:46001"}},
		{`py.exe "D:\students\ana b\client.py" --name "say \"hi\""`, []string{"py.exe", `D:\students\ana b\client.py`, "--name", `say "hi"`}},
		{`\\server\share\engine.exe`, []string{`\\server\share\engine.exe`}},
	} {
		argv, err := splitCommand(c.in, true)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := Expand(argv, vars); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.in, got, c.want)
		}
	}
	// Elsewhere a backslash still escapes, as in a POSIX shell.
	if argv, _ := splitCommand(`a\ b "c\\d"`, false); !slices.Equal(argv, []string{"a b", `c\d`}) {
		t.Errorf("POSIX: got %q", argv)
	}
}
