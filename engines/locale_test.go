package engines_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
)

// japaneseJava is a Java engine that writes Japanese to its log (standard
// error) and its default charset, then waits for its stdin to close.
const japaneseJava = `public class Hello {
    public static void main(String[] args) throws Exception {
        System.err.println("現在の盤面状況 " + System.getProperty("file.encoding"));
        System.err.flush();
        while (System.in.read() >= 0) {}
    }
}
`

// runToLog starts e as a stdio engine, closes its stdin and returns its log.
func runToLog(t *testing.T, e engines.Engine) string {
	t.Helper()
	return runToLogWith(t, launcher(t), e)
}

func runToLogWith(t *testing.T, l *engines.Launcher, e engines.Engine) string {
	t.Helper()
	e.Protocol = "test-stdio"
	path := filepath.Join(t.TempDir(), "out.log")
	p, s, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black", LogPath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	s.Close()
	p.Stop(60 * time.Second) // a JVM's start on a busy machine
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEnginesGetUTF8Locale (issue 37, item 4): a server started with no
// locale (env -i, a service manager) still gives its engines LANG=C.UTF-8,
// so that a Java client's Japanese reaches its log as UTF-8, not "???"; an
// engine's command can set another locale.
func TestEnginesGetUTF8Locale(t *testing.T) {
	t.Setenv("LANG", "")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_CTYPE", "")
	if got := runToLog(t, engines.Engine{Name: "env", Game: "othello", Command: []string{"sh", "-c", `echo "LANG=[$LANG]" >&2`}}); !strings.Contains(got, "LANG=[C.UTF-8]") {
		t.Errorf("the engine's LANG: %q", got)
	}
	if got := runToLog(t, engines.Engine{Name: "env", Game: "othello", Command: []string{"env", "LANG=ja_JP.UTF-8", "sh", "-c", `echo "LANG=[$LANG]" >&2`}}); !strings.Contains(got, "LANG=[ja_JP.UTF-8]") {
		t.Errorf("an engine's own LANG: %q", got)
	}
	if _, err := exec.LookPath("java"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("java is missing, and CI=true")
		}
		t.Skip("no java")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Hello.java"), []byte(japaneseJava), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runToLog(t, engines.Engine{Name: "java", Game: "othello", Dir: dir, Command: []string{"java", "-Xshare:auto", "Hello.java"}})
	if !strings.Contains(got, "現在の盤面状況 UTF-8") {
		t.Errorf("the Java engine's Japanese in its log: %q", got)
	}
}

// TestSandboxedEnginesGetUTF8Locale: the sandbox gives an engine nothing of
// the server's environment; its locale is UTF-8 there too.
func TestSandboxedEnginesGetUTF8Locale(t *testing.T) {
	l, _ := sandboxed(t)
	if got := runToLogWith(t, l, engines.Engine{Name: "env", Game: "othello", Command: []string{"/bin/sh", "-c", `echo "LANG=[$LANG]" >&2`}}); !strings.Contains(got, "LANG=[C.UTF-8]") {
		t.Errorf("the sandboxed engine's LANG: %q", got)
	}
}
